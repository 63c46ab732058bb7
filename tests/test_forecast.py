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
    # the load is fixed here (the shared machine's would move between the calls); the test below varies it
    monkeypatch.setattr(F, "machine_load", lambda: {"load_1min": 0.4, "cores": 2})
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
    assert [e["key"] for e in json.loads((tmp_path / f"{first['key']}.json").read_text())["entries"]] == [first["key"]] * 2
    # the same CPU under a load not comparable to the one it was measured under (1.5 a core apart, > 0.5): measured
    # again and kept beside the idle one; back at the idle load, the idle measurement is the one reused
    idle = first["load"]
    monkeypatch.setattr(F, "machine_load", lambda: {"load_1min": idle["load_1min"] + 3.0, "cores": idle["cores"]})
    busy = _calibrate(tmp_path)
    assert not busy["cached"] and busy["load"]["load_1min"] == idle["load_1min"] + 3.0
    assert len(json.loads((tmp_path / f"{first['key']}.json").read_text())["entries"]) == 3
    monkeypatch.setattr(F, "machine_load", lambda: dict(idle))
    back = _calibrate(tmp_path)
    assert back["cached"] and back["load"] == idle


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
    tpw, _ = F.tokenizer_stats(lines + lines, dict(config["tokenizer"]), 8000)
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


# ---- the cache's CPU and load, the calibration's cost said first, refused sizes, fallbacks, the rule's range

def test_the_calibration_key_holds_the_cpu_model(monkeypatch):
    """Two CPUs of the same architecture (x86_64) and torch do not share a calibration."""
    arch, training = resolve(TINY_ARCH, TINY_TRAINING)
    monkeypatch.setattr(F, "cpu_model", lambda: "Intel(R) Xeon(R) Platinum 8480+")
    xeon = F.calibration_key(arch, training, 300, 1, "cpu")
    monkeypatch.setattr(F, "cpu_model", lambda: "AMD EPYC 9654 96-Core Processor")
    assert F.calibration_key(arch, training, 300, 1, "cpu") != xeon


def test_a_calibration_is_reused_only_under_a_comparable_load(tmp_path):
    """By hand: loads per core 11 / 2 = 5.5 and 0.3 / 2 = 0.15 are 5.35 apart (> LOAD_TOLERANCE 0.5): refused, with
    both loads named; 10.5 / 2 is 0.25 from 5.5: reused. An entry without a recorded load is not reused."""
    path = tmp_path / "k.json"
    path.write_text(json.dumps({"entries": [{"train_tokens_per_s": 2355.0, "load": {"load_1min": 11.0, "cores": 2}}]}))
    entry, why = F.cached_calibration(path, {"load_1min": 0.3, "cores": 2})
    assert entry is None and "load 11 on 2 core(s)" in why and "now load 0.3 on 2 core(s)" in why
    entry, _ = F.cached_calibration(path, {"load_1min": 10.5, "cores": 2})
    assert entry["train_tokens_per_s"] == 2355.0 and entry["cached"]
    # of two comparable entries, the nearer load's
    path.write_text(json.dumps({"entries": [{"v": "idle", "load": {"load_1min": 0.2, "cores": 2}},
                                            {"v": "half", "load": {"load_1min": 0.9, "cores": 2}}]}))
    assert F.cached_calibration(path, {"load_1min": 0.8, "cores": 2})[0]["v"] == "half"
    path.write_text(json.dumps({"entries": [{"train_tokens_per_s": 9618.0}]}))
    assert F.cached_calibration(path, {"load_1min": 0.3, "cores": 2})[0] is None


