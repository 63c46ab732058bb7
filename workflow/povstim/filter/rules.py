"""The direct-positive-evidence (DPE) rules of POSH App. C, as small named functions.

Each phenomenon (question_formation, binding, wanna, ...) has one rule per
mode and one surface test:

- ``posh`` mode states App. C literally (conservative, over-filters);
- ``strict`` mode targets the evidence itself (a question whose main-clause
  subject carries a relative clause; a reflexive with two or more potential
  animate antecedents);
- the surface test (``povstim.parse.prefilter``) is a *necessary* condition
  of both modes' rules, computed from raw text alone, so sentences that fail
  it never need parsing.

A rule takes a parsed :class:`~povstim.parse.conllu.Sentence` and returns a
:class:`Match` (the tokens that triggered it) or ``None``. The rule's function
name is what ``dpe.tsv`` records in its ``rule`` column. Adding a phenomenon is
one ``@register`` function per mode plus a ``@surface`` test in
``povstim.parse.prefilter``; the config's
``filter.rules`` list switches phenomena on (``wanna`` is off by default).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..io import PovstimError
from ..parse.conllu import Sentence, Token
from ..parse.prefilter import (  # noqa: F401  (needs_parse is re-exported for callers of the rules)
    DEFAULT_RULES,
    SURFACE,
    ends_with_question_mark,
    needs_parse,
    wanna_site,
)
from .lexicon import ANIMATE_NOUNS, ANIMATE_PRONOUNS, AUX_FORMS, REFLEXIVES, WH_WORDS

MODES = ("posh", "strict")


@dataclass(frozen=True)
class Settings:
    """What the rules need from the ``filter:`` config section."""

    mode: str = "posh"
    rules: tuple[str, ...] = DEFAULT_RULES
    animate_nouns: frozenset[str] = ANIMATE_NOUNS
    audit_sample: int = 1000
    seed: int = 0

    @classmethod
    def from_params(cls, params: dict | None, mode: str | None = None) -> "Settings":
        params = dict(params or {})
        mode = mode or params.get("mode", "posh")
        if mode not in MODES:
            raise PovstimError(f"filter.mode: unknown mode {mode!r} (choose from {', '.join(MODES)})")
        rules = tuple(params.get("rules", DEFAULT_RULES))
        unknown = [r for r in rules if r not in RULES]
        if unknown:
            raise PovstimError(
                f"filter.rules: unknown rule(s) {', '.join(map(repr, unknown))} "
                f"(available: {', '.join(sorted(RULES))})"
            )
        if not rules:
            raise PovstimError("filter.rules is empty: name at least one phenomenon to filter")
        extra = {w.lower() for w in params.get("animate_nouns", [])}
        return cls(
            mode=mode,
            rules=rules,
            animate_nouns=ANIMATE_NOUNS | frozenset(extra),
            audit_sample=int(params.get("audit_sample", 1000)),
            seed=int(params.get("seed", 0)),
        )


@dataclass(frozen=True)
class Match:
    phenomenon: str
    rule: str
    tokens: tuple[Token, ...]

    def tokens_str(self) -> str:
        return "|".join(f"{t.id}:{t.form}" for t in self.tokens)


RuleFn = Callable[[Sentence, Settings], "tuple[Token, ...] | None"]


@dataclass
class Rule:
    phenomenon: str
    modes: dict[str, RuleFn] = field(default_factory=dict)

    @property
    def surface(self):
        """The prefilter's necessary surface condition (``povstim.parse.prefilter``)."""
        return SURFACE.get(self.phenomenon)


RULES: dict[str, Rule] = {}


def register(phenomenon: str, *modes: str):
    """Register ``fn`` as the rule for ``phenomenon`` in the given modes."""

    def deco(fn: RuleFn) -> RuleFn:
        rule = RULES.setdefault(phenomenon, Rule(phenomenon))
        for m in modes:
            rule.modes[m] = fn
        return fn

    return deco


