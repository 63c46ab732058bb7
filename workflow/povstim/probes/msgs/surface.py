"""The five MSGS surface features, laid over a core clause (MSGS Table 1, App. A).

Every sentence is a core clause plus at least one adjunct clause ("because a
dog jumped"), whose connective is drawn from the domain's own set, so no
out-of-domain sentence can equal an in-domain one. Adjuncts use only regular
past-tense verbs, and no adjective, -ing form or infinitive, so they never
carry a linguistic feature. A frame decides the determiners of every noun
phrase, the adjuncts and their position, and the casing:

absolute_token_position  1 iff the first word is "the". The sentence starts
                         with the core's subject; exactly one "the" in either
                         value (first, or somewhere later).
length                   1 iff the sentence has more than ``threshold`` words.
                         The core is lengthened with 1-4 adjuncts of 3-6 words
                         (MSGS: "adjoining subordinate clauses of varying
                         length"); in domain they follow the core, out of
                         domain the first one is fronted.
lexical_content_the      1 iff the sentence contains "the" (exactly once); in
                         domain it is in the core, out of domain in the adjunct.
relative_token_position  1 iff "the" precedes "a", 0 iff "a" precedes "the"
                         (each exactly once; never "an"); in domain both are in
                         one clause, out of domain in different clauses.
title_case               1 iff the sentence is in title case; in domain the
                         adjunct follows the core, out of domain it is fronted
                         (MSGS: clause positions vary by domain).

``neutral`` is the frame of the linguistic features' control tasks (random
determiners, one adjunct after the core, sentence case).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from . import lexicon as W
from .sentence import NP, Clause, realize, slots, words

SURFACE = ("absolute_token_position", "length", "lexical_content_the", "relative_token_position", "title_case")
MIN_ADJUNCT, MAX_ADJUNCT = 3, 6  # words of one adjunct clause
MAX_ADJUNCTS = 4
LONG_SPAN = 8  # long sentences have threshold+1 .. threshold+LONG_SPAN words


def adjunct(rng: random.Random, domain: str, size: int) -> Clause:
    """An adjunct clause of ``size`` words (3-6): CONJ NAME V / CONJ NP V / CONJ NAME V NP / CONJ NP V NP."""
    conj = rng.choice(W.CONNECTIVES[domain])

    def np():
        return NP(rng.choice(W.ANIMATE), rng.choice(("Sing", "Plur")), free=True)

    if size == 3:
        return (conj, rng.choice(W.NAMES).form, rng.choice(W.REGULAR_INTRANS).past)
    if size == 4:
        return (conj, np(), rng.choice(W.REGULAR_INTRANS).past)
    if size == 5:
        return (conj, rng.choice(W.NAMES).form, rng.choice(W.REGULAR_TRANS).past, np())
    if size == 6:
        return (conj, np(), rng.choice(W.REGULAR_TRANS).past, np())
    raise ValueError(f"no adjunct of {size} words")


def _fill(clauses, rng, fixed: dict, exclude: tuple[str, ...] = ()) -> dict:
    """Determiners: ``fixed`` ones, the rest drawn at random outside ``exclude``."""
    dets = dict(fixed)
    for c, i, np in slots(clauses):
        if (c, i) not in dets:
            dets[(c, i)] = rng.choice([d for d in np.dets() if d not in exclude])
    return dets


@dataclass(frozen=True)
class Frame:
    name: str

    # Which adjunct the paradigm shares between its four sentences (None: drawn per sentence).
    def shared_adjunct_size(self, rng: random.Random) -> int | None:
        if self.name == "length":
            return None
        if self.name == "relative_token_position":
            return 6  # two free NPs: "the" and "a" can share the adjunct
        return rng.choice((4, 6))

    def requires(self, core: Clause, domain: str) -> bool:
        """Can this frame carry both of its values over ``core`` in ``domain``?"""
        if self.name == "absolute_token_position":
            return isinstance(core[0], NP)
        if self.name == "lexical_content_the":
            return domain == "out" or any(isinstance(it, NP) for it in core)
        if self.name == "relative_token_position":
            probe = adjunct(random.Random(0), domain, 6)
            return all(_relative_pairs([core, probe], s, domain) for s in (0, 1))
        return True

    def build(self, core: Clause, value: int, domain: str, rng: random.Random, shared: Clause | None,
              threshold: int | None = None) -> str:
        name = self.name
        if name == "length":
            return _length(core, value, domain, rng, threshold)
        clauses = [core, shared]
        if name == "absolute_token_position":
            rest = [(c, i) for c, i, _ in slots(clauses)][1:]
            if value == 1:
                fixed = {(0, 0): "the"}
            else:
                first = rng.choice([d for d in core[0].dets() if d != "the"])
                fixed = {(0, 0): first, rng.choice(rest): "the"}
            return realize(clauses, _fill(clauses, rng, fixed, ("the",)))
        if name == "lexical_content_the":
            fixed = {}
            if value == 1:
                where = 0 if domain == "in" else 1
                fixed = {rng.choice([(c, i) for c, i, _ in slots(clauses) if c == where]): "the"}
            return realize(clauses, _fill(clauses, rng, fixed, ("the",)))
        if name == "relative_token_position":
            (the, a) = rng.choice(_relative_pairs(clauses, value, domain))
            return realize(clauses, _fill(clauses, rng, {the: "the", a: "a"}, ("the", "a")))
        if name == "title_case":
            if domain == "out":
                clauses = [shared, core]
            return realize(clauses, _fill(clauses, rng, {}), fronted=int(domain == "out"), title=value == 1)
        if name == "neutral":
            return realize(clauses, _fill(clauses, rng, {}))
        raise ValueError(f"unknown surface frame {name!r}")


def _relative_pairs(clauses, value: int, domain: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(the-slot, a-slot) pairs: "the" first iff value 1; same clause iff in domain; "a" needs a singular slot."""
    sl = slots(clauses)
    pairs = []
    for x in range(len(sl)):
        for y in range(x + 1, len(sl)):
            first, second = sl[x], sl[y]
            if (first[0] == second[0]) != (domain == "in"):
                continue
            the, a = (first, second) if value == 1 else (second, first)
            if "a" in a[2].dets() and not a[2].vowel_initial:  # "an" is not the word "a"
                pairs.append(((the[0], the[1]), (a[0], a[1])))
    return pairs


