"""Core clauses of the four MSGS linguistic features (MSGS §3, Table 1, App. A).

A template draws its words once and returns the core clause for feature value
0 and value 1, which differ *only* in the feature: the same words (so no
keyword gives the label away), the same number of words (so length never does)
and the same determiner slots in the same places (so every surface feature can
be laid over either value). Templates are split into an in-domain set (the
training data) and an out-of-domain set (the test data), and so are the
crucial words (MSGS §3 "Data Generation").

Besides the four features, ``neutral`` templates are the cores of the surface
features' control tasks, where no linguistic feature varies.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable

from . import lexicon as W
from .sentence import NP, Be, Clause, words

Draw = Callable[[random.Random], tuple[Clause, Clause]]


@dataclass(frozen=True)
class Template:
    feature: str
    name: str
    domain: str  # in | out
    draw: Draw  # rng -> (core for value 0, core for value 1)

    @property
    def key(self) -> str:
        return f"{self.feature}/{self.name}"


def _np(rng, nouns, number: str | None = None, adj: str | None = None) -> NP:
    """An NP slot; number None = free (follows its determiner, "the" keeps a random one)."""
    noun = rng.choice(nouns)
    if number is None:
        return NP(noun, rng.choice(("Sing", "Plur")), free=True, adj=adj)
    return NP(noun, number, adj=adj)


def _name(rng):
    return rng.choice(W.NAMES)


# --- morphology: irregular past (1) vs 3rd person plural present = bare form (0) -----
def _morph(kind: str, domain: str) -> Draw:
    def draw(rng):
        subj = _np(rng, W.ANIMATE, "Plur")  # plural: the bare form is then a finite present
        if kind == "intrans":
            v = rng.choice(W.IRREGULAR_INTRANS[domain])
            rest: tuple = ()
        elif kind == "intrans_pp":
            v = rng.choice(W.IRREGULAR_INTRANS[domain])
            rest = ("in", _np(rng, W.PLACES))
        elif kind == "trans_animate":
            v = rng.choice(W.IRREGULAR_TRANS_ANIMATE[domain])
            rest = (_np(rng, W.ANIMATE),)
        else:
            v = rng.choice(W.IRREGULAR_TRANS_THING[domain])
            rest = (_np(rng, W.THINGS),)
        return (subj, v.base) + rest, (subj, v.past) + rest

    return draw


# --- syntactic category: the sentence has an adjective (1) or not (0) ------------------
def _category(kind: str, domain: str) -> Draw:
    adjs = W.ADJECTIVES[domain]

    def draw(rng):
        adj = rng.choice(adjs)
        name = _name(rng)
        if kind == "np_was":  # the teacher was tall / the teacher was Sue
            subj = _np(rng, W.HUMAN, "Sing")
            return (subj, "was", name.form), (subj, "was", adj)
        if kind == "np_was_np":  # the teacher was a tall girl / the teacher was near a girl
            subj, obj = _np(rng, W.HUMAN, "Sing"), rng.choice(W.HUMAN)
            return (subj, "was", "near", NP(obj, "Sing")), (subj, "was", NP(obj, "Sing", adj=adj))
        if kind == "name_was_np":  # Sue was the tall girl / Sue was near the girl
            obj = rng.choice(W.HUMAN)
            return (name.form, "was", "near", NP(obj, "Sing")), (name.form, "was", NP(obj, "Sing", adj=adj))
        if kind == "adj_np_was_name":  # the tall girl was Sue / the girl was with Sue
            noun = rng.choice(W.HUMAN)
            return ((NP(noun, "Sing"), "was", "with", name.form), (NP(noun, "Sing", adj=adj), "was", name.form))
        if kind == "name_was_title":  # Tom was king / Tom was tall (single-word nominal predicate)
            return (name.form, "was", rng.choice(W.TITLES[name.gender])), (name.form, "was", adj)
        # np_pp_was: the girl in the park was Sue / the girl in the park was tall
        subj, place = _np(rng, W.HUMAN, "Sing"), _np(rng, W.PLACES)
        return (subj, "in", place, "was", name.form), (subj, "in", place, "was", adj)

    return draw


# --- syntactic construction: control (1) vs raising (0) -------------------------------
def _control(kind: str, domain: str) -> Draw:
    def draw(rng):
        ctrl = rng.choice(W.CONTROL[kind.removesuffix("_name")][domain])
        rais = rng.choice(W.RAISING[kind.removesuffix("_name")][domain])
        inf = rng.choice(W.INFINITIVES).base
        subj = _np(rng, W.HUMAN)
        if kind == "subject_verb":  # the boy tried/seemed to sleep
            return (subj, rais, "to", inf), (subj, ctrl, "to", inf)
        if kind == "object_verb":  # the boy persuaded/expected the girl to sleep
            obj = _np(rng, W.HUMAN)
            return (subj, rais, obj, "to", inf), (subj, ctrl, obj, "to", inf)
        if kind == "adjective":  # the boy was eager/likely to sleep
            return (subj, Be(0), rais, "to", inf), (subj, Be(0), ctrl, "to", inf)
        name = _name(rng).form  # adjective_name: Sue was eager/likely to sleep
        return (name, "was", rais, "to", inf), (name, "was", ctrl, "to", inf)

    return draw


# --- syntactic position: the main verb is in the -ing form (1) or not (0) --------------
def _position(kind: str) -> Draw:
    def draw(rng):
        if kind == "subject_rc":  # the cat who chased a dog was sleeping / ... who was chasing a dog slept
            subj, obj = _np(rng, W.ANIMATE), _np(rng, W.ANIMATE)
            v1, v2 = rng.choice(W.ACTION_TRANS), rng.choice(W.ACTION_INTRANS)
            return ((subj, "who", Be(0), v1.ger, obj, v2.past),
                    (subj, "who", v1.past, obj, Be(0), v2.ger))
        if kind == "verb_complement":  # the boy was saying that a girl helped a dog / said ... was helping
            s1, s2, obj = _np(rng, W.HUMAN), _np(rng, W.ANIMATE), _np(rng, W.ANIMATE)
            say, v = rng.choice(W.SAY_VERBS), rng.choice(W.ACTION_TRANS)
            return ((s1, say.past, "that", s2, Be(3), v.ger, obj),
                    (s1, Be(0), say.ger, "that", s2, v.past, obj))
        if kind == "noun_complement":  # the story that a boy helped a dog was worrying the girl
            noun, s2, obj, exp = _np(rng, W.CONTENT_NOUNS), _np(rng, W.ANIMATE), _np(rng, W.ANIMATE), _np(rng, W.HUMAN)
            v, psych = rng.choice(W.ACTION_TRANS), rng.choice(W.PSYCH_VERBS)
            return ((noun, "that", s2, Be(2), v.ger, obj, psych.past, exp),
                    (noun, "that", s2, v.past, obj, Be(0), psych.ger, exp))
        # object_rc: the boy was helping a girl who chased the dog / helped a girl who was chasing the dog
        subj, obj, obj2 = _np(rng, W.HUMAN), _np(rng, W.HUMAN), _np(rng, W.ANIMATE)
        v1, v2 = rng.choice(W.ACTION_TRANS), rng.choice(W.ACTION_TRANS)
        return ((subj, v1.past, obj, "who", Be(2), v2.ger, obj2),
                (subj, Be(0), v1.ger, obj, "who", v2.past, obj2))

    return draw


# --- neutral cores (surface control tasks) ----------------------------------------------
def _neutral(kind: str) -> Draw:
    def draw(rng):
        if kind == "transitive":  # the cat chased a dog
            core = (_np(rng, W.ANIMATE), rng.choice(W.ACTION_TRANS).past, _np(rng, W.ANIMATE))
        elif kind == "progressive_pp":  # the cats were playing in the park
            core = (_np(rng, W.ANIMATE), Be(0), rng.choice(W.ACTION_INTRANS).ger, "in", _np(rng, W.PLACES))
        elif kind == "subject_rc":  # the cat who chased a dog slept
            core = (_np(rng, W.ANIMATE), "who", rng.choice(W.ACTION_TRANS).past, _np(rng, W.ANIMATE),
                    rng.choice(W.ACTION_INTRANS).past)
        else:  # transitive_pp: the cat chased a dog near the house
            core = (_np(rng, W.ANIMATE), rng.choice(W.ACTION_TRANS).past, _np(rng, W.ANIMATE), "near",
                    _np(rng, W.PLACES))
        return core, core

    return draw


def _templates() -> dict[str, tuple[Template, ...]]:
    out: dict[str, list[Template]] = {}

    def add(feature, name, domain, draw):
        out.setdefault(feature, []).append(Template(feature, name, domain, draw))

    for dom in ("in", "out"):
        for kind in ("intrans", "intrans_pp", "trans_animate", "trans_thing"):
            add("irregular_form", kind, dom, _morph(kind, dom))
    for kind in ("np_was", "np_was_np", "name_was_np", "adj_np_was_name"):
        add("syntactic_category", kind, "in", _category(kind, "in"))
    for kind in ("name_was_title", "np_pp_was"):
        add("syntactic_category", kind, "out", _category(kind, "out"))
    for dom in ("in", "out"):
        for kind in ("subject_verb", "object_verb", "adjective", "adjective_name"):
            add("control_raising", kind, dom, _control(kind, dom))
    for kind in ("subject_rc", "verb_complement"):
        add("main_verb", kind, "in", _position(kind))
    for kind in ("noun_complement", "object_rc"):
        add("main_verb", kind, "out", _position(kind))
    for kind in ("transitive", "progressive_pp"):
        add("neutral", kind, "in", _neutral(kind))
    for kind in ("subject_rc", "transitive_pp"):
        add("neutral", kind, "out", _neutral(kind))
    return {k: tuple(v) for k, v in out.items()}


TEMPLATES = _templates()


def templates(feature: str, domain: str) -> tuple[Template, ...]:
    return tuple(t for t in TEMPLATES[feature] if t.domain == domain)


def max_words(feature: str) -> int:
    """The longest core of a feature (its templates have a fixed number of words)."""
    rng = random.Random(0)
    return max(words(c) for t in TEMPLATES[feature] for c in t.draw(rng))
