"""Normalising utterances and sentences to the project's orthography, with statistics.

Every cleaner (CHAT, childes-db CSV, plain text, parquet) ends here, so all
sources share one definition of a line:

* ``posh`` style (the project convention, CONVENTIONS.md): first letter
  capitalised, final punctuation attached -- "Is the boy who is smiling happy?".
* ``babyberta`` style (BabyBERTa App. C): lowercased, a space before the final
  punctuation -- "is the boy who is smiling happy ?".

Questions stay questions: the terminator a cleaner passes in (CHAT ``?``,
childes-db ``type == question``) wins over whatever the text ends with.
Lines with fewer than ``min_words`` words are dropped (BabyBERTa: under 3), and
so are lines with more than ``max_sentence_words`` words: a 10,000-word "line"
(a table, a file without line breaks) is not a sentence, and one of them would
push an assembled corpus far past its word budget. Lines holding U+FFFD (text
that was mis-decoded before it reached us) or a NUL byte are dropped too.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from .. import languages
from ..io import PovstimError
from .language import capitalise, join_sentence_pieces, normalise, squash
from .language import split_sentences as split_other

# Spaces a tokenised source puts before punctuation ("dog , cat .").
_SPACE_BEFORE_PUNCT_RE = re.compile(r"\s+([,;:.!?](?:\s|$))")
_END_PUNCT_RE = re.compile(r"\s*([.?!]+)\s*$")
# Sentence ends: terminal punctuation (plus closing quotes/brackets) followed by
# whitespace and something that can start a sentence.
_SENT_SPLIT_RE = re.compile(r"(?<=[.!?])([\"'\u201d\u2019)\]]*)\s+(?=[\"'\u201c\u2018(\[]?[A-Z0-9])")
# Abbreviations whose period does not end a sentence (checked on the last token).
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof sr jr st mt vs etc e.g i.e no vol fig jan feb mar apr jun jul aug sep sept oct nov dec"
    " gen col capt lt sgt rev gov sen rep inc ltd co corp u.s u.k a.m p.m".split()
)


def age_order_record(by: str, ages: list[float]) -> dict:
    """What ``age_order: true`` did, for the clean statistics: the age it sorted by and the range of the known
    ages of the units it sorted, before the sentence filters (``min_words``, ...) (an unknown age is ``inf``,
    sorted last and counted)."""
    known = [a for a in ages if a != float("inf")]
    return {"applied": True, "by": by, "youngest": min(known) if known else None,
            "oldest": max(known) if known else None, "without_age": len(ages) - len(known)}


@dataclass
class CleanStats:
    """Per-source statistics written next to the clean text (``{source}.stats.json``)."""

    source: str = ""
    lines_in: int = 0
    lines_out: int = 0
    words: int = 0
    questions: int = 0
    dropped: Counter = field(default_factory=Counter)
    questions_fixed: int = 0
    malformed: int = 0
    malformed_examples: list = field(default_factory=list)
    files: int = 0
    extra: dict = field(default_factory=dict)

    def drop(self, reason: str, n: int = 1) -> None:
        self.dropped[reason] += n

    def malformed_line(self, where: str, line: str, why: str, keep: int = 20) -> None:
        self.malformed += 1
        if len(self.malformed_examples) < keep:
            self.malformed_examples.append({"where": where, "why": why, "line": line[:200]})

    def to_dict(self) -> dict:
        return {
            "source": self.source,
            "files": self.files,
            "lines_in": self.lines_in,
            "lines_out": self.lines_out,
            "dropped": dict(sorted(self.dropped.items())),
            "dropped_total": sum(self.dropped.values()),
            "malformed_lines": self.malformed,
            "malformed_examples": self.malformed_examples,
            "words": self.words,
            "words_per_sentence": round(self.words / self.lines_out, 3) if self.lines_out else 0.0,
            "question_share": round(self.questions / self.lines_out, 5) if self.lines_out else 0.0,
            **self.extra,
        }


@dataclass(frozen=True)
class Style:
    style: str = "posh"  # posh | babyberta
    lowercase: bool = False
    min_words: int = 3
    fix_questions: bool = False
    language: str = "en"  # per-language normalisation: sources/language.py (English: this module only)
    max_sentence_words: int | None = None  # longest sentence kept (sources.<name>.max_sentence_words); None: no limit

    @classmethod
    def from_params(cls, params: dict, spoken: bool = False) -> "Style":
        style = params["style"]
        # BabyBERTa lowercased every corpus; an explicit `lowercase` still wins.
        lowercase = params.get("lowercase", style == "babyberta")
        lang = languages.get(params.get("language"), "sources.<name>.language")
        if params.get("fix_questions") and not lang.question_heuristic:
            raise PovstimError(
                f"fix_questions: the question heuristic reads English word order and cannot run on "
                f"{lang.name} ({lang.code}); leave fix_questions unset for this source"
            )
        return cls(
            style=style,
            lowercase=bool(lowercase),
            min_words=int(params["min_words"]),
            # Transcribers often end questions with a period; written text marks them itself.
            fix_questions=bool(params.get("fix_questions", spoken and lang.question_heuristic)),
            language=lang.code,
            max_sentence_words=params.get("max_sentence_words"),
        )


def finish(text: str, style: Style, stats: CleanStats, terminator: str | None = None) -> str | None:
    """Normalise one utterance/sentence; return the line, or None (dropped, counted in stats).

    ``terminator`` is the utterance's own final punctuation when the source
    marks it separately (CHAT terminators, childes-db ``type``); otherwise the
    text's own final punctuation is used, and a sentence without one gets ".".
    """
    if "\ufffd" in text or "\x00" in text:
        # U+FFFD: bytes someone already failed to decode; NUL: binary data. Neither is a sentence.
        stats.drop("replacement_char" if "\ufffd" in text else "nul_bytes")
        return None
    if style.language != "en":
        text = normalise(text, style.language)
    text = _SPACE_BEFORE_PUNCT_RE.sub(r"\1", squash(text))
    m = _END_PUNCT_RE.search(text)
    own = ""
    if m:
        own = m.group(1)
        text = text[: m.start()].rstrip(" ,;:-")
    else:
        text = text.rstrip(" ,;:-")
    if not text:
        stats.drop("empty")
        return None
    words = text.split(" ")
    if len(words) < style.min_words:
        stats.drop(f"under_{style.min_words}_words")
        return None
    if style.max_sentence_words is not None and len(words) > style.max_sentence_words:
        stats.drop(f"over_{style.max_sentence_words}_words")
        longest = stats.extra.get("longest_dropped_words", 0)
        stats.extra["longest_dropped_words"] = max(longest, len(words))
        return None
    if terminator is None:
        terminator = "?" if "?" in own else ("!" if "!" in own else ".")
    if terminator == "." and style.fix_questions and looks_like_question(words):
        terminator = "?"
        stats.questions_fixed += 1
    if style.lowercase:
        text = text.lower()
    elif style.style == "posh" and style.language != "en":
        text = capitalise(text)
    elif style.style == "posh":
        text = text[0].upper() + text[1:]
    line = f"{text} {terminator}" if style.style == "babyberta" else f"{text}{terminator}"
    stats.lines_out += 1
    stats.words += len(words)
    if terminator == "?":
        stats.questions += 1
    return line


_AUX = frozenset(
    "is are was were am do does did can could will would shall should may might must have has had "
    "isn't aren't wasn't weren't don't doesn't didn't can't couldn't won't wouldn't shouldn't haven't hasn't".split()
)
_WH = frozenset("what where who whom whose why how which when".split())
_SUBJECT_START = frozenset(
    "i you he she it we they that this there these those the a an my your his her our their its "
    "somebody someone anybody anyone everybody everyone something anything mommy daddy".split()
)


def looks_like_question(words: list[str]) -> bool:
    """A period-final utterance that is an inverted question (BabyBERTa App. C's fix).

    Only clear cases: an auxiliary followed by a subject ("does it fit your
    mouth"), or a wh-word followed by an auxiliary ("where did it go"). "Have
    some juice", "do it", "what a mess" and "when you go ..." stay statements.
    """
    if len(words) < 2:
        return False
    w0 = words[0].lower().rstrip(",")
    w1 = words[1].lower().rstrip(",")
    if w0 in _AUX:
        return w1 in _SUBJECT_START and not (w0 in ("do", "have") and w1 in ("it", "that", "this", "there", "the", "a"))
    if w0 in _WH or w0.split("'")[0] in _WH:
        return w1 in _AUX or ("'" in w0 and w0.split("'")[1] in ("s", "re", "d", "ll"))
    return False


def split_sentences(paragraph: str, language: str = "en") -> list[str]:
    """Rule-based sentence splitting for written text (no model: fast and deterministic)."""
    if language != "en":
        return split_other(paragraph, language)
    paragraph = squash(paragraph)
    if not paragraph:
        return []
    # "Mr. Smith", "e.g. This", single initials "J. Smith" (but not the pronoun "I."): not a sentence end
    return join_sentence_pieces(_SENT_SPLIT_RE.split(paragraph), _ABBREVIATIONS, frozenset("i"))
