"""The parse stage: tokenizer, sharding, prefilter, gold / spaCy / stanza backends."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from povstim.io import PovstimError
from povstim.parse import backends
from povstim.parse.run import parse_texts, parser_settings, shard_range
from povstim.parse.conllu import read_file
from povstim.parse.tokenize import tokenize

FIXTURES = Path(__file__).parent / "fixtures" / "conllu"


def povstim(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "povstim", *map(str, args)], capture_output=True, text=True, cwd=cwd)


def test_tokenizer_splits_punctuation_and_clitics_like_spacy():
    assert tokenize("Is the boy who's smiling happy?")[0] == ["Is", "the", "boy", "who", "'s", "smiling", "happy", "?"]
    assert tokenize("I can't, don't you?")[0] == ["I", "ca", "n't", ",", "do", "n't", "you", "?"]
    words, spaces = tokenize('"Hi," she said...')
    assert words == ['"', "Hi", ",", '"', "she", "said", "..."]
    assert spaces == [False, False, False, True, True, False, False]
    assert tokenize("I wanna go.")[0] == ["I", "wanna", "go", "."]


def test_shards_partition_the_corpus():
    n = 11
    got = [i for k in range(3) for i in shard_range(n, k, 3)]
    assert got == list(range(n))
    with pytest.raises(PovstimError, match="--shard 3"):
        shard_range(n, 3, 3)


def test_gold_backend_looks_up_by_text_and_marks_prefilter(tmp_path):
    texts = {0: "The dog is running.", 1: "Is the boy who is smiling happy?"}
    sents, stats = parse_texts(texts, parser_settings(dict(backend="gold")), ("question_formation", "binding"),
                               [FIXTURES / "rules.conllu"])
    assert [s.meta["sent_id"] for s in sents] == ["0", "1"]
    assert [s.meta["prefilter"] for s in sents] == ["spared", "pass"]
    assert sents[1].meta["dpe"] == "question_formation"
    assert sents[1].tokens[5].deprel == "acl:relcl"
    assert stats["n_parsed"] == 1 and stats["n_spared"] == 1


def test_gold_backend_names_the_missing_sentence(tmp_path):
    base = tmp_path / "base.txt"
    base.write_text("The dog is running.\nThe cat is sleeping.\n")
    r = povstim("parse", "--input", base, "--gold", FIXTURES / "rules.conllu", "--out", tmp_path / "0.conllu")
    assert r.returncode == 1
    assert "line 2 of the corpus has no gold parse" in r.stderr and "'The cat is sleeping.'" in r.stderr
    assert not (tmp_path / "0.conllu").exists()


def test_parse_cli_writes_shard_with_base_line_ids(tmp_path):
    lines = [s.text for s in read_file(FIXTURES / "rules.conllu")]
    base = tmp_path / "base.txt"
    base.write_text("\n".join(lines) + "\n")
    out = tmp_path / "1.conllu"
    r = povstim("parse", "--input", base, "--gold", FIXTURES / "rules.conllu", "--params", '{"backend": "gold"}',
                "--filter-params", '{"mode": "posh"}', "--shard", 1, "--n-shards", 2, "--out", out)
    assert r.returncode == 0, r.stderr
    sents = read_file(out)
    lo = len(lines) // 2
    assert [int(s.sent_id) for s in sents] == list(range(lo, len(lines)))
    assert all(s.meta["text"] == lines[int(s.sent_id)] for s in sents)


@pytest.fixture(scope="module")
def nlp():
    return backends.load_spacy()


def test_spacy_labels_are_mapped_to_ud(nlp):
    (s,) = backends.parse_spacy(["Is the boy who is smiling happy?"], nlp=nlp)
    rels = {t.form: t.deprel for t in s.tokens}
    assert rels["smiling"] == "acl:relcl" and rels["boy"] == "nsubj"
    assert sum(t.head == 0 for t in s.tokens) == 1 and rels["Is"] == "root"
    (r,) = backends.parse_spacy(["Mary's dad likes himself."], nlp=nlp)
    refl = next(t for t in r.tokens if t.form == "himself")
    assert refl.feat("Reflex") == "Yes" and refl.upos == "PRON"
    assert {t.form: t.deprel for t in r.tokens}["Mary"] == "nmod:poss"
    assert all(v not in ("relcl", "dobj", "ROOT", "nsubjpass", "poss") for v in (t.deprel for t in r.tokens))


def test_spacy_backend_keeps_our_tokens(nlp):
    texts = ["Where's the dog that you can't see?", "I wanna go."]
    for text, sent in zip(texts, backends.parse_spacy(texts, nlp=nlp)):
        assert [t.form for t in sent.tokens] == tokenize(text)[0]


def test_stanza_without_models_gives_the_download_command(tmp_path):
    with pytest.raises(PovstimError) as exc:
        backends.check_stanza_models(tmp_path / "stanza")
    msg = str(exc.value)
    assert "stanza.download('en', model_dir=" in msg and str(tmp_path / "stanza") in msg
    assert "tokenize,pos,lemma,depparse" in msg
    base = tmp_path / "base.txt"
    base.write_text("Is the boy who is smiling happy?\n")
    r = povstim("parse", "--input", base, "--backend", "stanza", "--model-dir", tmp_path / "nowhere",
                "--out", tmp_path / "0.conllu")
    assert r.returncode == 1 and "stanza.download(" in r.stderr and "Traceback" not in r.stderr
    r = povstim("parse", "--input", base, "--backend", "stanza", "--out", tmp_path / "0.conllu")
    assert r.returncode == 1 and "parser.model_dir is not set" in r.stderr


def test_stanza_documents_convert_to_ud_sentences():
    """The stanza path (minus the models, which cannot be downloaded here) on a real stanza Document."""
    from stanza.models.common.doc import Document

    rows = [
        (1, "Is", "be", "AUX", 7, "cop"), (2, "the", "the", "DET", 3, "det"), (3, "boy", "boy", "NOUN", 7, "nsubj"),
        (4, "who", "who", "PRON", 6, "nsubj"), (5, "is", "be", "AUX", 6, "aux"),
        (6, "smiling", "smile", "VERB", 3, "acl:relcl"), (7, "happy", "happy", "ADJ", 0, "root"),
        (8, "?", "?", "PUNCT", 7, "punct"),
    ]
    calls = []

    def fake_pipeline(batch):  # stands in for stanza.Pipeline(tokenize_pretokenized=True)
        calls.append(batch)
        return Document([[dict(id=i, text=t, lemma=l, upos=u, head=h, deprel=d) for i, t, l, u, h, d in rows]
                         for _ in batch])

    out = backends.parse_stanza(["Is the boy who is smiling happy?"] * 3, nlp=fake_pipeline, batch_size=1)
    assert calls[0][0] == tokenize("Is the boy who is smiling happy?")[0]
    assert len(out) == 3 and out[0].tokens[5].deprel == "acl:relcl" and out[0].tokens[6].head == 0


def test_stanza_with_broken_models_is_a_clear_error(tmp_path):
    """Real stanza.Pipeline on a model folder that exists but holds nothing usable (never downloads)."""
    (tmp_path / "en").mkdir()
    (tmp_path / "resources.json").write_text("{}")
    with pytest.raises(PovstimError, match="stanza could not load its English models") as exc:
        backends.load_stanza(tmp_path, "cpu")
    assert f"model_dir='{tmp_path}'" in str(exc.value)
