"""A CHAT (CHILDES/TalkBank transcript) reader for building child-directed corpora.

Our own parser, not pylangacq: it only needs the main tiers and the speakers'
roles, it must never fail on a whole file because of one odd line (older
corpora are full of them), and it must say what it dropped and why.

What it does (CHAT manual, MacWhinney 2000):

* headers ``@Participants`` and ``@ID`` give each speaker code a role (and
  maybe an age); utterances of children -- the target child, other children,
  siblings -- are dropped by role, adults' main tiers (``*MOT:``) are kept;
* lines starting with a tab (or, in older files, spaces) continue the previous
  line, so a wrapped main tier is joined before it is cleaned;
* dependent tiers (``%mor``, ``%gra``, ``%act`` ...) are skipped;
* codes are stripped from the main tier: media bullets ``\\x15..\\x15``,
  retraced material (``<the dog> [//] the cat`` -> ``the cat``), repetitions
  ``[x 3]``, explanations/paralinguistics ``[= ..] [=! ..]``, postcodes
  ``[+ IMP]``, overlap markers, error codes ``[*]``, fillers and fragments
  (``&-uh``, ``&+fr``, ``&=laughs``), omitted words (``0is``), pauses
  ``(.)``, form markers (``mama@f`` -> ``mama``), lengthening ``ba:d``,
  shortenings ``(be)cause`` -> ``because``, compounds ``ice_cream`` ->
  ``ice cream``, linkers ``+"`` ``+^`` ``++`` and terminators ``+...``
  ``+/?`` (which become ``.`` or ``?``);
* utterances with untranscribed material (``xxx``, ``yyy``, ``www``) are
  dropped whole by default, as AO-CHILDES does (a sentence with a hole in it
  is not a sentence).

Lines that cannot be interpreted (a main tier of an undeclared speaker, a tier
without ``:``, a continuation before any tier, a header without ``:``, a line
after ``@End``) are counted as malformed, reported with file:line examples in
the statistics, and skipped -- never fatal. A header this reader uses
(``@Languages``, ``@Participants``, ``@ID``) written without its ``:``
(``@Languages eng``) is unambiguous and is read as if it had it, counted and
warned with file:line: dropping it would silently drop the whole transcript
(its utterances as another language's, or as undeclared speakers'). A file
that ends without ``@End`` is counted; its last utterance, when it has no
terminator, was cut off and is dropped (``cut_off_utterance``).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from .normalize import CleanStats

log = logging.getLogger(__name__)

# Roles whose speech is the learner's own or another child's (CHAT depfile roles).
CHILD_ROLES = ("Target_Child", "Child", "Sibling", "Brother", "Sister", "Boy", "Girl", "Playmate", "Baby")
# Of these, the ones that may be adults: kept when @ID gives an adult age.
_MAYBE_ADULT_ROLES = {"Sibling", "Brother", "Sister"}
ADULT_AGE_YEARS = 12

_BULLET_RE = re.compile("\x15[^\x15]*\x15")
_AGE_RE = re.compile(r"^(\d+);")
_AGE_FULL_RE = re.compile(r"^(\d+);(\d{1,2})?\.?(\d{1,2})?")

# A retraced group or single word (possibly carrying its own codes) followed by a retrace marker.
_CODE = r"(?:\s*\[(?![/])[^\]]*\])*"
_RETRACE = r"\s*\[/{1,3}[-?]?\](?:\s*\[[^\]]*\])*"
_RETRACE_GROUP_RE = re.compile(r"<[^<>]*>" + _CODE + _RETRACE)
_RETRACE_WORD_RE = re.compile(r"[^\s<>\[\]]+" + _CODE + _RETRACE)
_REPLACEMENT_RE = re.compile(r"(\S+)\s*\[::? ([^\]]*)\]")
_BRACKET_RE = re.compile(r"\[[^\]]*\]")
_PAUSE_RE = re.compile(r"\((?:\d+:)?[\d.]*\)")
_UNTRANSCRIBED = {"xxx", "yyy", "www"}
_QUESTION_TERMINATORS = {"?", "+/?", "+//?", "+..?", "+!?", "+?", "?!", "!?", "\u21d7", "\u2197"}
_TERMINATORS = {".", "?", "!", "+...", "+/.", "+//.", "+/?", "+//?", "+..?", "+!?", "+\"/.", "+\".", "+.",
                "+?", "+!", "+..", "?!", "!?", "+//", "+/", "\u2026", "\u21d7", "\u2197"}
# CA / prosody symbols that carry no words.
# (Rising final intonation, \u21d7 and \u2197, is kept: as a last token it marks a question.)
_CA_CHARS_RE = re.compile("[\u2191\u2193\u2192\u2198\u21d8\u221e\u2261\u223e\u2051\u2907\u2906\u2219"
                          "\u02c8\u02cc\u201e\u2021\u2248\u224b\u00a7\u2309\u2308\u230a\u230b\u2039\u203a\u201c\u201d"
                          "\u27e8\u27e9\u25bc\u25b2\u00b0\u263a\u264b\u2047\u21ab\u2260\u2206\u2207\u204e\u2594\u2581"
                          "\u222c\u222e\u21bb\u03ab\u2206\u00a7\u2051\x00-\x08\x0b-\x1f]")
# Form markers: mama@f, a@l, hao3@s:zho&eng, word@s$n.
_WORD_MARKER_RE = re.compile(r"@[^\s,;]*")
# Headers that take no value (CHAT manual): the only ones written without ':'.
_BARE_HEADERS = {"@Begin", "@End", "@UTF8", "@Blank", "@New Episode", "@Bg", "@Eg"}
# A header name before its ':' (names may hold spaces: '@Birth of CHI', '@Time Duration').
_HEADER_NAME_RE = re.compile(r"@[A-Za-z][A-Za-z0-9 _-]*")
# A header this reader uses, written without its ':' ('@Languages eng'): read as '@Languages:\teng'.
_COLONLESS_HEADER_RE = re.compile(r"(@Languages|@Participants|@ID)[ \t]+([^:\s].*)$")


def age_in_days(age: str) -> float | None:
    """CHAT age 'Y;MM.DD' -> days (childes-db's target_child_age unit), None if absent."""
    m = _AGE_FULL_RE.match(age.strip())
    if not m:
        return None
    years, months, days = (int(g) if g else 0 for g in m.groups())
    return years * 365.25 + months * 30.4375 + days


@dataclass
class Participant:
    code: str
    role: str
    age_years: int | None = None
    age_days: float | None = None

    def is_child(self, child_roles: Iterable[str]) -> bool:
        if self.role not in set(child_roles):
            return False
        if self.role in _MAYBE_ADULT_ROLES and self.age_years is not None:
            return self.age_years < ADULT_AGE_YEARS
        return True


@dataclass
class Utterance:
    speaker: str
    text: str  # the raw main tier, continuation lines joined
    line_no: int
    cut_off: bool = False  # the file's last line, no terminator, no @End: the rest is missing


@dataclass
class Transcript:
    path: str
    participants: dict[str, Participant] = field(default_factory=dict)
    utterances: list[Utterance] = field(default_factory=list)
    languages: list[str] = field(default_factory=list)
    languages_line: int | None = None  # the @Languages header's line (None: the transcript has none)

    @property
    def target_child_age_days(self) -> float | None:
        """The target child's age (AO-CHILDES orders transcripts by it)."""
        for p in self.participants.values():
            if p.role == "Target_Child" and p.age_days is not None:
                return p.age_days
        return None


def _parse_participants(value: str, where: str, stats: CleanStats, line: str) -> dict[str, Participant]:
    out = {}
    for entry in value.split(","):
        parts = entry.split()
        if not parts:
            continue
        if len(parts) == 1:
            stats.malformed_line(where, line, f"participant '{parts[0]}' has no role")
            continue
        out[parts[0]] = Participant(code=parts[0], role=parts[-1])
    return out


def read_transcript(lines: Iterable[str], path: str, stats: CleanStats) -> Transcript:
    """Parse the headers and main tiers of one CHAT transcript."""
    tr = Transcript(path=path)
    ids: dict[str, tuple[str, int | None, float | None]] = {}
    logical: list[tuple[int, str]] = []
    for no, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        if no == 1:
            line = line.lstrip("\ufeff")  # a byte-order mark is not a malformed line
        if not line.strip():
            continue
        if line[0] in "\t " and logical:
            logical[-1] = (logical[-1][0], f"{logical[-1][1]} {line.strip()}")
        elif line[0] in "\t ":
            stats.malformed_line(f"{path}:{no}", line, "continuation line before any tier")
        else:
            logical.append((no, line))
    ended = None  # the @End line
    for no, line in logical:
        where = f"{path}:{no}"
        if ended is not None:
            stats.malformed_line(where, line, f"line after @End (line {ended}); skipped")
            continue
        head, sep, value = line.partition(":")
        if line.startswith("@"):
            colonless = _COLONLESS_HEADER_RE.match(line)
            if line.strip() in _BARE_HEADERS:
                if line.strip() == "@End":
                    ended = no
                continue
            if colonless:
                head, value = colonless.group(1), colonless.group(2)
                why = f"header {head} without ':'; read as '{head}:\\t{value.strip()}'"
                stats.malformed_line(where, line, why)
                log.warning("%s: %s", where, why)
            elif not sep or not _HEADER_NAME_RE.fullmatch(head.rstrip()):
                stats.malformed_line(where, line, "header without ':'; skipped")
                continue
            head, value = head.rstrip(), value.strip()
            if head == "@Languages":
                tr.languages = [x.strip() for x in re.split(r"[,\s]+", value) if x.strip()]
                tr.languages_line = no
            elif head == "@Participants":
                tr.participants.update(_parse_participants(value, where, stats, line))
            elif head == "@ID":
                fields = value.split("|")
                if len(fields) < 8:
                    stats.malformed_line(where, line, "@ID with fewer than 8 fields")
                    continue
                m = _AGE_RE.match(fields[3].strip())
                ids[fields[2].strip()] = (fields[7].strip(), int(m.group(1)) if m else None, age_in_days(fields[3]))
        elif line.startswith("*"):
            if not sep:
                stats.malformed_line(where, line, "main tier without ':'")
                continue
            tr.utterances.append(Utterance(speaker=head[1:].strip(), text=value.strip(), line_no=no))
        elif line.startswith("%"):
            if not sep or not re.fullmatch(r"%[A-Za-z0-9]+", head.rstrip()):
                stats.malformed_line(where, line, "dependent tier without ':'; skipped")
            continue
        else:
            stats.malformed_line(where, line, "line is not a header, tier or continuation")
    if ended is None and logical:
        last_no, last = logical[-1]
        cut = bool(tr.utterances) and tr.utterances[-1].line_no == last_no and not _has_terminator(
            tr.utterances[-1].text)
        if cut:
            tr.utterances[-1].cut_off = True
        stats.malformed_line(f"{path}:{last_no}", last, "file ends without @End" + (
            " in an utterance without terminator (cut off: the utterance is dropped)" if cut else ""))
    # @ID is the authoritative role (and the only place with ages); @Participants fills gaps.
    for code, (role, age, days) in ids.items():
        p = tr.participants.setdefault(code, Participant(code=code, role=role or "Unidentified"))
        if role:
            p.role = role
        p.age_years = age
        p.age_days = days
    return tr


def _has_terminator(text: str) -> bool:
    """Whether a main tier ends in a CHAT terminator (possibly glued to its last word)."""
    tokens = _BULLET_RE.sub(" ", text).split()
    return bool(tokens) and (tokens[-1] in _TERMINATORS or tokens[-1][-1] in ".?!\u2026")


def _clean_word(word: str) -> str | None:
    """One main-tier token -> its orthographic word, or None when it carries no word."""
    if not word:
        return None
    if word[0] == "&" or word[0] == "0":
        return None  # fillers &-uh, fragments &+fr, events &=laughs, omitted words 0is
    if word.startswith("+") and len(word) > 1:
        return None  # linkers +" +^ +< ++ +, (terminators are handled before)
    word = _WORD_MARKER_RE.sub("", word)
    word = word.replace("(", "").replace(")", "")  # shortenings: (be)cause -> because
    word = word.replace("_", " ").replace("+", " ")  # compounds
    word = word.replace(":", "").replace("^", "").replace("~", "")  # lengthening, pauses, clitic joins
    word = word.replace("\u2013", "").replace("\u00b7", "")
    word = word.strip("/<>")
    if word in ("", ",", ";", "\u201e", "\u2021", "\u21d7", "\u2197"):
        return "," if word == "," else None
    return word


def clean_main_tier(text: str) -> tuple[str, str, str | None]:
    """Strip CHAT codes from a main tier.

    Returns (words, terminator, drop_reason); ``drop_reason`` is set when the
    utterance holds untranscribed material (xxx/yyy/www).
    """
    text = _BULLET_RE.sub(" ", text)
    # A replacement [: word] stands for a non-standard form; keep what was said
    # unless it was marked as babbling/child form (@u, @b, ...).
    text = _REPLACEMENT_RE.sub(lambda m: m.group(2) if "@" in m.group(1) else m.group(1), text)
    for _ in range(5):  # nested retracings: innermost first
        new = _RETRACE_GROUP_RE.sub(" ", text)
        new = _RETRACE_WORD_RE.sub(" ", new)
        if new == text:
            break
        text = new
    text = _BRACKET_RE.sub(" ", text)
    text = _PAUSE_RE.sub(" ", text)
    text = text.replace("<", " ").replace(">", " ")
    text = _CA_CHARS_RE.sub(" ", text)
    tokens = text.split()
    terminator = "."
    # The terminator is the last token, or glued to the last word in sloppy files.
    while tokens and (tokens[-1] in _TERMINATORS or tokens[-1] in ",;"):
        tok = tokens.pop()
        if tok in _QUESTION_TERMINATORS:
            terminator = "?"
        elif tok == "!" and terminator == ".":
            terminator = "!"
    if tokens and tokens[-1][-1:] in (".", "?", "!") and len(tokens[-1]) > 1:
        last = tokens[-1]
        terminator = "?" if last.endswith("?") else ("!" if last.endswith("!") else ".")
        tokens[-1] = last.rstrip(".?!")
    words = []
    for tok in tokens:
        low = tok.lower()
        if low in _UNTRANSCRIBED or _WORD_MARKER_RE.sub("", low).strip(",;") in _UNTRANSCRIBED:
            return "", terminator, "untranscribed"
        w = _clean_word(tok)
        if w is None:
            continue
        if w == ",":
            if words and not words[-1].endswith(","):
                words[-1] += ","
            continue
        words.append(w)
    while words and words[-1].endswith(","):
        words[-1] = words[-1][:-1]
    if words and words[0] == ",":
        words.pop(0)
    return " ".join(words), terminator, None


def adult_utterances(
    tr: Transcript, stats: CleanStats, child_roles: Iterable[str] = CHILD_ROLES, where: str = ""
) -> Iterator[tuple[str, str]]:
    """Yield (words, terminator) for every kept adult utterance of a transcript."""
    child_roles = tuple(child_roles)
    for utt in tr.utterances:
        stats.lines_in += 1
        p = tr.participants.get(utt.speaker)
        if p is None:
            stats.malformed_line(f"{where or tr.path}:{utt.line_no}", f"*{utt.speaker}: {utt.text}",
                                 f"speaker '{utt.speaker}' is not declared in @Participants/@ID")
            stats.drop("undeclared_speaker")
            continue
        if p.is_child(child_roles):
            stats.drop("child_speaker")
            continue
        if utt.cut_off:
            stats.drop("cut_off_utterance")
            continue
        words, terminator, reason = clean_main_tier(utt.text)
        if reason:
            stats.drop(reason)
            continue
        yield words, terminator