def test_the_calibration_says_what_it_will_cost_before_it_starts(tmp_path, monkeypatch, caplog):
    """The estimate is logged before the trainer is built (here the trainer fails at once: the line is there)."""
    import povstim.train.loop as loop

    monkeypatch.setattr(F, "calibration_estimate", lambda *a, **k: {"params": 7312, "cpu_s": 123.0, "flops": 1.0,
                                                                      "matmul_flops_per_s": 1})
    monkeypatch.setattr(F, "machine_load", lambda: {"load_1min": 3.0, "cores": 2})

    def refuse(*a, **k):
        raise RuntimeError("trainer started")

    monkeypatch.setattr(loop, "Trainer", refuse)
    with caplog.at_level("WARNING", logger="povstim.plan"), pytest.raises(RuntimeError, match="trainer started"):
        _calibrate(tmp_path)
    (line,) = [r.getMessage() for r in caplog.records if "calibrating tiny" in r.getMessage()]
    # by hand: (3.0 + 1) / 2 cores = 2x the CPU seconds of wall time at this load
    assert "about 123 CPU-s (~246 s of wall time at this load)" in line and "load 3 on 2 core(s)" in line


def test_the_calibration_estimate_by_hand(monkeypatch):
    """TINY_ARCH at vocabulary 300, context 16: wte 300 x 16 + wpe 16 x 16 + one block (ln 32, c_attn 16 x 48 + 48,
    attn proj 16 x 16 + 16, ln 32, fc 16 x 32 + 32, proj 32 x 16 + 16) + ln_f 32 = 7,312 parameters; FLOPs: 6 x P x
    two trainers' 40 x 4 x 16 tokens + 2 x P x (2 evaluations x 64 sentences x 12 + 296 pairs x 2 x 12)."""
    monkeypatch.setattr(F, "matmul_rate", lambda threads: 1e9)
    arch, training = resolve(TINY_ARCH, TINY_TRAINING)
    est = F.calibration_estimate(arch, training, 300)
    assert est["params"] == 7312 and est["params_how"] == "counted"
    flops = 6 * 7312 * 2 * (40 * 4 * 16) + 2 * 7312 * (2 * 64 * 12 + 296 * 2 * 12)
    assert est["flops"] == pytest.approx(flops)
    assert est["cpu_s"] == pytest.approx(F.CAL_FIXED_S + flops / (1e9 * F.CAL_EFFICIENCY), abs=0.05)


def _tiny_forecast_setup(monkeypatch, tmp_path, sizes=("8k", "16k")):
    import yaml

    from povstim import config as config_mod

    cal = {**CAL, "score_s_per_token": 1e-4, "score_pass_s": 0.1, "device": "cpu", "threads": 1}
    calls = []

    def calibrate(name, *a, **k):
        calls.append(name)
        return dict(cal)

    monkeypatch.setattr(F, "calibrate", calibrate)
    monkeypatch.setattr(F, "process_costs", lambda *a, **k: {"job_process_s": 0.5, "warm_server_s": 3.0,
                                                             "cold_job_s": 2.0})
    cfg = yaml.safe_load(TINY.read_text())
    cfg["sizes"] = list(sizes)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return config_mod.load(path), calls


def test_sizes_refused_as_too_large_are_not_forecast(monkeypatch, rule, tmp_path):
    config, calls = _tiny_forecast_setup(monkeypatch, tmp_path)
    lines = [f"the dog saw {w} cat ." for w in ("a", "the", "one", "my")] * 50
    counts = {s: SimpleNamespace(lines=lines, words=1200, sentences=200) for s in ("cds", "adult")}
    out = F.forecast(config, counts, REPO, 2, tmp_path, refused={("baby", "16k"), ("wiki", "16k")})
    assert out["jobs"] and not any("/16k/" in r["job"] for r in out["jobs"])
    assert any("/8k/" in r["job"] for r in out["jobs"])
    assert any("models not forecast: baby 16k, wiki 16k TOO LARGE" in n for n in out["notes"])
    # every size refused: nothing calibrated, nothing forecast, and the note says why
    calls.clear()
    none = F.forecast(config, counts, REPO, 2, tmp_path, refused={(c, z) for c in ("baby", "wiki") for z in ("8k", "16k")})
    assert calls == [] and none["jobs"] == [] and "TOO LARGE" in "\n".join(F.render(none))