# --------------------------------------------------------------------------- helpers

def low(tok: Token) -> str:
    return tok.form.lower().replace("’", "'")


def is_word(tok: Token) -> bool:
    return any(c.isalnum() for c in tok.form)


def word_tokens(sent: Sentence) -> list[Token]:
    return [t for t in sent.tokens if is_word(t)]


def is_aux(tok: Token) -> bool:
    # The parser must call it an auxiliary AND it must be one of the closed
    # forms: the prefilter can then test the form alone and stay a necessary
    # condition of this rule.
    return tok.upos == "AUX" and low(tok) in AUX_FORMS


def base_rel(tok: Token) -> str:
    return tok.deprel.split(":")[0]


def children(sent: Sentence) -> dict[int, list[Token]]:
    out: dict[int, list[Token]] = {}
    for t in sent.tokens:
        out.setdefault(t.head, []).append(t)
    return out


def subtree(tok: Token, kids: dict[int, list[Token]]) -> list[Token]:
    out, stack, seen = [], [tok], set()
    while stack:
        t = stack.pop()
        if t.id in seen:  # a cyclic (malformed) tree must not hang the filter
            continue
        seen.add(t.id)
        out.append(t)
        stack.extend(kids.get(t.id, []))
    return sorted(out, key=lambda t: t.id)


def is_reflexive(tok: Token) -> bool:
    return tok.feat("Reflex") == "Yes" or low(tok) in REFLEXIVES


def is_animate_np(tok: Token, settings: Settings) -> bool:
    """A token that heads (or is) an animate noun phrase: a potential antecedent."""
    form = low(tok)
    if tok.deprel in ("compound", "flat", "fixed") or is_reflexive(tok):
        return False
    animacy = tok.feat("Animacy")  # a parse that annotates animacy (the synthetic gold does) decides
    if animacy is not None and tok.upos in ("NOUN", "PROPN", "PRON"):
        return animacy == "Anim" and tok.feat("PronType") not in ("Rel", "Int")
    if tok.upos == "PRON":
        return form in ANIMATE_PRONOUNS and tok.feat("PronType") not in ("Rel", "Int")
    if tok.upos == "PROPN":
        return True
    if tok.upos == "NOUN":
        lemma = tok.lemma.lower() if tok.lemma not in ("_", "") else form
        return lemma in settings.animate_nouns or form in settings.animate_nouns
    if tok.upos == "DET" and form in ANIMATE_PRONOUNS:  # possessive determiners tagged DET
        return tok.feat("Poss") == "Yes" or form in ("my", "your", "his", "her", "our", "their")
    return False


# --------------------------------------------------------------------------- question formation

def posh_interrogative(sent: Sentence) -> tuple[Token, ...] | None:
    """App. C (ii): final question mark, a wh-word anywhere, or an auxiliary among the first two tokens."""
    words = word_tokens(sent)
    if ends_with_question_mark(sent.text):
        return tuple(t for t in sent.tokens[-1:])
    for t in words:
        if low(t) in WH_WORDS:
            return (t,)
    for t in words[:2]:
        if is_aux(t):
            return (t,)
    return None


@register("question_formation", "posh")
def qf_posh_interrogative_nsubj_before_relcl(sent: Sentence, settings: Settings):
    """App. C: interrogative AND some ``nsubj`` token precedes some ``acl:relcl`` token."""
    if len(word_tokens(sent)) < 3 or posh_interrogative(sent) is None:
        return None
    subj = next((t for t in sent.tokens if base_rel(t) == "nsubj"), None)
    if subj is None:
        return None
    rel = next((t for t in sent.tokens if t.deprel == "acl:relcl" and t.id > subj.id), None)
    return (subj, rel) if rel is not None else None


def strict_question(sent: Sentence) -> bool:
    words = word_tokens(sent)
    if not words:
        return False
    return ends_with_question_mark(sent.text) or is_aux(words[0]) or low(words[0]) in WH_WORDS


