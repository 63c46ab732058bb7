"""The probes config section: schema defaults = MSGS's values, bad input named before any job runs."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import pytest
import yaml

from povstim import config as C
from povstim.io import PovstimError
from povstim.probes import settings as PS
from povstim.probes.msgs import linguistic

REPO = Path(__file__).resolve().parents[1]
TINY = yaml.safe_load((REPO / "tests" / "configs" / "tiny.yaml").read_text())


def with_probes(msgs: dict) -> dict:
    cfg = copy.deepcopy(TINY)
    cfg["probes"] = {"msgs": msgs}
    return cfg


def test_absent_section_means_no_probes():
    cfg = C.validate(copy.deepcopy(TINY))
    assert "probes" not in cfg
    assert "probes" not in C.validate(yaml.safe_load((REPO / "config.yaml").read_text()))


def test_defaults_are_the_msgs_paper_values():
    cfg = C.validate(with_probes({}))
    m = cfg["probes"]["msgs"]
    assert m["tasks"] == "all"
    assert m["inoculation"] == [0.0, 0.001, 0.003, 0.01]  # MSGS §2
    assert m["grid"] == {"lr": [1e-5, 2e-5, 3e-5], "batch_size": [16], "epochs": [5]}  # MSGS §4.2
    assert m["items"]["train"] == 10000  # MSGS §5: "10 out of 10k examples"
    assert m["items"]["test"] == 50000 // 8 * 2  # 6250 paradigms of 8 sentences, 2 of them test sentences
    assert m["items"]["control_train"] + m["items"]["control_test"] == 30000  # MSGS §3
    assert m["gate"] == {"metric": "mcc", "threshold": 0.7}  # MSGS §5


def test_settings_fields_are_exactly_the_schema_properties():
    schema = C.load_schema()["properties"]["probes"]
    assert [f.name for f in dataclasses.fields(PS.ProbesSettings)] == list(schema["properties"])
    msgs = schema["properties"]["msgs"]["properties"]
    assert {f.name for f in dataclasses.fields(PS.MsgsSettings)} == set(msgs)
    for cls, key in ((PS.Items, "items"), (PS.Grid, "grid"), (PS.Gate, "gate")):
        assert {f.name for f in dataclasses.fields(cls)} == set(msgs[key]["properties"])
    for cls in (PS.ProbesSettings, PS.MsgsSettings, PS.Items, PS.Grid, PS.Gate):
        assert all(f.default is dataclasses.MISSING for f in dataclasses.fields(cls)), cls  # no second default


def test_settings_from_a_partial_section():
    s = PS.msgs_settings({"grid": {"lr": [1e-3]}, "items": {"train": 1000}}, threads=2)
    assert s.grid.lr == (1e-3,) and s.grid.epochs == (5,) and s.items.train == 1000 and s.threads == 2
    assert s.items.test == 12500 and s.gate.threshold == 0.7


@pytest.mark.parametrize("msgs, key", [
    ({"tasks": ["main_verb_control", "colour_control"]}, r"probes\.msgs\.tasks\[1\].*unknown feature 'colour'"),
    ({"tasks": ["main_verb_colour"]}, r"probes\.msgs\.tasks\[0\].*unknown surface feature 'colour'"),
    ({"tasks": ["colour_title_case"]}, r"probes\.msgs\.tasks\[0\].*unknown linguistic feature 'colour'"),
    ({"tasks": ["main_verb_length", "main_verb_length"]}, r"probes\.msgs\.tasks\[1\].*listed twice"),
    ({"inoculation": [0.0, 1.5]}, r"probes\.msgs\.inoculation\.1.*maximum of 1"),
    ({"inoculation": [-0.01]}, r"probes\.msgs\.inoculation\.0.*minimum of 0"),
    ({"inoculation": [0.001], "items": {"train": 500}}, r"probes\.msgs\.inoculation\[0\].*0\.5 is not a whole number"),
    ({"items": {"test": 0}}, r"probes\.msgs\.items\.test.*minimum of 2"),
    ({"grid": {"lr": []}}, r"probes\.msgs\.grid\.lr"),
    ({"colour": 1}, r"unknown config key 'probes\.msgs\.colour'"),
])
def test_bad_probe_config_is_an_error_naming_the_key(msgs, key):
    with pytest.raises(PovstimError, match=key):
        C.validate(with_probes(msgs), source="cfg.yaml")


def test_a_task_whose_data_would_be_empty_is_a_config_error(monkeypatch):
    """No out-of-domain core of the feature fits the surface frame -> no test data -> error before any job."""
    only_in = {k: v for k, v in linguistic.TEMPLATES.items()}
    only_in["control_raising"] = tuple(t for t in only_in["control_raising"] if t.domain == "in")
    monkeypatch.setattr(linguistic, "TEMPLATES", only_in)
    from povstim.probes.msgs import generate

    monkeypatch.setattr(generate, "TEMPLATES", only_in)
    with pytest.raises(PovstimError, match=r"probes\.msgs\.tasks: task control_raising_control: .*out-domain data "
                                           r"would be empty"):
        C.validate(with_probes({"tasks": ["control_raising_length"]}), source="cfg.yaml")


def test_demo_config_is_valid():
    cfg = C.load(REPO / "configs" / "msgs-demo.yaml")
    assert cfg["probes"]["msgs"]["items"]["train"] == 1000
