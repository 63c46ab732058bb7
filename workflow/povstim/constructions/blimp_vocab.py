"""The BLiMP vocabulary FiCT's filters take, read from the BLiMP data at run time.

FiCT (Patil et al. 2024; CLMBRs/corpus-filtering) restricts some filters to the words of the BLiMP paradigms
they target: the passive to BLiMP's passive verbs (``scripts/gen_blimp_passive_verbs_list.py`` there, from
BLiMP's generation vocabulary), det + noun to BLiMP's determiner-agreement nouns, subject-verb agreement to the
nouns BLiMP uses as subjects, existential *there* to BLiMP's quantifiers. FiCT typed those lists in from BLiMP's
generator; here each is read from the released BLiMP items (``{UID}.jsonl``: the fields BLiMP ships with each
pair), so a construction entry names a list (``words: {verbs: {blimp: passive_participles}}``) and the config
names the folder (``filter.blimp_vocabulary``). The words are the ones the items use (BLiMP's generator has
more): what a model is tested on is what the filter removes.

Each list, lowercased and sorted:

``passive_participles``  the participle after the form of *be* in ``sentence_good`` and ``sentence_bad`` of
                         passive_1/passive_2 (both: FiCT keeps the intransitive verbs of the bad items too)
``det_noun_nouns``       the head (last word) of the noun each determiner_noun_agreement_{1,2,irregular_1,2}
                         item tests (``one_prefix_word_good``/``_bad``, ``two_prefix_word``)
``sv_agreement_nouns``   the subject's head (last word of the prefix before the verb) of
                         {regular,irregular}_plural_subject_verb_agreement_{1,2}
``existential_quantifiers``  the quantifier that differs between the good and bad sentences of
                         existential_there_quantifiers_1, and the first word of _2's good sentences
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..io import PovstimError

WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


def _words(text: str) -> list[str]:
    return [w.lower() for w in WORD.findall(text)]


def _diff(a: str, b: str) -> tuple[str, str] | None:
    """The first pair of words where two sentences differ."""
    wa, wb = _words(a), _words(b)
    for x, y in zip(wa, wb):
        if x != y:
            return x, y
    return None


def _items(folder: Path, uid: str, where: str):
    path = folder / f"{uid}.jsonl"
    if not path.is_file():
        raise PovstimError(f"{where}: the BLiMP paradigm file {path} does not exist (filter.blimp_vocabulary names "
                           "the folder of BLiMP's {UID}.jsonl files)")
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield path, n, json.loads(line)
            except json.JSONDecodeError as exc:
                raise PovstimError(f"{path}:{n}: not a JSON object ({exc.msg})") from None


def _field(item: dict, key: str, path: Path, n: int) -> str:
    v = item.get(key)
    if not isinstance(v, str) or not v.strip():
        raise PovstimError(f"{path}:{n}: the BLiMP item has no {key!r} (the vocabulary of FiCT's filter is read from it)")
    return v


BE = frozenset("is are was were be been being isn't aren't wasn't weren't".split())


def _after_be(text: str) -> str | None:
    """The word after the sentence's first form of *be* (and a *not*): a passive item's participle (the first
    word of a multi-word one, as FiCT's list keeps: "talked about" -> talked)."""
    ws = _words(text)
    i = next((k for k, w in enumerate(ws) if w in BE), None)
    if i is None:
        return None
    i += 1
    while i < len(ws) and ws[i] in ("not", "n't"):
        i += 1
    return ws[i] if i < len(ws) else None


def passive_participles(folder: Path, where: str) -> set[str]:
    out: set[str] = set()
    for uid in ("passive_1", "passive_2"):
        for path, n, it in _items(folder, uid, where):
            for key in ("sentence_good", "sentence_bad"):
                w = _after_be(_field(it, key, path, n))
                if w:
                    out.add(w)
    return out


def det_noun_nouns(folder: Path, where: str) -> set[str]:
    out: set[str] = set()
    for uid in ("determiner_noun_agreement_1", "determiner_noun_agreement_irregular_1"):
        for path, n, it in _items(folder, uid, where):
            for key in ("one_prefix_word_good", "one_prefix_word_bad"):
                out.add(_words(_field(it, key, path, n))[-1])
    for uid in ("determiner_noun_agreement_2", "determiner_noun_agreement_irregular_2"):
        for path, n, it in _items(folder, uid, where):
            out.add(_words(_field(it, "two_prefix_word", path, n))[-1])
    return out


def sv_agreement_nouns(folder: Path, where: str) -> set[str]:
    out: set[str] = set()
    for uid in ("regular_plural_subject_verb_agreement_1", "irregular_plural_subject_verb_agreement_1"):
        for path, n, it in _items(folder, uid, where):
            out.add(_words(_field(it, "one_prefix_prefix", path, n))[-1])
    for uid in ("regular_plural_subject_verb_agreement_2", "irregular_plural_subject_verb_agreement_2"):
        for path, n, it in _items(folder, uid, where):
            for key in ("two_prefix_prefix_good", "two_prefix_prefix_bad"):
                out.add(_words(_field(it, key, path, n))[-1])
    return out


def existential_quantifiers(folder: Path, where: str) -> set[str]:
    out: set[str] = set()
    for path, n, it in _items(folder, "existential_there_quantifiers_1", where):
        d = _diff(_field(it, "sentence_good", path, n), _field(it, "sentence_bad", path, n))
        if d:
            out.update(d)
    for path, n, it in _items(folder, "existential_there_quantifiers_2", where):
        out.add(_words(_field(it, "sentence_good", path, n))[0])
    return out


VOCABULARIES = {
    "passive_participles": passive_participles,
    "det_noun_nouns": det_noun_nouns,
    "sv_agreement_nouns": sv_agreement_nouns,
    "existential_quantifiers": existential_quantifiers,
}


def vocabulary(name: str, folder: str | Path | None, where: str) -> list[str]:
    """The words of BLiMP vocabulary ``name`` read from ``folder`` (an error naming ``where``, the key that asks
    for it, when the name is unknown, no folder is configured, or a file is missing)."""
    if name not in VOCABULARIES:
        raise PovstimError(f"{where}: unknown BLiMP vocabulary {name!r}; known: {', '.join(VOCABULARIES)}")
    if folder in (None, ""):
        raise PovstimError(f"{where}: the BLiMP vocabulary {name!r} needs filter.blimp_vocabulary, the folder of the "
                           "BLiMP data (e.g. ../shared/data/blimp/data)")
    folder = Path(folder)
    if not folder.is_dir():
        raise PovstimError(f"{where}: filter.blimp_vocabulary: the BLiMP folder {folder} does not exist")
    words = sorted(VOCABULARIES[name](folder, where))
    if not words:
        raise PovstimError(f"{where}: the BLiMP vocabulary {name!r} read from {folder} is empty")
    return words
