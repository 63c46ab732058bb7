"""Wanna contraction: wh-questions with *want to*/*wanna* (off by default).

These show where contraction is allowed ("Who do you wanna see?") and where
it is not (subject extraction).
"""

from __future__ import annotations

from .registry import Context, Phenomenon, register
from .surface import norm, wanna_site
from .tree import low
from .words import WH_WORDS
from ..parse.conllu import Sentence


def surface(words: list[str], text: str) -> bool:
    return wanna_site(words) is not None and any(norm(w) in WH_WORDS for w in words)


def wanna_wh_question_want_to(sent: Sentence, ctx: Context):
    """A wh-question with *want to* / *wanna*: the contexts that show where contraction is allowed."""
    forms = [t.form for t in sent.tokens]
    i = wanna_site(forms)
    if i is None:
        return None
    wh = next((t for t in sent.tokens if low(t) in WH_WORDS), None)
    return (wh, sent.tokens[i]) if wh is not None else None


# One rule serves every mode: every such question is targeted evidence.
register(Phenomenon(
    name="wanna",
    rules={"posh": wanna_wh_question_want_to, "strict": wanna_wh_question_want_to,
           "conservative": wanna_wh_question_want_to},
    surface=surface,
    sanity=None,
    description="wh-questions with want to / wanna",
))
