"""Lexical classes for the POSH-BENCH templates (Table 13), tagged for gender,
animacy, transitivity and complement selection, and the word pools the corpora allow.

Two vocabularies (``benchmarks.<suite>.vocabulary``):

* ``lexicon`` -- the project lexicon (``povstim.lexicon``), the one the synthetic
  corpus generator draws from, so benchmark words are words the embedded corpora
  contain. The fallback for synthetic corpora.
* ``corpus`` -- for real corpora: the project lexicon plus the benchmark
  candidates (``benchmarks.candidates``), each dropped when the parses use it
  mostly in another role (part of speech from the parse stage, ``wordstats``) or,
  in the *wanna* intransitive slot, with objects.

In both, POSH samples words from the intersection of the top-K most frequent
words of the corpora (§3.2): ``frequent_from_counts`` computes that intersection and
``Lexicon.allowed`` makes every slot keep only the forms that survive it.
``pool_report`` says, per class, how many words survive and which K would be
needed to have more.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from .. import lexicon as L
from ..io import PovstimError, iter_sentences

# Singular determiners for heads; "that" is left out because before a reduced
# relative it reads as a complementiser ("that grandma the cow saw").
HEAD_DETS = ("a", "the", "this", "every")
OBJECT_DETS = ("the", "a", "this", "that")


# Selectional restrictions of verbs on inanimate objects, so good sentences are
# plausible ("eat the cake", not "eat the car"). Verbs not listed take any
# portable thing; objects not in the vocabulary are simply never drawn. The
# candidate groups (benchmarks.candidates) extend each set; none of them is in
# the project lexicon, so the lexicon vocabulary's restrictions are unchanged.
from . import candidates as _C  # noqa: E402  (data only)

FOOD = {"apple", "banana", "cake", "cookie", "sandwich"} | set(_C.FOOD)
TEXT = {"book", "letter", "newspaper", "report", "story"} | set(_C.TEXT)
ABSTRACT = {"plan", "song", "story"}
LARGE = {"car", "door", "house", "truck", "window"} | set(_C.LARGE)
CLOTHES = {"hat", "shoe"} | set(_C.CLOTHES)
CONTAINERS = set(_C.CONTAINERS)
OBJECTS_OF = {
    "eat": FOOD,
    "read": TEXT,
    "write": TEXT | {"plan", "song"},
    "draw": {"ball", "bike", "car", "house", "picture", "truck", "hat"},
    "build": {"bike", "box", "car", "chair", "computer", "house", "table", "truck"},
    "make": FOOD | {"box", "hat", "picture", "plan", "song", "toy"},
    "open": {"bag", "book", "bottle", "box", "door", "letter", "window", "computer", "phone"},
    # candidate verbs (vocabulary: corpus)
    "close": {"bag", "book", "bottle", "box", "door", "letter", "window", "computer", "phone", "jar", "umbrella"},
    "cook": FOOD - {"banana", "cookie", "candy", "cracker", "muffin", "cake", "pie", "orange", "sandwich"},
    "bake": {"cake", "cookie", "bread", "pie", "pizza", "muffin", "potato"},
    "cut": FOOD | {"rope", "card", "ticket", "paper"},
    "wear": CLOTHES,
    "fill": CONTAINERS,
    "pack": CONTAINERS,
    "sign": {"letter", "card", "report", "book", "note", "picture", "photo"},
    "send": {"letter", "card", "gift", "package", "book", "picture", "photo", "note", "report", "magazine"},
    "paint": {"house", "door", "picture", "box", "chair", "table", "car", "bike", "boat", "toy", "doll", "bed",
              "truck", "window"},
    "catch": {"ball", "balloon", "key", "coin", "hat"},
    "kick": {"ball", "box", "door", "bottle", "balloon", "bucket", "chair", "toy"},
}
HEAVY_OK = {"buy", "fix", "find", "need", "push", "sell", "want", "have", "break", "take",
            "keep", "move", "choose", "get", "clean", "wash"}


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


# The verb forms each class's templates use (posh.py), so a verb counts as
# available only when those forms are frequent (pool_report) and attested as verbs.
VERB_FORMS = {
    "trans_animate": ("base", "past", "ger"),
    "refl": ("past",),
    "trans_object": ("base", "past", "ger", "s3"),
    "intrans": ("base",),
    "state": ("past",),
    "wh_embed": ("base",),
    "percep": ("past",),
    "wanna_trans": ("base",),
    "wanna_intrans": ("base",),
}


@dataclass
class Lexicon:
    """Slot classes; ``allowed`` (lower-cased forms) restricts them, None allows all."""

    verbs: dict[str, list[Verb]] = field(default_factory=dict)
    nouns: dict[str, list[str]] = field(default_factory=dict)
    names: dict[str, list[str]] = field(default_factory=dict)
    closed: dict[str, list[str]] = field(default_factory=dict)
    allowed: set[str] | None = None
    vocabulary: str = "lexicon"
    rejected: dict[str, list[str]] = field(default_factory=dict)  # corpus: class -> words the parses rule out

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

    def open_classes(self) -> dict[str, list[tuple[str, tuple[str, ...]]]]:
        """Open class -> [(word, the forms a template needs)], for pool reports."""
        out: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
        for cls, vs in self.verbs.items():
            out[f"verb.{cls}"] = [(v.base, tuple(getattr(v, f) for f in VERB_FORMS[cls])) for v in vs]
        for cls, ws in self.nouns.items():
            out[f"noun.{cls}"] = [(w, (w,)) for w in ws]
        for cls, ws in self.names.items():
            out[f"name.{cls}"] = [(w, (w,)) for w in ws]
        return dict(sorted(out.items()))


@dataclass(frozen=True)
class PosCheck:
    """When the parses rule a candidate out (``benchmarks.<suite>.pos_check``)."""

    min_count: int  # tokens of the word in the parses before they can rule it out
    min_share: float  # ruled out when its slot's part of speech is under this share of its tokens
    max_object_rate: float  # strictly intransitive verbs: ruled out above this share of uses governing an obj


def _entries(classes: Iterable[dict]) -> dict[str, list]:
    merged: dict[str, list] = {}
    for cl in classes:
        for name, entries in cl.items():
            merged.setdefault(name, []).extend(entries)
    return merged


def build_lexicon(vocabulary: str = "lexicon", allowed: set[str] | None = None, stats=None,
                  pos: PosCheck | None = None) -> Lexicon:
    """The benchmark's word classes.

    ``lexicon``: the project lexicon. ``corpus``: the project lexicon plus the
    benchmark candidates; with ``stats`` (``wordstats.WordStats`` of the parses) a
    word is dropped when the parses rule it out (see :func:`confirm`).
    """
    if vocabulary not in ("lexicon", "corpus"):
        raise PovstimError(f"unknown benchmark vocabulary {vocabulary!r}: use lexicon or corpus")
    sources = [dict(L.CLASSES)]
    if vocabulary == "corpus":
        sources.append(_C.CLASSES)
    C = _entries(sources)

    def verbs(*names) -> list[Verb]:
        return sorted({Verb(v.base, v.s3, v.past, v.ger) for n in names for v in C.get(n, ())}, key=lambda v: v.base)

    def sg(name) -> list[str]:
        return sorted({n.sg for n in C[name]})

    lex = Lexicon(
        verbs={
            "trans_animate": verbs("vb_trans_animate"),
            "refl": verbs("vb_refl"),
            "trans_object": verbs("vb_trans"),
            "intrans": verbs("vb_intrans_animate"),
            "state": verbs("vb_state"),
            "wh_embed": verbs("vb_wh_embed"),
            "percep": verbs("vb_percep"),
            "wanna_trans": verbs("vb_wanna_trans"),
            "wanna_intrans": verbs("vb_intrans_strict"),
        },
        nouns={
            "human_m": sg("nn_m"),
            "human_f": sg("nn_f"),
            "human_n": sg("nn_human_n"),
            "animal": sg("nn_animal"),
            "object": sg("nn_obj"),
        },
        names={
            "m": sorted({n.form for n in C["names_m"]}),
            "f": sorted({n.form for n in C["names_f"]}),
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
        vocabulary=vocabulary,
    )
    for group in (lex.verbs, lex.nouns, lex.names, lex.closed):
        for cls, items in group.items():
            if not items:
                raise PovstimError(f"the project lexicon has no words for POSH-BENCH class '{cls}'")
    if stats is not None:
        if pos is None:
            raise PovstimError("checking words against the parses needs the pos_check settings")
        confirm(lex, stats, pos)
    return lex


def default_lexicon(allowed: set[str] | None = None) -> Lexicon:
    """The project lexicon's classes (``vocabulary: lexicon``)."""
    return build_lexicon("lexicon", allowed)