def _length(core: Clause, value: int, domain: str, rng: random.Random, threshold: int) -> str:
    """Lengthen ``core`` with adjuncts to a word count at most ``threshold`` (0) or above it (1)."""
    c = words(core)
    if value == 1:
        target = rng.randint(threshold + 1, threshold + LONG_SPAN)
    else:
        target = rng.randint(c + MIN_ADJUNCT, threshold)
    rest = target - c
    counts = [k for k in range(1, MAX_ADJUNCTS + 1) if MIN_ADJUNCT * k <= rest <= MAX_ADJUNCT * k]
    k = rng.choice(counts)
    sizes = [MIN_ADJUNCT] * k
    for _ in range(rest - MIN_ADJUNCT * k):  # spread the remaining words over adjuncts with room
        sizes[rng.choice([j for j in range(k) if sizes[j] < MAX_ADJUNCT])] += 1
    adjuncts = [adjunct(rng, domain, s) for s in sizes]
    if domain == "in":
        clauses, fronted = [core] + adjuncts, 0
    else:
        clauses, fronted = [adjuncts[0], core] + adjuncts[1:], 1
    return realize(clauses, _fill(clauses, rng, {}), fronted=fronted)


def length_threshold(core_max_words: int) -> int:
    """The length feature's n (1 iff more than n words): every core plus one adjunct fits under it."""
    return core_max_words + MAX_ADJUNCT


FRAMES = {name: Frame(name) for name in SURFACE + ("neutral",)}
