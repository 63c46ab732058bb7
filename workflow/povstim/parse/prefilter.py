"""The cheap surface prefilter: which sentences could a DPE rule flag at all?

Each phenomenon of ``povstim.filter.rules`` has here a *necessary* condition
that needs no parse, tested on the tokens of :mod:`povstim.parse.tokenize`
(the very tokens the spaCy and stanza backends parse). The rules test the
same closed word lists on the same tokens, so a sentence that fails every
enabled phenomenon's surface test cannot be flagged in either mode and is kept
without parsing. ``tests/test_filter_synth.py`` checks this on the gold
corpus, and every gold pipeline run re-checks it (``summary.json:
prefilter.n_misses``).

This module lives in the parse stage because it decides what gets parsed:
editing it reruns the parse (and everything after), editing the rules does not.
"""

from __future__ import annotations

from typing import Callable

from .tokenize import tokenize, words_only

DEFAULT_RULES = ("question_formation", "binding")

# App. C: "a wh-word". Interrogative and relative uses look alike on the surface.
WH_WORDS = frozenset(
    "who whom whose what which where when why how whoever whomever whatever whichever wherever whenever".split()
)

# App. C: "an auxiliary verb among the first two tokens". Every form an English
# auxiliary takes after our tokenizer (clitics split, `n't` split off), plus the
# unsplit negated forms in case a gold CoNLL-U keeps them whole.
AUX_FORMS = frozenset(
    """
    be am is are was were been being 's 're 'm ai
    have has had having 've 'd
    do does did
    will would 'll shall should can could may might must ca wo sha ought
    isn't aren't wasn't weren't ain't haven't hasn't hadn't don't doesn't didn't
    won't wouldn't shan't shouldn't can't couldn't mightn't mustn't needn't
    """.split()
)

REFLEXIVES = frozenset(
    "myself yourself himself herself itself oneself ourselves yourselves themselves themself thyself".split()
)

_CLOSERS = "\"'”’)]}» \t"

SurfaceFn = Callable[[list[str], str], bool]
SURFACE: dict[str, SurfaceFn] = {}


def surface(phenomenon: str):
    """Register the necessary surface condition of ``phenomenon``'s rules."""

    def deco(fn: SurfaceFn) -> SurfaceFn:
        SURFACE[phenomenon] = fn
        return fn

    return deco


def ends_with_question_mark(text: str) -> bool:
    return text.rstrip(_CLOSERS).endswith("?")


def norm(word: str) -> str:
    return word.lower().replace("’", "'")


def wanna_site(forms: list[str]) -> int | None:
    """Index of *wanna* or of *want(s|ed|ing)* followed by *to*, else None."""
    for i, w in enumerate(forms):
        w = w.lower()
        if w == "wanna" or (w in ("want", "wants", "wanted", "wanting") and i + 1 < len(forms)
                            and forms[i + 1].lower() == "to"):
            return i
    return None


@surface("question_formation")
def qf_surface(words: list[str], text: str) -> bool:
    """Interrogative on the surface, and three words (the nsubj, the acl:relcl and the root differ)."""
    lw = [norm(w) for w in words_only(words)]
    if len(lw) < 3:
        return False
    return ends_with_question_mark(text) or any(w in WH_WORDS for w in lw) or any(w in AUX_FORMS for w in lw[:2])


@surface("binding")
def binding_surface(words: list[str], text: str) -> bool:
    """A word ending in self/selves with at least two tokens before it."""
    return any(i >= 2 and norm(w).endswith(("self", "selves")) for i, w in enumerate(words))


@surface("wanna")
def wanna_surface(words: list[str], text: str) -> bool:
    return wanna_site(words) is not None and any(norm(w) in WH_WORDS for w in words)


def check_rules(rules) -> tuple[str, ...]:
    from ..io import PovstimError

    rules = tuple(rules)
    unknown = [r for r in rules if r not in SURFACE]
    if unknown:
        raise PovstimError(
            f"filter.rules: unknown rule(s) {', '.join(map(repr, unknown))} (available: {', '.join(sorted(SURFACE))})"
        )
    return rules


def needs_parse(text: str, rules=DEFAULT_RULES) -> bool:
    """False only when no enabled phenomenon's rule can fire on ``text``, in either mode."""
    words, _ = tokenize(text)
    return any(SURFACE[r](words, text) for r in rules)