def test_plan_passes_its_too_large_sizes_to_the_forecast(monkeypatch, tmp_path):
    """`povstim plan --forecast` on a size the source cannot fill: TOO LARGE above, and no job of it in the forecast."""
    from povstim.preflight.plan import make_plan

    seen = {}

    def forecast(config, counts, base, cores, cache, recalibrate=False, reused=None, refused=None):
        seen["refused"] = refused
        return {"jobs": [], "notes": []}

    monkeypatch.setattr(F, "forecast", forecast)
    import yaml

    from povstim import config as config_mod

    cfg = yaml.safe_load(TINY.read_text())
    cfg["sizes"] = ["8k", "900k"]  # the synthetic sources hold far fewer words than 900k
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    config = config_mod.load(path)
    plan = make_plan(config, REPO, filter_sample=0, forecast_cores=2, forecast_cache=tmp_path)
    too_large = {(r["corpus"], r["size"]) for r in plan["sizes"] if r["ok"] is False}
    assert too_large and all(z == "900k" for _, z in too_large)
    assert seen["refused"] == too_large


def test_every_fallback_says_what_it_assumed(monkeypatch, rule, tmp_path):
    config, _ = _tiny_forecast_setup(monkeypatch, tmp_path, sizes=("8k",))
    # a mixture with no text: no tokenizer to train (1.3 tokens a word) and no sentences to count (10 words each)
    counts = {s: SimpleNamespace(lines=[], words=0, sentences=0) for s in ("cds", "adult")}
    out = F.forecast(config, counts, REPO, 2, tmp_path)
    notes = "\n".join(out["notes"])
    assert "corpus baby 8k: no text to train a tokenizer on; assumed 1.3 tokens per word" in notes
    assert "corpus baby 8k: its sources hold no counted sentences; assumed 10 words a sentence" in notes
    assert all(r["train_tokens"] > 0 for r in out["jobs"] if r["kind"] == "train")
    assert "-> WARNING: corpus baby 8k: no text" in "\n".join(F.render(out))


def test_a_suite_whose_pairs_cannot_be_counted_says_it_is_counted_whole(tmp_path):
    folder = tmp_path / "clams"
    folder.mkdir()
    for paradigm, n in (("simple_agrmt", 7), ("vp_coord", 5)):
        (folder / f"{paradigm}.txt").write_text(
            "".join(f"True\tle chien{i} dort\nFalse\tle chien{i} dorment\n" for i in range(n)))
    notes = []
    # a paradigm the files lack: the benchmarks stage would fail on it, so its pairs cannot be counted
    spec = {"kind": "clams", "path": "clams", "seed": 1, "language": "fr", "paradigms": ["nope"]}
    assert F.suite_words_of("c", spec, tmp_path, notes) == (7 + 5) * 2 * 5  # by hand: the whole suite
    assert len(notes) == 1 and "benchmarks.c: the pairs the benchmarks stage keeps could not be counted" in notes[0]
    assert "every sentence of the suite (24 sentences" in notes[0]
    notes.clear()
    assert F.suite_words_of("c", {"kind": "clams", "path": "clams", "seed": 1, "language": "fr"}, tmp_path, notes) == 120
    assert notes == []  # counted exactly: nothing to say


def test_plan_states_the_plateau_rules_fitted_range():
    """PLATEAU_FIT as docs/own-data.md gives it (gpt2 2 x 128, lr 4e-3, batch 8 x 64, wsd, the embedded default's
    generated English, 10k-30k words): the embedded default itself is outside it in its arch (2 x 64 since
    2026-12-03); a config built to match it is inside; an LSTM at another lr, French text, 150k words is outside in
    each."""
    import yaml

    from povstim import plan as dag_plan

    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    models = dag_plan.models(cfg)
    assert F.plateau_coverage(cfg, models) == ["arch gpt2-tiny is 2 x 64"]
    cfg["archs"]["gpt2-tiny"].update(n_embd=128, n_inner=512)
    assert F.plateau_coverage(cfg, dag_plan.models(cfg)) == []
    cfg["archs"] = {"lstm": {"family": "lstm", "n_layer": 2, "n_embd": 128, "n_hidden": 256}}
    cfg["training"]["lr"] = 1e-3
    cfg["sizes"] = ["10k", "150k"]
    cfg["sources"]["cds"] = {"kind": "local", "format": "lines", "path": "cds_fr.txt", "language": "fr"}
    out = F.plateau_coverage(cfg, dag_plan.models(cfg))
    assert out == ["arch lstm is family lstm", "lstm's training.lr is 0.001", "language en, fr",
                   "text from local sources", "sizes 150,000 words"]
    text = "\n".join(F.render({"cores": 2, "calibrations": {}, "jobs": [{"job": "train x", "kind": "train",
                               "reaches_plateau": True, "expected_steps": 1, "expected_epochs": 1.0,
                               "budget_steps": 1, "seconds": 1.0}], "cpu": 1.0, "wall": 1.0, "notes": [],
                               "coverage": out}))
    assert "fitted on gpt2 2 x 128, lr 0.004, batch 8 x 64, schedule wsd, language en" in text
    assert "-> NOTE: this config is outside the plateau rule's fit: arch lstm is family lstm" in text


