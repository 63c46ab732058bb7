"""Per-language normalisation, casing and sentence splitting for the cleaners.

English keeps the cleaners' original code path byte for byte (normalize.py);
another language goes through here. The splitting helpers both paths share (``squash``,
``join_sentence_pieces``) live here too, below normalize.py, which dispatches to this module. Italian (``it``):

* Unicode NFC, so an accent typed as a combining mark ("e" + U+0300) and the
  precomposed letter ("è") are one character, and one token for the tokenizer;
* apostrophes: typographic ones (’ ‘ ʼ) become ``'``; elisions stay one word
  ("l'acqua", "c'è", "dell'albero", "un'altra"); an elided article or clitic
  that a transcriber separated ("l' acqua") is joined to its word, while an
  apocope keeps its space ("un po' di pane", "di' la verità");
* casing: the first *letter* is capitalised ("è vero" -> "È vero",
  "'sto gatto" -> "'Sto gatto");
* questions: Italian yes/no questions have no inversion ("Vuoi l'acqua."
  may be a question or not), so BabyBERTa's period-to-question fix, which
  reads English word order, never runs; a question is what the source marks
  with ``?`` (CHAT terminators, childes-db types, punctuation);
* sentence splitting: Italian abbreviations (sig., dott., ecc., pag., ...) do
  not end a sentence, and a sentence may start with an accented capital
  ("È", "À"), a guillemet (« ») or a dash.
"""

from __future__ import annotations

import re
import unicodedata

from .. import languages

_SPACE_RE = re.compile(r"\s+")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})

# Words that end in an elision apostrophe and attach to the next word (Italian).
IT_ELISIONS = frozenset(
    "l un dell all dall nell sull coll pell quell quest bell sant buon nessun ciascun "
    "c m t s v n d gl dev dov com cos anch senz tutt mezz grand ch qual".split()
)
IT_ABBREVIATIONS = frozenset(
    "sig sigg sig.ra sig.na dott dott.ssa prof prof.ssa avv ing arch geom rag on sen dr ecc pag pagg "
    "cap art fig vol es p.es nr tel ca c.a s.p.a s.r.l ss segg gen feb mar apr mag giu lug ago sett ott "
    "nov dic"
    .split()
)
_IT_ELISION_GAP_RE = re.compile(r"(?<![\w'])(\w+)' +(?=\w)")
_IT_SENT_SPLIT_RE = re.compile(
    r"(?<=[.!?\u2026])([\"'\u201d\u2019\u00bb)\]]*)\s+"
    r"(?=[\"'\u201c\u2018\u00ab(\[\u2013\u2014-]?\s?[0-9A-Z\u00c0-\u00d6\u00d8-\u00de])"
)


def squash(text: str) -> str:
    return _SPACE_RE.sub(" ", text).strip()


def join_sentence_pieces(pieces: list[str], abbreviations: frozenset, not_initials: frozenset) -> list[str]:
    """Sentences from ``re.split`` pieces of a sentence-end pattern with one group (text, closing group,
    text, ...): a piece ending in an abbreviation or a single-letter initial continues the sentence."""
    sentences: list[str] = []
    buf = ""
    for i in range(0, len(pieces), 2):
        chunk = pieces[i] + (pieces[i + 1] if i + 1 < len(pieces) else "")
        buf = f"{buf} {chunk}" if buf else chunk
        last = buf.rsplit(" ", 1)[-1].rstrip(".").lower()
        initial = len(last) == 1 and last.isalpha() and last not in not_initials
        if i + 2 < len(pieces) and (last in abbreviations or initial):
            continue
        sentences.append(buf.strip())
        buf = ""
    if buf:
        sentences.append(buf.strip())
    return sentences


def normalise(text: str, language: str) -> str:
    """Per-language cleanup before a line is finished (non-English languages only)."""
    text = unicodedata.normalize("NFC", text).translate(_APOSTROPHES)
    if language == "it":
        text = _IT_ELISION_GAP_RE.sub(lambda m: f"{m.group(1)}'" if m.group(1).lower() in IT_ELISIONS
                                      else m.group(0), text)
    return text


def capitalise(text: str) -> str:
    """Upper-case the first letter (after leading quotes/apostrophes)."""
    for i, ch in enumerate(text):
        if ch.isalpha():
            return text[:i] + ch.upper() + text[i + 1:]
        if ch.isdigit():
            return text
    return text


def split_sentences(paragraph: str, language: str) -> list[str]:
    """Rule-based sentence splitting for written text in a language other than English."""
    languages.get(language)
    paragraph = squash(unicodedata.normalize("NFC", paragraph))
    if not paragraph:
        return []
    abbreviations = IT_ABBREVIATIONS if language == "it" else frozenset()
    # "sig. Rossi", "ecc. Poi", single initials "G. Verdi": not a sentence end
    return join_sentence_pieces(_IT_SENT_SPLIT_RE.split(paragraph), abbreviations, frozenset())
