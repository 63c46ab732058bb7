"""What the train, parse and score rules ask Snakemake for: a GPU unit only when the job will use a GPU; threads."""

from __future__ import annotations

from povstim import plan
from povstim.devices.slots import job_gpus
from povstim.tokenizer.study import study_corpora


def _config(**training):
    return {
        "training": {"device": "auto", "threads": 1, **training},
        "archs": {"tiny": {"family": "gpt2"}, "bb": {"family": "roberta", "training": {"device": "cpu", "threads": 3}}},
        "parser": {"backend": "stanza", "device": "auto"},
        "scoring": {"device": "auto"},
    }


def test_gpu_unit_only_when_a_gpu_will_be_used(tmp_path):
    no_gpu, gpu = tmp_path / "a", tmp_path / "b"
    no_gpu.mkdir()
    gpu.mkdir()
    (gpu / "nvidia0").touch()
    (gpu / "nvidiactl").touch()
    (no_gpu / "nvidiactl").touch()  # the control node alone is not a GPU
    assert plan.train_gpus(_config(), "tiny", env={}, dev_dir=str(gpu)) == 1
    assert plan.train_gpus(_config(), "tiny", env={}, dev_dir=str(no_gpu)) == 0
    assert plan.train_gpus(_config(), "tiny", env={"CUDA_VISIBLE_DEVICES": ""}, dev_dir=str(gpu)) == 0
    assert plan.train_gpus(_config(), "tiny", env={"CUDA_VISIBLE_DEVICES": "1"}, dev_dir=str(gpu)) == 1
    assert plan.train_gpus(_config(device="cuda:1"), "tiny", env={}, dev_dir=str(no_gpu)) == 1
    assert plan.train_gpus(_config(), "bb", env={}, dev_dir=str(gpu)) == 0  # the arch's own training.device wins
    # the same decision for parsing (stanza only) and scoring
    assert plan.parse_gpus(_config(), env={}, dev_dir=str(gpu)) == 1
    assert plan.parse_gpus(_config(), env={}, dev_dir=str(no_gpu)) == 0  # stanza on a CPU-only machine
    assert plan.parse_gpus({"parser": {"backend": "spacy", "device": "cuda"}}, env={}, dev_dir=str(gpu)) == 0
    assert plan.score_gpus(_config(), env={}, dev_dir=str(no_gpu)) == 0
    assert job_gpus("cpu", env={}, dev_dir=str(gpu)) == 0


def test_threads_follow_arch_overrides():
    assert plan.train_threads(_config(), "tiny") == 1
    assert plan.train_threads(_config(), "bb") == 3


def test_vocab_study_corpora_default_and_subsets():
    config = {"sizes": ["10k", "20k"], "conditions": {"baby": {"from": "b"}, "wiki": {"from": "w", "sizes": ["20k"]}}}
    assert study_corpora(config) == [("baby", "10k"), ("baby", "20k"), ("wiki", "20k")]
    config["vocab_study"] = {"conditions": ["wiki", "baby"], "sizes": ["20k"]}
    assert study_corpora(config) == [("wiki", "20k"), ("baby", "20k")]