def _is_relative(tok: Token) -> bool:
    # acl:relcl covers full and zero-relativizer ("the dog the girl saw") relatives.
    # Participial modifiers (acl: "the dog sitting there") are left out on purpose:
    # they hold no auxiliary, so "Is the dog sitting there sleepy?" cannot tell
    # the linear rule from the structural one, and spaCy tags the progressive of
    # ordinary questions ("Is Daddy driving the truck?") as acl.
    return tok.deprel == "acl:relcl"


def main_predicates(sent: Sentence, kids: dict[int, list[Token]]) -> list[Token]:
    roots = [t for t in sent.tokens if t.head == 0]
    out, stack = [], list(roots)
    while stack:
        t = stack.pop()
        if t in out:
            continue
        out.append(t)
        stack.extend(k for k in kids.get(t.id, []) if k.deprel == "conj" and k.upos in ("VERB", "AUX", "ADJ", "NOUN", "PROPN", "PRON"))
    return out


@register("question_formation", "strict")
def qf_strict_subject_relative_question(sent: Sentence, settings: Settings):
    """A question (final ``?``, auxiliary- or wh-initial) whose main-clause subject holds a relative clause."""
    if len(word_tokens(sent)) < 3 or not strict_question(sent):
        return None
    kids = children(sent)
    for pred in main_predicates(sent, kids):
        deps = kids.get(pred.id, [])
        if any(d.deprel == "expl" for d in deps):
            continue  # "Is there a boy who ...?": the relative follows the auxiliary, no evidence
        for subj in deps:
            if base_rel(subj) != "nsubj":
                continue
            for t in subtree(subj, kids):
                if t is not subj and _is_relative(t):
                    return (subj, t)
    return None


# --------------------------------------------------------------------------- binding

def _self_word(tok: Token) -> bool:
    f = low(tok)
    return f.endswith("self") or f.endswith("selves")


@register("binding", "posh")
def binding_posh_self_after_two_nominals(sent: Sentence, settings: Settings):
    """App. C: a word ending in *self/selves* preceded by at least two noun or pronoun tokens."""
    nominals: list[Token] = []
    for t in sent.tokens:
        if _self_word(t) and len(nominals) >= 2:
            return (t, nominals[-2], nominals[-1])
        if t.upos in ("NOUN", "PROPN", "PRON"):
            nominals.append(t)
    return None


@register("binding", "strict")
def binding_strict_two_animate_antecedents(sent: Sentence, settings: Settings):
    """A reflexive pronoun with two or more potential (animate) antecedents before it."""
    antecedents: list[Token] = []
    for t in sent.tokens:
        if is_reflexive(t) and _self_word(t) and len(antecedents) >= 2:
            return (t, antecedents[-2], antecedents[-1])
        if is_animate_np(t, settings):
            antecedents.append(t)
    return None


# --------------------------------------------------------------------------- wanna (off by default)

@register("wanna", "posh", "strict")
def wanna_wh_question_want_to(sent: Sentence, settings: Settings):
    """A wh-question with *want to* / *wanna*: the contexts that show where contraction is allowed."""
    forms = [t.form for t in sent.tokens]
    i = wanna_site(forms)
    if i is None:
        return None
    wh = next((t for t in sent.tokens if low(t) in WH_WORDS), None)
    return (wh, sent.tokens[i]) if wh is not None else None


# --------------------------------------------------------------------------- entry points

def find_dpe(sent: Sentence, settings: Settings) -> list[Match]:
    """Every enabled rule that fires on ``sent`` in the configured mode, in rule order."""
    matches = []
    for name in settings.rules:
        rule = RULES[name]
        fn = rule.modes.get(settings.mode)
        if fn is None:
            raise PovstimError(f"filter.rules: rule {name!r} has no {settings.mode!r} mode")
        hit = fn(sent, settings)
        if hit:
            matches.append(Match(name, fn.__name__, tuple(t for t in hit if t is not None)))
    return matches
