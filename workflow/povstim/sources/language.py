"""Per-language normalisation, casing and sentence splitting for the cleaners.

English keeps the cleaners' original code path byte for byte (normalize.py);
another language goes through here, with the conventions its registry entry holds as data
(``povstim.languages``: elisions, hyphenated clitics, abbreviations). The splitting helpers both paths
share (``squash``, ``join_sentence_pieces``) live here too, below normalize.py, which dispatches to this
module. French (``fr``) elides like Italian ("qu' est" -> "qu'est", "l' enfant" -> "l'enfant") and closes up
a spaced hyphen before a subject clitic ("veut - il" -> "veut-il", "mange -t- elle" -> "mange-t-elle",
"est -ce" -> "est-ce"); "est ce que" without a hyphen stays as written. Italian (``it``):

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

import functools
import re
import unicodedata

from .. import languages

_SPACE_RE = re.compile(r"\s+")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})

# "l' acqua": a word, an apostrophe, a space, a word (the registry says which words are elisions)
_ELISION_GAP_RE = re.compile(r"(?<![\w'])(\w+)' +(?=\w)")
_SENT_SPLIT_RE = re.compile(
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
    """Per-language cleanup before a line is finished (non-English languages only): the registry's
    conventions (``languages.Language``: elisions, hyphenated clitics)."""
    lang = languages.get(language)
    text = unicodedata.normalize("NFC", text).translate(_APOSTROPHES)
    if lang.elisions:
        text = _ELISION_GAP_RE.sub(lambda m: f"{m.group(1)}'" if m.group(1).lower() in lang.elisions
                                   else m.group(0), text)
    if lang.hyphen_clitics:
        text = _clitic_re(lang.code).sub(lambda m: f"{m.group(1)}-{m.group(2) + '-' if m.group(2) else ''}"
                                         f"{m.group(3)}", text)
    return text


@functools.cache
def _clitic_re(code: str) -> re.Pattern:
    """ "veut - il", "mange -t- elle", "est -ce": a word, a spaced hyphen (and a euphonic t), a clitic of the
    registry's list; only where the transcriber wrote the hyphen."""
    clitics = "|".join(sorted(languages.get(code).hyphen_clitics, key=len, reverse=True))
    return re.compile(rf"(\w) *- *(?:(t) *- *)?({clitics})\b", re.IGNORECASE)


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
    abbreviations = languages.get(language).abbreviations
    # "sig. Rossi", "ecc. Poi", single initials "G. Verdi": not a sentence end
    return join_sentence_pieces(_SENT_SPLIT_RE.split(paragraph), abbreviations, frozenset())
