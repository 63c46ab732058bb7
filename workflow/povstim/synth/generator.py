"""Drive the grammar: pick a construction per sentence, place DPE, render.

Direct positive evidence is placed, not sampled: for each phenomenon exactly
``round(rate * sentences)`` sentence positions (drawn with the seed) get a DPE
construction, and no other position can produce one (see constructions.py),
so the gold DPE count of a corpus is known exactly.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping

from ..io import PovstimError, atomic_write
from .constructions import PHENOMENA, REGISTERS, Constructions
from .tree import Tok, attach, render


def dpe_counts(sentences: int, dpe_rate: Mapping[str, float] | None) -> dict[str, int]:
    rates = dict(dpe_rate or {})
    unknown = sorted(set(rates) - set(PHENOMENA))
    if unknown:
        raise PovstimError(f"synth: unknown dpe_rate phenomenon {unknown[0]!r} (known: {', '.join(PHENOMENA)})")
    counts = {}
    for ph in PHENOMENA:
        rate = float(rates.get(ph, 0.0))
        if not 0.0 <= rate <= 1.0:
            raise PovstimError(f"synth: dpe_rate.{ph} must be between 0 and 1, got {rate}")
        counts[ph] = int(round(rate * sentences))
    if sum(counts.values()) > sentences:
        raise PovstimError(f"synth: dpe_rate values add up to more than 1 ({rates})")
    return counts


def generate(register: str, sentences: int, seed: int = 0,
             dpe_rate: Mapping[str, float] | None = None) -> Iterator[tuple[str, str, str]]:
    """Yield (text line, CoNLL-U block, dpe label) for ``sentences`` sentences."""
    for text, block, label, _ in generate_with_constructions(register, sentences, seed, dpe_rate):
        yield text, block, label


def generate_with_constructions(register: str, sentences: int, seed: int = 0,
                                dpe_rate: Mapping[str, float] | None = None) -> Iterator[tuple[str, str, str, str]]:
    """Like ``generate``, plus the construction name of each sentence."""
    if register not in REGISTERS:
        raise PovstimError(f"synth: unknown register {register!r} (known: {', '.join(sorted(REGISTERS))})")
    if sentences < 1:
        raise PovstimError(f"synth: sentences must be at least 1, got {sentences}")
    counts = dpe_counts(sentences, dpe_rate)
    # String seeds are hashed with SHA-512 by random.seed: stable across runs and platforms.
    place_rng = random.Random(f"povstim-synth-dpe:{register}:{seed}")
    slots = place_rng.sample(range(sentences), sum(counts.values()))
    dpe_at: dict[int, str] = {}
    k = 0
    for ph in PHENOMENA:
        for pos in slots[k:k + counts[ph]]:
            dpe_at[pos] = ph
        k += counts[ph]

    g = Constructions(random.Random(f"povstim-synth:{register}:{seed}"), register)
    table = REGISTERS[register]
    names = [n for n, _ in table]
    methods = [getattr(g, f"c_{n}") for n in names]
    weights = [w for _, w in table]
    choose = g.rng.choices
    for i in range(sentences):
        ph = dpe_at.get(i)
        if ph is None:
            j = choose(range(len(names)), weights)[0]
            toks, root, end = methods[j]()
            construction, label = names[j], "none"
        else:
            toks, root, end, kind = getattr(g, f"dpe_{ph}")()
            construction, label = f"dpe_{ph}_{kind}", ph
        toks = _finish(toks, root, end)
        text, block = render(toks, i, {"dpe": label, "register": register, "construction": construction})
        yield text, block, label, construction


def _finish(toks, root, end):
    root.head = None
    root.deprel = "root"
    return toks + [attach(Tok(end, end, "PUNCT"), root, "punct")]


def write_corpus(register: str, sentences: int, seed: int, dpe_rate, out_text, out_conllu) -> dict:
    """Write the text and gold CoNLL-U files atomically; return summary counts."""
    labels: dict[str, int] = {"none": 0, **{ph: 0 for ph in PHENOMENA}}
    constructions: dict[str, int] = {}
    words = questions = 0
    with atomic_write(out_text) as ft, atomic_write(out_conllu) as fc:
        for text, block, label, construction in generate_with_constructions(register, sentences, seed, dpe_rate):
            ft.write(text)
            ft.write("\n")
            fc.write(block)
            labels[label] += 1
            constructions[construction] = constructions.get(construction, 0) + 1
            words += len(text.split())
            questions += text.endswith("?")
    return {"register": register, "seed": seed, "sentences": sentences, "words": words,
            "words_per_sentence": round(words / sentences, 3), "question_share": round(questions / sentences, 4),
            "dpe": labels, "constructions": dict(sorted(constructions.items()))}
