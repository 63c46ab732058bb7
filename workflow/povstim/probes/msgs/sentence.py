"""A sentence as clauses of words and noun-phrase slots, and its rendering.

The linguistic feature of a task decides the words of the *core* clause; the
surface feature decides everything MSGS's surface features look at: which
determiner each noun phrase gets ("the", "a", ...), how many adjunct clauses
there are and where they go, and the casing. So the core leaves its
determiners open: a noun phrase is an :class:`NP` slot, and ``was``/``were``
is a :class:`Be` that agrees with an NP of its clause once the NP's number is
known (a *free* NP takes the number its determiner needs: "a dog", "these
dogs").
"""

from __future__ import annotations

from dataclasses import dataclass

from ...lexicon import Noun
from .lexicon import PL_DETS, SG_DETS


@dataclass(frozen=True)
class NP:
    """Determiner slot + noun. ``free``: the number follows the determiner
    (``number`` is then only the preference for "the", which fits both)."""

    noun: Noun
    number: str  # Sing | Plur
    free: bool = False
    adj: str | None = None  # a prenominal adjective ("the tall teacher")

    def dets(self) -> tuple[str, ...]:
        if not self.free:
            return SG_DETS if self.number == "Sing" else PL_DETS
        return tuple(dict.fromkeys(SG_DETS + PL_DETS))

    @property
    def vowel_initial(self) -> bool:
        """Its first word after the determiner starts with a vowel letter ("a" is then written "an")."""
        return (self.adj or self.noun.sg)[:1] in "aeiou"

    def resolve(self, det: str) -> str:
        """The number this NP has with determiner ``det``."""
        if det not in self.dets():
            raise ValueError(f"determiner {det!r} does not fit {self}")
        if not self.free or (det in SG_DETS and det in PL_DETS):
            return self.number
        return "Sing" if det in SG_DETS else "Plur"


@dataclass(frozen=True)
class Be:
    """Past tense of *be* agreeing with the NP at index ``ref`` of the same clause."""

    ref: int


Clause = tuple  # tuple[str | NP | Be, ...]

# Words that stay lowercase inside a title-case sentence (articles, coordinating
# conjunctions, short prepositions, infinitival "to"): MSGS Table 1's
# "The Cat Chased a Mouse."
MINOR_WORDS = frozenset("a an the and or but nor to of in on at by for with as".split())


def words(clause: Clause) -> int:
    return sum((3 if it.adj else 2) if isinstance(it, NP) else 1 for it in clause)


def slots(clauses: list[Clause]) -> list[tuple[int, int, NP]]:
    """(clause index, item index, NP) of every determiner slot, in surface order."""
    return [(c, i, it) for c, clause in enumerate(clauses) for i, it in enumerate(clause) if isinstance(it, NP)]


def realize(clauses: list[Clause], dets: dict[tuple[int, int], str], fronted: int = 0,
            title: bool = False) -> str:
    """Render ``clauses`` (already in surface order) to a sentence.

    ``dets`` maps (clause, item) of every NP to its determiner. The first
    ``fronted`` clauses are adjuncts before the core: a comma closes them.
    """
    out: list[str] = []
    for c, clause in enumerate(clauses):
        numbers = {}
        for i, it in enumerate(clause):
            if isinstance(it, NP):
                numbers[i] = it.resolve(dets[(c, i)])
        for i, it in enumerate(clause):
            if isinstance(it, NP):
                form = it.noun.sg if numbers[i] == "Sing" else it.noun.pl
                det = "an" if dets[(c, i)] == "a" and it.vowel_initial else dets[(c, i)]
                out.extend((det, it.adj, form) if it.adj else (det, form))
            elif isinstance(it, Be):
                out.append("was" if numbers[it.ref] == "Sing" else "were")
            else:
                out.append(it)
        if fronted and c == fronted - 1:
            out[-1] += ","
    if title:
        out = [w if (k and w.rstrip(",") in MINOR_WORDS) else w[:1].upper() + w[1:] for k, w in enumerate(out)]
    else:
        out[0] = out[0][:1].upper() + out[0][1:]
    return " ".join(out) + "."
