"""A deterministic English word tokenizer shared by the parser backends and the prefilter.

Every real parser backend is fed these tokens (stanza with
``tokenize_pretokenized``, spaCy as a pre-built ``Doc``), and the surface
prefilter looks at exactly the same tokens. So a surface condition the
prefilter tests ("a wh-word", "an auxiliary among the first two words") is
tested on the very tokens the parse-based rule later sees, which is what makes
the prefilter safe by construction rather than by luck.

Conventions follow spaCy's English tokenizer (close to the Penn Treebank):
punctuation is split off, clitics are split (``don't`` -> ``do n't``,
``can't`` -> ``ca n't``, ``it's`` -> ``it 's``), and ``wanna``/``gonna`` stay
whole (en_core_web_sm keeps them whole).
"""

from __future__ import annotations

import functools
import re

from .. import languages

# Leading/trailing punctuation peeled off a whitespace-separated chunk.
_LEAD = re.compile(r"^([\"'“‘(\[{«]+)")
_TRAIL = re.compile(r"([.,!?;:\"'”’)\]}»…]+)$")
# Negation clitic: "don't" -> "do" "n't"; irregular stems first.
_NT_IRREGULAR = {"can't": ("ca", "n't"), "won't": ("wo", "n't"), "shan't": ("sha", "n't"), "ain't": ("ai", "n't")}
_NT = re.compile(r"^(.+?)(n['’]t)$", re.IGNORECASE)
_CLITIC = re.compile(r"^(.+?)(['’](?:s|re|ve|ll|d|m))$", re.IGNORECASE)
_CANNOT = re.compile(r"^(can)(not)$", re.IGNORECASE)


def _split_word(word: str) -> list[str]:
    low = word.lower().replace("’", "'")
    if low in _NT_IRREGULAR:
        a, b = _NT_IRREGULAR[low]
        return [word[: len(a)], word[len(a):]]
    m = _NT.match(word)
    if m:
        return [m.group(1), m.group(2)]
    m = _CANNOT.match(word)
    if m:
        return [m.group(1), m.group(2)]
    m = _CLITIC.match(word)
    if m and m.group(1).isalpha():
        return [m.group(1), m.group(2)]
    return [word]


@functools.cache
def _other_splitter(code: str):
    """A word -> its tokens for a language with elisions or hyphenated clitics (the registry's data), as
    spaCy's French tokenizer splits them: "qu'est" -> "qu'" "est", "veut-il" -> "veut" "-il",
    "mange-t-elle" -> "mange" "-t-elle", "est-ce" -> "est" "-ce"."""
    lang = languages.get(code)
    elision = re.compile(r"^(\w+')(?=\w)", re.IGNORECASE)
    clitics = "|".join(sorted(lang.hyphen_clitics, key=len, reverse=True))
    clitic = re.compile(rf"^(\w.*?)(-(?:t-)?(?:{clitics}))$", re.IGNORECASE) if clitics else None

    def split(word: str) -> list[str]:
        out = []
        m = elision.match(word)
        while m and m.group(1)[:-1].lower() in lang.elisions:
            out.append(m.group(1))
            word = word[m.end():]
            m = elision.match(word)
        m = clitic.match(word) if clitic else None
        out += [m.group(1), m.group(2)] if m else [word]
        return out

    return split


def tokenize(text: str, language: str = "en") -> tuple[list[str], list[bool]]:
    """Split ``text`` into tokens; return (words, space_after) as spaCy's ``Doc`` wants them.

    English (the default) splits as spaCy's English tokenizer; another language with elisions or hyphenated
    clitics in its registry entry (French) also splits those, as spaCy's tokenizer of that language does."""
    split_word = _split_word if language == "en" else _other_splitter(language)
    words: list[str] = []
    spaces: list[bool] = []
    chunks = text.split()
    for ci, chunk in enumerate(chunks):
        last_space = ci < len(chunks) - 1
        lead = ""
        trail = ""
        m = _LEAD.match(chunk)
        if m and m.group(1) != chunk:
            lead = m.group(1)
            chunk = chunk[len(lead):]
        m = _TRAIL.search(chunk)
        if m and m.group(1) != chunk:
            trail = m.group(1)
            chunk = chunk[: -len(trail)]
        parts: list[str] = list(lead) if lead else []
        parts.extend(split_word(chunk) if chunk else [])
        parts.extend(_split_trail(trail))
        for i, p in enumerate(parts):
            words.append(p)
            spaces.append(last_space if i == len(parts) - 1 else False)
    return words, spaces


def _split_trail(trail: str) -> list[str]:
    """Split trailing punctuation, keeping runs like '...' and '?!' as one token each."""
    if not trail:
        return []
    out: list[str] = []
    for m in re.finditer(r"\.{2,}|[?!]+|.", trail):
        out.append(m.group(0))
    return out


def words_only(tokens: list[str]) -> list[str]:
    """The tokens that hold a letter or digit (i.e. not punctuation)."""
    return [t for t in tokens if any(c.isalnum() for c in t)]