def test_the_no_plateau_advice_carries_the_rules_range_and_spread(monkeypatch, rule, tmp_path):
    """tests/configs/tiny.yaml (gpt2-nano at lr 1e-3, schedule linear, 12 steps) cannot reach the rule's plateau: the
    advice says the rule is an extrapolation for it, and with a measured spread (high 2.0) gives the epochs a plateau
    twice as late would need (the epochs by hand from the row's plateau steps, patience and batches per epoch)."""
    config, _ = _tiny_forecast_setup(monkeypatch, tmp_path, sizes=("8k",))
    lines = [f"the dog saw {w} cat ." for w in ("a", "the", "one", "my")] * 50
    counts = {s: SimpleNamespace(lines=lines, words=1200, sentences=200) for s in ("cds", "adult")}
    monkeypatch.setattr(F, "PLATEAU_SPREAD", None)
    out = F.forecast(config, counts, REPO, 2, tmp_path)
    (note,) = [n for n in out["notes"] if "cannot reach a dev-loss plateau" in n]
    assert "(the plateau rule is an extrapolation here: arch gpt2-nano is 1 x 32" in note
    assert "lr is 0.001" in note and "training.schedule is linear" in note
    row = next(r for r in out["jobs"] if r["kind"] == "train")
    need = math.ceil((row["plateau_steps"] + row["patience"]) * 1.1 / row["batches_per_epoch"]) + 1
    need_late = math.ceil((row["plateau_steps"] * 2.0 + row["patience"]) * 1.1 / row["batches_per_epoch"]) + 1
    assert f"set training.epochs to at least {need} (training.max_steps" in note
    monkeypatch.setattr(F, "PLATEAU_SPREAD", (0.5, 2.0))
    (late,) = [n for n in F.forecast(config, counts, REPO, 2, tmp_path)["notes"] if "cannot reach" in n]
    assert f"set training.epochs to at least {need} ({need_late} for a plateau as late as 2x the rule's" in late


def test_the_calibration_runs_at_the_vocabulary_the_corpus_reaches(monkeypatch, rule, tmp_path):
    """A corpus too small to fill tokenizer.vocab_size gives a smaller tokenizer, so a smaller embedding and output
    layer: the calibration is measured at the vocabulary the tokenize stage's BPE reaches on the corpus (the
    tokenizer itself trained here on the same lines), not at the configured one (an English CSV's training was
    forecast 7x high at 8,192)."""
    from povstim.tokenizer import bpe

    config, _ = _tiny_forecast_setup(monkeypatch, tmp_path, sizes=("8k",))
    seen = []
    monkeypatch.setattr(F, "calibrate", lambda name, arch, training, vocab, *a, **k: seen.append(vocab) or
                        {**CAL, "score_s_per_token": 1e-4, "score_pass_s": 0.1, "device": "cpu", "threads": 1})
    lines = [f"the dog saw {w} cat ." for w in ("a", "the", "one", "my")] * 50
    counts = {s: SimpleNamespace(lines=lines, words=1200, sentences=200) for s in ("cds", "adult")}
    F.forecast(config, counts, REPO, 2, tmp_path)
    reached = bpe.train(lines + lines, dict(config["tokenizer"])).get_vocab_size()
    assert seen == [reached] and reached < int(config["tokenizer"]["vocab_size"])
