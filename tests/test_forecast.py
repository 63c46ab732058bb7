"""The compute forecast of `povstim plan --forecast`: list scheduling and per-job arithmetic against
hand-computed examples, and the calibration cache (used, and invalidated by what the speed depends on)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import pytest

from povstim.io import PovstimError
from povstim.preflight import forecast as F
from povstim.train.params import resolve

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "tests" / "configs" / "tiny.yaml"


def test_independent_jobs_fill_the_cores():
    jobs = [F.Job(f"j{i}", 10.0, 1) for i in range(3)]
    out = F.list_schedule(jobs, 2)
    # by hand: j0, j1 at 0-10, j2 at 10-20
    assert out["wall"] == 20.0 and out["core_s"] == 30.0
    assert out["start"] == {"j0": 0.0, "j1": 0.0, "j2": 10.0}
    assert F.list_schedule(jobs, 3)["wall"] == 10.0
    assert F.list_schedule(jobs, 1)["wall"] == 30.0


def test_score_jobs_wait_for_their_model_and_for_two_free_cores():
    jobs = [F.Job("train A", 30.0, 1), F.Job("train B", 10.0, 1),
            F.Job("score A", 5.0, 2, ("train A",)), F.Job("score B", 5.0, 2, ("train B",))]
    out = F.list_schedule(jobs, 2)
    # by hand: both trains at 0; train B ends at 10, but score B needs 2 cores and train A holds one until 30;
    # at 30 scores A and B are ready (paths 5 each; A is listed first): A 30-35, B 35-40
    assert out["start"]["score B"] == 35.0 and out["start"]["score A"] == 30.0
    assert out["wall"] == 40.0
    assert out["core_s"] == 30 + 10 + 2 * 5 + 2 * 5


def test_the_longest_remaining_path_starts_first_and_threads_are_capped_at_the_cores():
    jobs = [F.Job("Y", 5.0, 1), F.Job("X", 1.0, 1), F.Job("X2", 10.0, 4, ("X",))]
    out = F.list_schedule(jobs, 1)
    # by hand on one core: X (path 1 + 10 = 11) before Y (5); then X2 (10, its 4 threads capped at 1) before Y
    assert out["start"] == {"X": 0.0, "X2": 1.0, "Y": 11.0}
    assert out["wall"] == 16.0 and out["core_s"] == 16.0


def test_bad_schedules_are_errors():
    with pytest.raises(PovstimError, match="--cores 0"):
        F.list_schedule([F.Job("a", 1.0, 1)], 0)
    with pytest.raises(PovstimError, match="unknown job b"):
        F.list_schedule([F.Job("a", 1.0, 1, ("b",))], 2)


def _training(**kw):
    base = dict(packing=True, context=64, batch_size=8, repeats=1, max_steps=2000, epochs=10, schedule="wsd",
                decay_fraction=0.1, patience=100, eval_every=25, save_every=200, eval_batches=None)
    return SimpleNamespace(**{**base, **kw})


CAL = {"tokens_per_step": 512.0, "train_tokens_per_s": 5120.0, "eval_s_per_token": 1e-4, "checkpoint_s": 0.2,
       "fixed_s": 1.0}


@pytest.fixture
def rule(monkeypatch):
    """A plateau rule of 4 epochs at every size, so the arithmetic below does not depend on the calibrated one."""
    monkeypatch.setattr(F, "PLATEAU_EPOCHS", 4.0)
    monkeypatch.setattr(F, "PLATEAU_EXPONENT", 0.0)


def test_plateau_rule_by_hand():
    # the rule as documented: PLATEAU_EPOCHS at 10k words, x (words / 10k) ** PLATEAU_EXPONENT
    assert F.plateau_epochs(10_000) == pytest.approx(F.PLATEAU_EPOCHS)
    assert F.plateau_epochs(40_000) == pytest.approx(F.PLATEAU_EPOCHS * 4 ** F.PLATEAU_EXPONENT)


def test_train_estimate_by_hand(rule):
    est = F.train_estimate(10_000, 1_000, 1.2, _training(), CAL, 0.05)
    # train: 9,500 words x 1.2 + 950 </s> = 12,350 tokens; 192 blocks of 64; 24 batches of 8 per epoch;
    # budget 10 epochs = 240 steps; plateau rule 4 epochs = 96 steps, found by patience at 196, within the
    # budget's own decay start floor(240 / 1.1) = 218; decay ceil(0.1 x 196) = 20 steps: 216
    assert est["train_tokens"] == 12_350 and est["batches_per_epoch"] == 24
    assert est["budget_steps"] == 240 and est["plateau_steps"] == 96 and est["reaches_plateau"]
    assert est["expected_steps"] == 216 and est["expected_epochs"] == round(216 / 24, 2)
    # seconds: 216 steps x 512 / 5120 = 21.6; 216 // 25 + 1 = 9 evaluations of 650 dev tokens (500 x 1.2 + 50)
    # x 1e-4 = 0.585; 216 // 200 + 9 / 2 = 5.5 saves x 0.2 = 1.1; + 1.0 fixed
    assert est["seconds"] == pytest.approx(21.6 + 0.585 + 1.1 + 1.0)


def test_a_budget_below_the_plateau_rule_says_so(rule):
    est = F.train_estimate(10_000, 1_000, 1.2, _training(epochs=8), CAL, 0.05)
    # 8 epochs = 192 steps: the plateau found at 196 comes after the budget's decay start floor(192 / 1.1) = 174
    assert not est["reaches_plateau"] and est["expected_steps"] == est["budget_steps"] == 192
    linear = F.train_estimate(10_000, 1_000, 1.2, _training(schedule="linear", patience=50), CAL, 0.05)
    assert linear["reaches_plateau"] and linear["expected_steps"] == 96 + 50  # early stopping's patience after it
    unpacked = F.train_estimate(10_000, 1_000, 1.2, _training(packing=False), CAL, 0.05)
    assert unpacked["batches_per_epoch"] == math.ceil(950 / 8)  # one sentence per sequence


TINY_ARCH = {"family": "gpt2", "n_layer": 1, "n_embd": 16, "n_head": 2, "n_inner": 32}
TINY_TRAINING = {"batch_size": 4, "context": 16, "threads": 1, "device": "cpu"}


def _calibrate(cache, recalibrate=False, **training):
    arch, settings = resolve(TINY_ARCH, {**TINY_TRAINING, **training})
    return F.calibrate("tiny", arch, settings, 300, cache, recalibrate)


def test_calibration_is_cached_and_invalidated(tmp_path, monkeypatch):
    monkeypatch.setattr(F, "CALIBRATION_STEPS", 10)  # a real trainer, a few seconds
    monkeypatch.setattr(F, "CALIBRATION_LOG", 2)
    first = _calibrate(tmp_path)
    assert not first["cached"] and first["device"] == "cpu" and first["clock"] == "cpu"
    assert first["train_tokens_per_s"] > 0 and first["eval_s_per_token"] > 0 and first["vocab_size"] == 300
    assert first["tokens_per_step"] == 4 * 16  # packed: batch x context
    files = list(tmp_path.glob("*.json"))
    assert [f.stem for f in files] == [first["key"]]
    again = _calibrate(tmp_path)
    assert again["cached"] and {k: v for k, v in again.items() if k != "cached"} == \
        {k: v for k, v in first.items() if k != "cached"}
    # --recalibrate measures again (same key, a new measurement)
    fresh = _calibrate(tmp_path, recalibrate=True)
    assert not fresh["cached"] and fresh["key"] == first["key"]
    # what the speed depends on changes the key: the batch, the threads; what it does not (the lr) does not
    assert F.calibration_key(*resolve(TINY_ARCH, {**TINY_TRAINING, "batch_size": 8}), 300, 1, "cpu") != first["key"]
    assert F.calibration_key(*resolve(TINY_ARCH, {**TINY_TRAINING, "threads": 2}), 300, 2, "cpu") != first["key"]
    assert F.calibration_key(*resolve(TINY_ARCH, {**TINY_TRAINING, "lr": 0.5}), 300, 1, "cpu") == first["key"]
    assert F.calibration_key(*resolve(TINY_ARCH, TINY_TRAINING), 300, 1, "cuda:NVIDIA H200") != first["key"]
    assert F.calibration_key(*resolve(TINY_ARCH, TINY_TRAINING), 300, 1, "cpu", {"batch_size": 64}) != first["key"]
    assert json.loads((tmp_path / f"{first['key']}.json").read_text())["key"] == first["key"]


def test_a_void_twin_with_identical_text_is_forecast_as_a_link_not_a_training(monkeypatch, rule, tmp_path):
    """BABY gets nothing back (evidence.reused_models): its train job waits for BABY-F's and links the model
    (train/reuse.py), so the forecast counts one job start for it, not a training; its score jobs still run.
    The calibration and process costs are fixed by hand here (they are measured in the test above)."""
    import yaml

    from povstim import config as config_mod
    from povstim.preflight import evidence

    cal = {**CAL, "score_s_per_token": 1e-4, "score_pass_s": 0.1, "device": "cpu", "threads": 1}
    monkeypatch.setattr(F, "calibrate", lambda *a, **k: dict(cal))
    monkeypatch.setattr(F, "process_costs", lambda *a, **k: {"job_process_s": 0.5, "warm_server_s": 3.0,
                                                             "cold_job_s": 2.0})
    cfg = yaml.safe_load(TINY.read_text())
    cfg["sizes"] = ["8k"]
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    config = config_mod.load(path)
    lines = [f"the dog saw {w} cat ." for w in ("a", "the", "one", "my", "her", "his", "that", "this")] * 50
    counts = {s: SimpleNamespace(lines=lines, words=2400, sentences=400) for s in ("cds", "adult")}
    voids = [{"condition": "baby", "sibling": "baby-f", "size": "8k", "status": "void", "identical": True},
             {"condition": "baby", "sibling": "baby-f", "size": "16k", "status": "void", "identical": False}]
    reused = evidence.reused_models(voids)
    assert reused == {("baby", "8k"): "baby-f"}  # a few sentences back: void, but its own text, so trained
    plain = F.forecast(config, counts, REPO, 2, tmp_path)
    once = F.forecast(config, counts, REPO, 2, tmp_path, reused=reused)
    rows, before = ({r["job"]: r for r in f["jobs"]} for f in (once, plain))
    twin = "train gpt2-nano/baby/8k/seed1"
    assert rows[twin]["reuses"] == "baby-f" and rows[twin]["seconds"] == 0.5  # one job start (warm_start)
    assert "reuses" not in rows["train gpt2-nano/baby-f/8k/seed1"] and "reuses" not in before[twin]
    # by hand: the CPU total loses the twin's training less its job start; its score jobs are unchanged
    assert once["cpu"] == pytest.approx(plain["cpu"] - (before[twin]["seconds"] - 0.5))
    assert {k: v for k, v in rows.items() if v["kind"] == "score"} == \
        {k: v for k, v in before.items() if v["kind"] == "score"}
    # a score job by hand: passes x (the suite's words x the corpus's tokens per word x s/token + s/pass) + a job
    # start; the scorer's cost is per token, since its calibration's pseudo-words split unlike a suite's words
    tpw = F.tokens_per_word(lines + lines, dict(config["tokenizer"]), 8000)
    for name, r in rows.items():
        if r["kind"] == "score" and "/8k/" in name:
            suite = name.rsplit("/", 1)[1]
            words = F.suite_words_of(suite, config["benchmarks"][suite], REPO)
            assert r["seconds"] == pytest.approx(r["passes"] * (words * tpw * 1e-4 + 0.1) + 0.5)
    text = "\n".join(F.render(once))
    assert "train gpt2-nano/baby/8k/seed1" in text and "not trained: links baby-f's model (identical corpus)" in text


def test_a_file_suite_is_forecast_at_the_pairs_the_benchmarks_stage_keeps(tmp_path):
    """pairs_per_paradigm and paradigms bound the scored words (the French demo's CLAMS-fr was forecast whole:
    thousands of pairs a paradigm where the run scores 100). By hand: every sentence has 3 words (+ <s>, </s>)."""
    from povstim.preflight.forecast import suite_words_of

    folder = tmp_path / "clams"
    folder.mkdir()
    for paradigm, n in (("simple_agrmt", 7), ("vp_coord", 5), ("subj_rel", 9)):
        (folder / f"{paradigm}.txt").write_text(
            "".join(f"True\tle chien{i} dort\nFalse\tle chien{i} dorment\n" for i in range(n)))
    spec = {"kind": "clams", "path": "clams", "seed": 1, "language": "fr"}
    assert suite_words_of("c", spec, tmp_path) == (7 + 5 + 9) * 2 * 5  # the whole suite: 210 words
    assert suite_words_of("c", {**spec, "pairs_per_paradigm": 6}, tmp_path) == (6 + 5 + 6) * 2 * 5
    assert suite_words_of("c", {**spec, "pairs_per_paradigm": 6, "paradigms": ["vp_coord"]}, tmp_path) == 5 * 2 * 5