def contradicted(stats, forms, upos: str, pos: PosCheck) -> bool:
    """Whether the parses use the word (all ``forms`` together) mostly in another role than ``upos``.

    A word the parses hardly see (fewer than ``min_count`` tokens) is not ruled
    out: the parse stage's prefilter parses only the sentences a DPE rule could
    flag, so absence there says little; the top-K filter already says it is frequent.
    """
    forms = {f.lower() for f in forms}
    n = sum(stats.count(f) for f in forms)
    if n < pos.min_count:
        return False
    return sum(stats.count(f, upos) for f in forms) < pos.min_share * n


def confirm(lex: Lexicon, stats, pos: PosCheck) -> Lexicon:
    """Drop the words the parses rule out of their slot's role (in place; ``lex.rejected`` says what went).

    A noun the parses use mostly otherwise than as NOUN ("watch"), a name mostly
    otherwise than as PROPN, a verb (all its forms) mostly otherwise than as VERB
    is dropped; a verb of the *wanna* intransitive slot is dropped when it governs
    an object in more than ``max_object_rate`` of its uses (a verb that takes
    objects makes the bad member grammatical: "What does Mary wanna sing?").
    """
    rejected: dict[str, list[str]] = {}
    for cls, vs in lex.verbs.items():
        keep = []
        for v in vs:
            forms = (v.base, v.s3, v.past, v.ger)
            ok = not contradicted(stats, forms, "VERB", pos)
            if ok and cls == "wanna_intrans":
                n, rate = stats.object_rate(forms)
                ok = n < pos.min_count or rate <= pos.max_object_rate
            if ok:
                keep.append(v)
            else:
                rejected.setdefault(f"verb.{cls}", []).append(v.base)
        lex.verbs[cls] = keep
    for group, prefix, upos in ((lex.nouns, "noun", "NOUN"), (lex.names, "name", "PROPN")):
        for cls, ws in group.items():
            group[cls] = [w for w in ws if not contradicted(stats, (w,), upos, pos)]
            gone = sorted(set(ws) - set(group[cls]))
            if gone:
                rejected[f"{prefix}.{cls}"] = gone
    lex.rejected = dict(sorted(rejected.items()))
    return lex


