"""Lexical classes for the POSH-BENCH templates (Table 13), tagged for gender,
animacy and transitivity.

The words come from the project lexicon (``povstim.lexicon``), the same one the
synthetic corpus generator draws from, so benchmark words are words the
embedded corpora contain. This module only regroups its classes under the
template slots and adds the one class the templates need that it lacks:
*bridge* verbs (think, say, ...), a subset of its that-clause verbs that also
take a bare declarative complement ("What did she say he bought?").

POSH samples words from the intersection of the top-K most frequent words of
the corpora (§3.2): ``frequent_words`` computes that intersection, and
``Lexicon.allowed`` makes every slot keep only the forms that survive it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ..io import PovstimError

# Verbs that take a bare (complementiser-less) clause: the good sentence of the
# wh-island "who" templates needs one ("What does the girl think he bought?").
BRIDGE_VERBS = ("believe", "claim", "hope", "say", "think")
# Singular determiners for heads; "that" is left out because before a reduced
# relative it reads as a complementiser ("that grandma the cow saw").
HEAD_DETS = ("a", "the", "this", "every")
OBJECT_DETS = ("the", "a", "this", "that")


# Selectional restrictions of verbs on inanimate objects, so good sentences are
# plausible ("eat the cake", not "eat the car"). Verbs not listed take any
# portable thing; objects not in the lexicon are simply never drawn.
FOOD = {"apple", "banana", "cake", "cookie", "sandwich"}
TEXT = {"book", "letter", "newspaper", "report", "story"}
ABSTRACT = {"plan", "song", "story"}
LARGE = {"car", "door", "house", "truck", "window"}
OBJECTS_OF = {
    "eat": FOOD,
    "read": TEXT,
    "write": TEXT | {"plan", "song"},
    "draw": {"ball", "bike", "car", "house", "picture", "truck", "hat"},
    "build": {"bike", "box", "car", "chair", "computer", "house", "table", "truck"},
    "make": FOOD | {"box", "hat", "picture", "plan", "song", "toy"},
    "open": {"bag", "book", "bottle", "box", "door", "letter", "window", "computer", "phone"},
}
HEAVY_OK = {"buy", "fix", "find", "need", "push", "sell", "want", "have", "break", "take"}


def objects_for(verb: str, objects: list[str]) -> list[str]:
    """The inanimate objects (of ``objects``) that ``verb`` plausibly takes."""
    if verb in OBJECTS_OF:
        return [o for o in objects if o in OBJECTS_OF[verb]]
    banned = ABSTRACT | (set() if verb in HEAVY_OK else LARGE)
    return [o for o in objects if o not in banned]


@dataclass(frozen=True)
class Verb:
    base: str
    s3: str
    past: str
    ger: str


@dataclass
class Lexicon:
    """Slot classes; ``allowed`` (lower-cased forms) restricts them, None allows all."""

    verbs: dict[str, list[Verb]] = field(default_factory=dict)
    nouns: dict[str, list[str]] = field(default_factory=dict)
    names: dict[str, list[str]] = field(default_factory=dict)
    closed: dict[str, list[str]] = field(default_factory=dict)
    allowed: set[str] | None = None

    def ok(self, *forms: str) -> bool:
        return self.allowed is None or all(f.lower() in self.allowed for f in forms)

    def sizes(self) -> dict[str, int]:
        """How many words of each class survive ``allowed`` (verbs: in at least one form)."""
        out = {}
        for cls, vs in self.verbs.items():
            out[f"verb.{cls}"] = sum(any(self.ok(f) for f in (v.base, v.s3, v.past, v.ger)) for v in vs)
        for prefix, group in (("noun", self.nouns), ("name", self.names), ("closed", self.closed)):
            for cls, ws in group.items():
                out[f"{prefix}.{cls}"] = sum(self.ok(w) for w in ws)
        return dict(sorted(out.items()))


def default_lexicon(allowed: set[str] | None = None) -> Lexicon:
    from .. import lexicon as L

    def verbs(entries) -> list[Verb]:
        return sorted({Verb(v.base, v.s3, v.past, v.ger) for v in entries}, key=lambda v: v.base)

    def sg(entries) -> list[str]:
        return sorted({n.sg for n in entries})

    state = L.CLASSES["vb_state"]
    lex = Lexicon(
        verbs={
            "trans_animate": verbs(L.CLASSES["vb_trans_animate"]),
            "refl": verbs(L.CLASSES["vb_refl"]),
            "trans_object": verbs(L.CLASSES["vb_trans"]),
            "intrans": verbs(L.CLASSES["vb_intrans_animate"]),
            "state": verbs(state),
            "bridge": verbs(v for v in state if v.base in BRIDGE_VERBS),
            "percep": verbs(L.CLASSES["vb_percep"]),
            "wanna_trans": verbs(L.CLASSES["vb_wanna_trans"]),
            "wanna_intrans": verbs(L.CLASSES["vb_wanna_intrans"]),
        },
        nouns={
            "human_m": sg(L.CLASSES["nn_m"]),
            "human_f": sg(L.CLASSES["nn_f"]),
            "human_n": sg(L.CLASSES["nn_human_n"]),
            "animal": sg(L.CLASSES["nn_animal"]),
            "object": sg(L.CLASSES["nn_obj"]),
        },
        names={
            "m": sorted(n.form for n in L.CLASSES["names_m"]),
            "f": sorted(n.form for n in L.CLASSES["names_f"]),
        },
        closed={
            "det": [d.form for d in L.CLASSES["det_sg"] if d.form in HEAD_DETS],
            "det_obj": [d.form for d in L.CLASSES["det_sg"] if d.form in OBJECT_DETS],
            "aux_qf": [a.form for a in L.CLASSES["modal"]] + [a.form for a in L.CLASSES["aux_sg"]],
            "aux_do": [a.form for a in L.CLASSES["aux_sg"]],
            "adj_person": [a.form for a in L.CLASSES["adj_person"]],
            "pp": list(L.CLASSES["prep_adjunct"]),
            "pron": [p.nom for p in L.CLASSES["pron"] if p.person == 3 and p.number == "Sing" and p.animate],
            "wh_bad": list(L.CLASSES["wh_nominal"]),
            "wh_good": list(L.CLASSES["wh_adverb"]),
        },
        allowed=allowed,
    )
    for group in (lex.verbs, lex.nouns, lex.names, lex.closed):
        for cls, items in group.items():
            if not items:
                raise PovstimError(f"the project lexicon has no words for POSH-BENCH class '{cls}'")
    return lex


_WORD_RE = re.compile(r"[a-z]+")


def word_counts(path: str | Path) -> Counter:
    counts: Counter = Counter()
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                counts.update(_WORD_RE.findall(line.lower()))
    except OSError as exc:
        raise PovstimError(f"cannot read corpus {path}: {exc.strerror}") from None
    if not counts:
        raise PovstimError(f"corpus {path} holds no words")
    return counts


def top_k(counts: Counter, k: int) -> list[str]:
    """The k most frequent words, ties broken alphabetically (deterministic)."""
    return [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:k]]


def frequent_words(corpora: Iterable[str | Path], k: int) -> set[str] | None:
    """Intersection of the top-k words of every corpus (POSH §3.2); None without corpora."""
    result: set[str] | None = None
    for path in corpora:
        words = set(top_k(word_counts(path), k))
        result = words if result is None else result & words
    return result
