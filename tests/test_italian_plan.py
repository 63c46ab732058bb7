"""Language in the config and the plan: schema keys and defaults, per-source languages, and a
`filter: true` condition in a language without DPE rules built unfiltered — and saying so."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

from povstim import config as povstim_config
from povstim import languages, plan
from povstim.cli import main
from povstim import dpe
from povstim.io import PovstimError

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "configs" / "italian-demo.yaml"


def _demo():
    return povstim_config.validate(yaml.safe_load(DEMO.read_text()), source=str(DEMO))


def test_schema_language_enums_match_the_registry():
    schema = povstim_config.load_schema()
    assert set(schema["properties"]["language"]["enum"]) == set(languages.LANGUAGES)
    assert schema["properties"]["language"]["default"] == languages.default() == "en"
    real = schema["properties"]["sources"]["additionalProperties"]["allOf"][0]["then"]["properties"]
    assert set(real["language"]["enum"]) == set(languages.LANGUAGES)
    bench = schema["properties"]["benchmarks"]["additionalProperties"]["properties"]
    assert set(bench["language"]["enum"]) == set(languages.LANGUAGES)


def test_the_embedded_default_stays_english():
    cfg = povstim_config.validate(yaml.safe_load((REPO / "config.yaml").read_text()))
    assert cfg["language"] == "en" and plan.language(cfg) == "en"
    assert all(plan.filter_applies(cfg, c) == bool(s.get("filter")) for c, s in cfg["conditions"].items())
    assert all("note" not in m for m in plan.condition_meta(cfg).values())


def test_italian_demo_config_plan():
    cfg = _demo()
    assert cfg["language"] == "it" and "it" not in dpe.languages(cfg["filter"]["rules"])
    assert plan.source_spec(cfg, "cds")["language"] == "it"
    assert not plan.filter_applies(cfg, "baby-f")
    assert plan.filter_note(cfg, "baby-f") == "not filtered: no DPE rules for language it"
    assert plan.filter_note(cfg, "wiki") is None  # never asked for the filter
    assert plan.filtered_corpora(cfg) == []       # so no parse / filter jobs
    meta = plan.condition_meta(cfg)
    assert meta["baby-f"] == {"source": "baby", "filtered": False, "note": "not filtered: no DPE rules for language it"}
    assert plan.benchmark_spec(cfg, "babies-it")["language"] == "it"
    assert len(plan.suite_files_hash(cfg, "babies-it")) == 16


def test_per_source_language_and_mixed_corpora():
    cfg = _demo()
    cfg = copy.deepcopy(cfg)
    cfg["language"] = "en"
    cfg["sources"]["cds"]["language"] = "it"  # an Italian source in an English experiment
    assert plan.source_language(cfg, "cds") == "it" and plan.source_language(cfg, "adulti") == "en"
    assert plan.corpus_languages(cfg, "baby") == ["it"]
    assert not plan.filter_applies(cfg, "baby-f")
    cfg["sources"]["syn"] = {"kind": "synthetic", "register": "child", "sentences": 10}
    assert plan.source_language(cfg, "syn") == "en"


def test_reinsert_without_rules_is_an_error():
    cfg = copy.deepcopy(_demo())
    cfg["conditions"]["baby"] = {"from": "baby", "filter": True, "reinsert": {"binding": 0.001}}
    with pytest.raises(PovstimError, match=r"conditions\.baby\.reinsert: the DPE filter has no rules for language it"):
        plan.condition_meta(cfg)


def test_schema_rejects_unknown_languages():
    raw = yaml.safe_load(DEMO.read_text())
    with pytest.raises(PovstimError, match="language"):
        povstim_config.validate(dict(raw, language="xx"))  # fr and de are registry entries now
    bad = copy.deepcopy(raw)
    bad["sources"]["extra"] = {"kind": "synthetic", "register": "child", "sentences": 5, "language": "it"}
    with pytest.raises(PovstimError, match="sources.extra.language"):
        povstim_config.validate(bad)


def test_condition_records_why_it_is_not_filtered(tmp_path, caplog):
    base = tmp_path / "base.txt"
    base.write_text("".join(f"Il gatto numero {i} dorme.\n" for i in range(40)), encoding="utf-8")
    stats = tmp_path / "condition.json"
    note = "not filtered: no DPE rules for language it"
    rc = main(["condition", "--base", str(base), f"--not-filtered={note}", "--out-train", str(tmp_path / "t.txt"),
               "--out-dev", str(tmp_path / "d.txt"), "--stats", str(stats)])
    assert rc == 0
    s = json.loads(stats.read_text())
    assert s["not_filtered"] == note and s["filtered"] is False and s["n_sentences"] == 40
    assert note in caplog.text
    # Without the flag (English, or a condition that never asked): no such key.
    rc = main(["condition", "--base", str(base), "--not-filtered=", "--out-train", str(tmp_path / "t.txt"),
               "--out-dev", str(tmp_path / "d.txt"), "--stats", str(stats)])
    assert rc == 0 and "not_filtered" not in json.loads(stats.read_text())