_WORD_RE = re.compile(r"[a-z]+")


def word_counts(path: str | Path) -> Counter:
    counts: Counter = Counter()
    for line in iter_sentences(path):
        counts.update(_WORD_RE.findall(line.lower()))
    if not counts:
        raise PovstimError(f"corpus {path} holds no words")
    return counts


def _by_frequency(counts: Counter) -> list[str]:
    """Words most frequent first, ties broken alphabetically (deterministic)."""
    return [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def top_k(counts: Counter, k: int) -> list[str]:
    """The k most frequent words, ties broken alphabetically (deterministic)."""
    return _by_frequency(counts)[:k]


def frequent_from_counts(counts: list[Counter], k: int) -> set[str] | None:
    """Intersection of the top-k words of every corpus (POSH §3.2); None without corpora."""
    result: set[str] | None = None
    for c in counts:
        words = set(top_k(c, k))
        result = words if result is None else result & words
    return result


def pool_report(lex: Lexicon, corpora: list, top_k_words: int, ns: tuple[int, ...] = (1, 2, 5, 10)) -> dict:
    """Per open class: how many words the vocabulary offers, how many survive top-K, and the K needed for more.

    A word's *rank* is the worst (largest) frequency rank, over corpora and over
    the forms its templates need, so it is in the top-K intersection exactly when
    its rank <= K. ``k_for[n]`` is the smallest K at which n words of the class
    survive (None if the corpora cannot give n), ``k_all`` the K at which every
    word does, ``in_corpora`` how many any K can keep. Words the parses ruled out (``vocabulary: corpus``) count in
    ``rejected_by_parses`` and never survive. Without corpora every word survives.
    ``corpora``: word ``Counter``s or corpus paths (one sentence per line).
    """
    counts = [c if isinstance(c, Counter) else word_counts(c) for c in corpora]
    ranks = [word_ranks(c) for c in counts]
    report = {}
    for cls, entries in lex.open_classes().items():
        rs = []
        for _, forms in entries:
            if not ranks:
                rs.append(0)
                continue
            rs.append(max(r.get(f.lower(), math.inf) for r in ranks for f in forms))
        rs.sort()
        finite = [r for r in rs if r != math.inf]
        row = {
            "candidates": len(rs) + len(lex.rejected.get(cls, [])),
            "rejected_by_parses": len(lex.rejected.get(cls, [])),
            "available": sum(r <= top_k_words for r in rs),
            "k_for": {str(n): (int(finite[n - 1]) if len(finite) >= n else None) for n in ns},
            "k_all": int(finite[-1]) if finite and len(finite) == len(rs) else None,
            "in_corpora": len(finite),  # words of the class every corpus holds (in every form): the most any K keeps
        }
        report[cls] = row
    return report


def word_ranks(counts: Counter) -> dict[str, int]:
    """1-based frequency rank of every word, ties broken alphabetically (as :func:`top_k`)."""
    return {w: i for i, w in enumerate(_by_frequency(counts), 1)}
