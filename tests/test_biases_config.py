"""Experiment 3 config: bias blocks are validated at load time (before any job) with errors naming the key;
the Dyck plan shares one checkpoint; the analysis gets the arch-level 'bias' predictor."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from povstim import biases
from povstim.config import load, validate
from povstim.io import PovstimError
from povstim.train import bias_plan
from povstim.train.params import effective_arch

REPO = Path(__file__).resolve().parents[1]
TINY = yaml.safe_load((REPO / "tests" / "configs" / "tiny.yaml").read_text())
PICO = {"family": "gpt2", "n_layer": 1, "n_embd": 32, "n_head": 2, "n_inner": 64}


def config_with(**archs):
    c = copy.deepcopy(TINY)
    c["archs"] = archs
    c["training"]["packing"] = False
    return c


def error(config) -> str:
    with pytest.raises(PovstimError) as exc:
        validate(config)
    return str(exc.value)


def test_unknown_bias_names_the_key():
    msg = error(config_with(m={**PICO, "bias": {"recncy": {"r": 0.6}}}))
    assert "archs.m.bias.recncy" in msg and "did you mean 'recency'" in msg


def test_decay_rate_outside_unit_interval_names_the_key():
    for r in (0, 1, 1.5, -0.2):
        assert "archs.m.bias.recency.r" in error(config_with(m={**PICO, "bias": {"recency": {"r": r}}}))


def test_dyck_k_below_one_names_the_key():
    assert "archs.m.bias.dyck.k" in error(config_with(m={**PICO, "bias": {"dyck": {"k": 0}}}))


def test_dyck_k_must_fit_the_vocabulary():
    msg = error(config_with(m={**PICO, "bias": {"dyck": {"k": 300}}}))
    assert "archs.m.bias.dyck.k" in msg and "tokenizer.vocab_size" in msg


def test_tpt_without_parses_names_the_key():
    """A condition built from a real source cannot be parsed by the gold backend."""
    c = config_with(m={**PICO, "bias": {"tpt": {}}})
    c["sources"]["books"] = {"kind": "local", "path": "resources/books.txt", "format": "lines"}
    c["corpora"]["wiki"]["mixture"] = {"books": 1.0}
    msg = error(c)
    assert "archs.m.bias.tpt" in msg and "wiki" in msg and "books" in msg and "spacy" in msg
    c["archs"]["m"]["bias"]["tpt"]["parser"] = "spacy"  # a real parser parses anything
    validate(c)
    c["archs"]["m"]["bias"]["tpt"]["parser"] = "stanza"  # ... given its models
    assert "parser.model_dir" in error(c)


def test_tpt_needs_sentence_level_input_and_existing_heads():
    c = config_with(m={**PICO, "bias": {"tpt": {}}})
    c["training"]["packing"] = "auto"
    assert "training.packing: false" in error(c)
    assert "archs.m.bias.tpt.heads" in error(config_with(m={**PICO, "bias": {"tpt": {"heads": [2]}}}))
    assert "archs.m.bias.tpt.layers" in error(config_with(m={**PICO, "bias": {"tpt": {"layers": [1]}}}))


def test_biases_need_a_causal_family():
    roberta = {"family": "roberta", "n_layer": 1, "n_embd": 32, "n_head": 2, "n_inner": 64}
    assert "archs.m.bias.recency" in error(config_with(m={**roberta, "bias": {"recency": {"r": 0.6}}}))
    assert "masked" in error(config_with(m={**roberta, "bias": {"dyck": {"k": 4}}}))


def test_schema_fills_the_paper_defaults():
    c = config_with(m={**PICO, "bias": {"dyck": {}, "tpt": {}, "recency": {}}})
    validate(c)
    b = c["archs"]["m"]["bias"]
    assert b["recency"] == {"r": 0.6}
    assert b["dyck"]["k"] == 64 and b["dyck"]["steps"] == 2000 and b["dyck"]["max_depth"] == 8
    assert b["tpt"] == {"layers": [-1], "heads": [0], "weight": 0.5, "distance": "exponential", "parser": None}
    assert "epochs" not in c["training"]  # absent = train by max_steps; no new key reruns old experiments


def test_one_dyck_checkpoint_for_every_seed_and_arch_that_asks_for_it():
    c = config_with(
        plain=PICO,
        dyck={**PICO, "bias": {"dyck": {"k": 8, "steps": 50}}},
        dyck_rec={**PICO, "bias": {"dyck": {"k": 8, "steps": 50}, "recency": {"r": 0.6}}},
        dyck_k4={**PICO, "bias": {"dyck": {"k": 4, "steps": 50}}},
    )
    c["tokenizer"]["vocab_size"] = 512
    c["seeds"] = [1, 2, 3]
    validate(c)
    p = bias_plan.dyck_plan(c)
    assert p["archs"]["dyck"] == p["archs"]["dyck_rec"]  # the Dyck phase trains the plain body
    assert p["archs"]["dyck_k4"] != p["archs"]["dyck"]
    assert len(p["models"]) == 2 and len(p["corpora"]) == 2
    spec = p["corpora"][p["models"][p["archs"]["dyck"]]["corpus"]]
    # sequences of the training context; steps x batch size of them, each seen once
    assert spec["length"] == c["training"]["context"] and spec["sequences"] == 50 * c["training"]["batch_size"]


def test_labels_and_arch_meta():
    c = config_with(plain=PICO, both={**PICO, "bias": {"recency": {"r": 0.6}, "dyck": {"k": 4}}},
                    tpt={**PICO, "bias": {"tpt": {}}})
    assert biases.arch_meta(c) == {"plain": {"bias": "vanilla"}, "both": {"bias": "dyck+recency"},
                                   "tpt": {"bias": "tpt"}}
    assert effective_arch(c["archs"]["both"])["family"] == "gpt2-recency"


def test_paper_config_follows_posh_section_7():
    c = load(REPO / "configs" / "posh-exp3.yaml")
    t = c["training"]
    assert (t["context"], t["batch_size"], t["epochs"], t["warmup"], t["packing"]) == (32, 512, 10, 0, False)
    assert (t["lr"], t["weight_decay"], t["adam_beta1"], t["adam_beta2"]) == (1e-4, 0.1, 0.9, 0.999)  # Table 6
    assert c["seeds"] == [1, 2, 3]
    assert set(c["benchmarks"]) == {"posh", "blimp", "zorro", "scamp_plausible", "scamp_implausible"}
    labels = sorted(m["bias"] for m in biases.arch_meta(c).values())
    assert labels == ["dyck", "dyck+recency", "recency", "tpt", "vanilla"]
    for spec in c["archs"].values():
        assert (spec["n_layer"], spec["n_embd"], spec["n_head"], spec["n_inner"]) == (4, 512, 8, 2048)  # mini
        b = spec.get("bias", {})
        if "recency" in b:
            assert b["recency"]["r"] == 0.6
        if "dyck" in b:
            assert b["dyck"]["steps"] == 2000
        if "tpt" in b:
            assert b["tpt"]["parser"] == "spacy"
    assert list(c["conditions"]) == ["baby-f"] and c["conditions"]["baby-f"]["sizes"] == ["10M"]
    assert "bias" in c["analysis"]["formula"]
    assert len(bias_plan.dyck_plan(c)["models"]) == 1
