"""Config validation and the experiment plan."""

from __future__ import annotations

import copy
import subprocess
import sys

import pytest
import yaml

from povstim import config as cfg
from povstim import plan
from povstim.io import PovstimError, parse_size


@pytest.fixture()
def default_config(repo_root):
    return yaml.safe_load((repo_root / "config.yaml").read_text())


def test_default_config_is_valid(default_config):
    cfg.validate(default_config)


def test_every_config_in_configs_is_valid(repo_root):
    for path in sorted((repo_root / "configs").glob("*.yaml")):
        cfg.load(path)


def test_misspelled_top_level_key_is_named(default_config):
    bad = copy.deepcopy(default_config)
    bad["trainnig"] = bad.pop("training")
    with pytest.raises(PovstimError) as err:
        cfg.validate(bad, source="my.yaml")
    msg = str(err.value)
    assert "my.yaml" in msg and "'trainnig'" in msg
    assert "did you mean 'training'" in msg


def test_misspelled_nested_key_is_named(default_config):
    bad = copy.deepcopy(default_config)
    bad["training"]["lrate"] = 0.1
    with pytest.raises(PovstimError, match=r"training\.lrate"):
        cfg.validate(bad)


def test_unknown_arch_family_is_named(default_config):
    bad = copy.deepcopy(default_config)
    arch = next(iter(bad["archs"]))
    bad["archs"][arch]["family"] = "gpt5"
    with pytest.raises(PovstimError, match=rf"archs\.{arch}\.family"):
        cfg.validate(bad)


def test_wrong_type_is_named(default_config):
    bad = copy.deepcopy(default_config)
    bad["seeds"] = "one"
    with pytest.raises(PovstimError, match="'seeds'"):
        cfg.validate(bad)


def test_condition_from_unknown_corpus(default_config):
    bad = copy.deepcopy(default_config)
    bad["conditions"]["wiki"]["from"] = "wikipedia"
    with pytest.raises(PovstimError, match=r"conditions\.wiki\.from .*'wikipedia'"):
        cfg.validate(bad)


def test_mixture_names_unknown_source(default_config):
    bad = copy.deepcopy(default_config)
    bad["corpora"]["baby"]["mixture"] = {"childes": 1.0}
    with pytest.raises(PovstimError, match=r"corpora\.baby\.mixture names source 'childes'"):
        cfg.validate(bad)


def test_load_rejects_non_mapping(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("- just\n- a list\n")
    with pytest.raises(PovstimError, match=str(p)):
        cfg.load(p)


@pytest.mark.parametrize(
    "text,words", [("50k", 50_000), ("10M", 10_000_000), ("1.5M", 1_500_000), ("300", 300), (7, 7)]
)
def test_parse_size(text, words):
    assert parse_size(text) == words


def test_parse_size_rejects_garbage():
    with pytest.raises(PovstimError, match="10 million"):
        parse_size("10 million")


def test_plan_models_respect_size_restrictions(default_config):
    c = copy.deepcopy(default_config)
    c["sizes"] = ["10M", "30M"]
    c["seeds"] = [1, 2, 3]
    c["archs"] = {
        "gpt2-mini": {"family": "gpt2", "sizes": ["10M"]},
        "gpt2-small": {"family": "gpt2", "sizes": ["30M"]},
    }
    c["conditions"]["baby-f"]["sizes"] = ["10M"]
    models = plan.models(c)
    assert {(m.arch, m.size) for m in models} == {("gpt2-mini", "10M"), ("gpt2-small", "30M")}
    assert not [m for m in models if m.condition == "baby-f" and m.size == "30M"]
    # 3 conditions x 1 size (mini) x 3 seeds + 2 conditions x 1 size (small) x 3 seeds
    assert len(models) == 9 + 6


def test_condition_meta_marks_only_baby_f_filtered(default_config):
    meta = plan.condition_meta(default_config)
    assert meta["baby-f"] == {"source": "baby", "filtered": True}
    assert meta["baby"] == {"source": "baby", "filtered": False}
    assert meta["wiki"] == {"source": "wiki", "filtered": False}


def test_cli_help_lists_every_stage():
    out = subprocess.run(
        [sys.executable, "-m", "povstim", "--help"], capture_output=True, text=True, check=True
    ).stdout
    from povstim.cli import STAGES

    for stage in STAGES:
        assert stage in out


def test_per_size_mixture_reproduces_each_column(default_config):
    c = copy.deepcopy(default_config)
    c["sizes"] = ["50k", "150k"]  # independent of the embedded default's sizes
    c["sources"]["cds2"] = dict(c["sources"]["cds"], seed=99)
    c["corpora"]["baby"]["mixture"] = {"cds": {"50k": 3, "150k": 1}, "cds2": {"50k": 1, "150k": 0}}
    cfg.validate(c)
    assert plan.mixture(c, "baby", "50k") == {"cds": 3, "cds2": 1}
    # a zero share leaves the source out of that size altogether
    assert plan.mixture(c, "baby", "150k") == {"cds": 1}
    assert plan.mixture(c, "wiki", "50k") == {"adult": 1.0}


def test_per_size_mixture_missing_a_size_is_named(default_config):
    c = copy.deepcopy(default_config)
    c["sizes"] = ["50k", "150k"]  # independent of the embedded default's sizes
    c["corpora"]["baby"]["mixture"] = {"cds": {"50k": 1}}
    with pytest.raises(PovstimError, match=r"corpora\.baby\.mixture\.cds .* none for size 150k"):
        cfg.validate(c)


def test_per_size_mixture_unknown_size_is_named(default_config):
    c = copy.deepcopy(default_config)
    c["sizes"] = ["50k", "150k"]  # independent of the embedded default's sizes
    c["corpora"]["baby"]["mixture"] = {"cds": {"50k": 1, "150k": 1, "10M": 2}}
    with pytest.raises(PovstimError, match=r"corpora\.baby\.mixture\.cds names size '10M'"):
        cfg.validate(c)
