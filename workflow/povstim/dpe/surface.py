"""Helpers of the surface pre-tests and sanity checks: raw text and tokens only, no parse."""

from __future__ import annotations

from ..parse.tokenize import tokenize

_CLOSERS = "\"'”’)]}» \t"


def ends_with_question_mark(text: str) -> bool:
    return text.rstrip(_CLOSERS).endswith("?")


def norm(word: str) -> str:
    return word.lower().replace("’", "'")


def lower_words(text: str) -> list[str]:
    return [norm(w) for w in tokenize(text)[0]]


def wanna_site(forms: list[str]) -> int | None:
    """Index of *wanna* or of *want(s|ed|ing)* followed by *to*, else None."""
    for i, w in enumerate(forms):
        w = w.lower()
        if w == "wanna" or (w in ("want", "wants", "wanted", "wanting") and i + 1 < len(forms)
                            and forms[i + 1].lower() == "to"):
            return i
    return None
