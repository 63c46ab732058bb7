"""Guardrails fire on planted cases and stay silent on healthy ones.

Gold values are worked out by hand in each test from the planted numbers, never read back from the code.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from povstim.analysis.guardrails import checks as G
from povstim.cli import main
from povstim.settings import build

SETTINGS = build(G.GuardrailSettings, "guardrails", {})  # the schema's defaults


def model_dir(root: Path, arch: str, condition: str, size: str, seed: int, *, steps: int, best: int,
              dev: list[tuple[int, float]], stop: str = "max_steps", tokens: int | None = None,
              lr=None) -> Path:
    d = root / "models" / arch / condition / size / f"seed{seed}"
    d.mkdir(parents=True)
    summary = {"best_step": best, "steps": steps, "stop_reason": stop, "seed": seed,
               "model": {"arch": arch, "condition": condition, "size": size, "seed": seed}}
    if tokens is not None:
        summary["tokens_seen"] = tokens
    (d / "train_summary.json").write_text(json.dumps(summary))
    lines = []
    for step in range(10, steps + 1, 10):
        loss = dict(dev).get(step)
        entry = {"step": step, "loss": 3.0, "dev_loss": loss}
        if lr is not None:  # the lr of the update that ended at this step (train_log.jsonl's "lr")
            entry["lr"] = lr(step - 1)
        lines.append(json.dumps(entry))
    (d / "train_log.jsonl").write_text("\n".join(lines) + "\n")
    return d


STILL_FALLING = [(50, 3.5), (100, 3.0), (150, 2.8), (200, 2.7)]
LEVELLED_OFF = [(50, 3.5), (100, 2.9), (150, 2.701), (200, 2.700)]


def test_undertrained_fires_when_dev_loss_still_falls_at_the_last_step(tmp_path):
    run = G.read_run(model_dir(tmp_path, "gpt2", "baby", "50k", 1, steps=200, best=200, dev=STILL_FALLING))
    findings = G.check_undertrained([run], SETTINGS)
    assert len(findings) == 1
    # last 20% of 200 steps starts after step 160: the eval at 150 (2.8) -> 2.7 at 200 is a 3.57% fall
    assert findings[0].data["gain"] == pytest.approx((2.8 - 2.7) / 2.8, abs=1e-4)
    assert "gpt2/baby/50k seed 1" == findings[0].scope


def test_undertrained_is_silent_when_levelled_off_or_early_stopped(tmp_path):
    flat = G.read_run(model_dir(tmp_path, "gpt2", "baby", "50k", 1, steps=200, best=200, dev=LEVELLED_OFF))
    stopped = G.read_run(model_dir(tmp_path, "gpt2", "baby", "50k", 2, steps=200, best=150,
                                   dev=STILL_FALLING[:3] + [(200, 2.9)], stop="early_stopping"))
    assert G.check_undertrained([flat, stopped], SETTINGS) == []


def test_equal_tokens_fires_when_all_sizes_saw_the_same_tokens(tmp_path):
    runs = [G.read_run(model_dir(tmp_path, "gpt2", "baby", size, 1, steps=200, best=150, dev=LEVELLED_OFF,
                                 tokens=204_800)) for size in ("50k", "150k")]
    (f,) = G.check_equal_tokens(runs, SETTINGS)
    assert f.scope == "gpt2/baby" and f.data["per_size"] == {"50k": 204_800, "150k": 204_800}


def test_equal_tokens_silent_when_larger_sizes_train_longer(tmp_path):
    runs = [G.read_run(model_dir(tmp_path, "gpt2", "baby", size, 1, steps=s, best=s, dev=LEVELLED_OFF, tokens=t))
            for size, s, t in (("50k", 200, 204_800), ("150k", 600, 614_400))]
    assert G.check_equal_tokens(runs, SETTINGS) == []


def _binding_items(model: dict, picks) -> tuple[pd.DataFrame, list[dict]]:
    """20 items whose correct word is 'herself' and 20 whose correct word is 'himself'; ``picks(good)`` is
    the word the model prefers for an item."""
    pairs, rows = [], []
    for i in range(40):
        good, bad = ("herself", "himself") if i < 20 else ("himself", "herself")
        pairs.append({"suite": "posh", "paradigm": "principle_a_command", "item_id": f"i{i}",
                      "good": f"The girl said that Sam's mother saw {good}.",
                      "bad": f"The girl said that Sam's mother saw {bad}."})
        rows.append({**model, "suite": "posh", "paradigm": "principle_a_command", "item_id": f"i{i}",
                     "correct": picks(i, good) == good})
    return pd.DataFrame(rows), pairs


MODEL = {"arch": "gpt2", "condition": "baby", "size": "50k", "seed": 1}


def test_constant_reflexive_preference_fires_even_at_exactly_fifty_percent():
    items, pairs = _binding_items(MODEL, lambda i, good: "herself")  # always 'herself'
    assert items["correct"].mean() == 0.5  # looks like chance
    (f,) = G.check_lexical_preference(items, pairs, SETTINGS)
    assert f.scope == "posh/principle_a_command"
    assert "100% correct when 'herself' is right and 0% when 'himself'" in f.detail
    assert f.data["favourite"] == {"herself": 1}


def test_lexical_check_silent_when_the_model_follows_the_structure():
    # right on 16 of each 20 (80%) whichever word is correct: no word preference
    items, pairs = _binding_items(MODEL, lambda i, good: good if i % 20 < 16 else ("herself" if good == "himself" else "himself"))
    assert G.check_lexical_preference(items, pairs, SETTINGS) == []


def test_movement_pairs_have_no_contrasting_word():
    pairs = [{"suite": "s", "paradigm": "qf", "item_id": "0", "good": "Is the boy who is happy smiling?",
              "bad": "Is the boy who happy is smiling?"}]
    assert G.contrast_words(pairs).empty


CHISQ = pd.DataFrame([
    {"suite": "posh", "arch": "gpt2", "condition": "wiki", "size": "50k", "level": "paradigm",
     "category": "Wanna", "paradigm": "wanna", "accuracy_mean": 0.12, "p_adj": 1e-20},
    {"suite": "posh", "arch": "gpt2", "condition": "baby", "size": "50k", "level": "paradigm",
     "category": "Island", "paradigm": "island_wh", "accuracy_mean": 0.93, "p_adj": 1e-20},
    {"suite": "posh", "arch": "gpt2", "condition": "baby", "size": "50k", "level": "paradigm",
     "category": "Binding", "paradigm": "principle_a_command", "accuracy_mean": 0.45, "p_adj": 0.4},
])


def test_below_chance_lists_only_significant_results_below_half():
    (f,) = G.check_below_chance(CHISQ, SETTINGS)
    assert f.scope == "posh/wanna" and "BELOW chance" in f.detail and f.data["accuracy"] == 0.12


def test_below_chance_uses_the_tables_direction_column_when_present():
    marked = CHISQ.assign(direction=["none", "below", "none"])  # the tables' own verdict wins
    (f,) = G.check_below_chance(marked, SETTINGS)
    assert f.scope == "posh/island_wh"


def test_cli_writes_json_csv_html_and_all_pass_on_a_healthy_run(tmp_path, caplog):
    runs = [model_dir(tmp_path, "gpt2", "baby", size, 1, steps=s, best=s - 50, dev=LEVELLED_OFF + [(s, 2.71)],
                      stop="early_stopping", tokens=t)
            for size, s, t in (("50k", 250, 256_000), ("150k", 600, 614_400))]
    items, pairs = _binding_items(MODEL, lambda i, good: good if i % 20 < 16 else "x")
    items.assign(final=True).to_parquet(tmp_path / "items.parquet")
    suite = tmp_path / "bench" / "posh"
    suite.mkdir(parents=True)
    (suite / "principle_a_command.jsonl").write_text("".join(
        json.dumps({**p, "category": "Binding"}) + "\n" for p in pairs))
    CHISQ.iloc[1:].to_csv(tmp_path / "chisq.csv", index=False)
    out = tmp_path / "g"
    code = main(["guardrails", "--items", str(tmp_path / "items.parquet"), "--chisq", str(tmp_path / "chisq.csv"),
                 "--benchmarks", str(suite), "--models", *map(str, runs), "--out-dir", str(out)])
    assert code == 0
    result = json.loads((out / "guardrails.json").read_text())
    assert result["fired"] == [] and result["n_models"] == 2
    assert "All 9 guardrails pass" in (out / "guardrails.html").read_text()
    assert (out / "guardrails.csv").read_text().strip() == "check,scope,detail,advice"


def test_cli_fires_on_the_planted_faults_and_logs_them(tmp_path, caplog):
    runs = [model_dir(tmp_path, "gpt2", "baby", size, 1, steps=200, best=200, dev=STILL_FALLING, tokens=204_800)
            for size in ("50k", "150k")]
    items, pairs = _binding_items(MODEL, lambda i, good: "herself")
    items.to_parquet(tmp_path / "items.parquet")
    suite = tmp_path / "posh"
    suite.mkdir()
    (suite / "principle_a_command.jsonl").write_text("".join(
        json.dumps({**p, "category": "Binding"}) + "\n" for p in pairs))
    CHISQ.to_csv(tmp_path / "chisq.csv", index=False)
    out = tmp_path / "g"
    assert main(["guardrails", "--items", str(tmp_path / "items.parquet"), "--chisq", str(tmp_path / "chisq.csv"),
                 "--benchmarks", str(suite), "--models", *map(str, runs), "--out-dir", str(out)]) == 0
    result = json.loads((out / "guardrails.json").read_text())
    assert result["fired"] == ["undertrained", "equal_tokens", "lexical_preference", "below_chance"]
    assert len(result["checks"]["undertrained"]["findings"]) == 2
    assert "GUARDRAIL lexical_preference: posh/principle_a_command" in caplog.text
    html = (out / "guardrails.html").read_text()
    assert "4 of 9 guardrails fired" in html


def _manifest(solved: list[dict]) -> dict:
    # the shape benchmarks.build writes: params.baseline is benchmarks.audit.unigram_report's
    return {"suite": "posh", "params": {"baseline": {"kind": "unigram", "threshold": 0.9, "solved": solved}}}


def test_baseline_solves_fires_on_a_planted_manifest_and_on_baseline_scores():
    corpus = "results/x/corpus/baby/50k/train.txt"
    manifest = _manifest([
        {"corpus": corpus, "level": "paradigm", "name": "island_wh", "accuracy": 1.0},
        {"corpus": corpus, "level": "template", "name": "wh_whether", "accuracy": 1.0},  # templates: not listed
    ])
    # a unigram baseline scored like a model: 19 of 20 right on wanna, 10 of 20 on binding
    rows = [{"arch": "unigram", "condition": "baby", "size": "50k", "seed": 0, "suite": "posh", "final": True,
             "paradigm": par, "correct": i < k} for par, k in (("wanna", 19), ("binding", 10)) for i in range(20)]
    (m, s) = G.check_baseline_solves([manifest], pd.DataFrame(rows), SETTINGS)
    assert m.scope == "posh/island_wh" and "baby/50k scores 100.0%" in m.detail
    assert s.scope == "posh/wanna" and s.data["accuracy"] == 0.95 and "unigram baseline" in s.detail


def test_baseline_solves_silent_below_the_threshold():
    manifest = _manifest([{"corpus": "c/baby/50k/train.txt", "level": "paradigm", "name": "wanna", "accuracy": 0.85}])
    assert G.check_baseline_solves([manifest], pd.DataFrame(), SETTINGS) == []  # 0.85 < 0.9, the default
    strict = build(G.GuardrailSettings, "guardrails", {"baseline_solves": 0.8})
    assert len(G.check_baseline_solves([manifest], pd.DataFrame(), strict)) == 1


def test_cli_reads_the_suite_manifest(tmp_path):
    items, pairs = _binding_items(MODEL, lambda i, good: good)
    items.to_parquet(tmp_path / "items.parquet")
    suite = tmp_path / "posh"
    suite.mkdir()
    (suite / "principle_a_command.jsonl").write_text("".join(
        json.dumps({**p, "category": "Binding"}) + "\n" for p in pairs))
    (suite / "manifest.json").write_text(json.dumps(_manifest(
        [{"corpus": "r/corpus/wiki/50k/train.txt", "level": "paradigm", "name": "island_wh", "accuracy": 0.97}])))
    out = tmp_path / "g"
    assert main(["guardrails", "--items", str(tmp_path / "items.parquet"), "--benchmarks", str(suite),
                 "--out-dir", str(out)]) == 0
    result = json.loads((out / "guardrails.json").read_text())
    assert result["fired"] == ["baseline_solves"]
    assert "wiki/50k scores 97.0%" in (out / "guardrails.html").read_text()


def test_items_of_other_task_kinds_have_no_contrasting_word():
    """A suite with multiple-choice and completion items (BaBIEs) beside minimal pairs: only the pairs count."""
    items = [{"suite": "babies-it", "paradigm": "lessico", "item_id": "1", "task": "multiple_choice",
              "stimulus": "Il gatto", "options": ["miagola", "abbaia"], "answer": "miagola"},
             {"suite": "babies-it", "paradigm": "frasi", "item_id": "2", "task": "completion",
              "prompt": "C'era una", "answers": ["volta"]},
             {"suite": "babies-it", "paradigm": "accordo", "item_id": "3", "task": "minimal_pair",
              "good": "La mela è rossa.", "bad": "La mela è rosso."}]
    assert G.contrast_words(items).to_dict("records") == [
        {"suite": "babies-it", "paradigm": "accordo", "item_id": "3", "word": "rossa", "other": "rosso",
         "contrast": "rossa|rosso"}]


# ---- "still learning" = falling beyond its noise; lexical preference within one word pair ----

def _curve(steps: int, every: int, loss) -> list[tuple[int, float]]:
    return [(step, loss(step)) for step in range(every, steps + 1, every)]


def test_slow_steady_decline_fires_below_the_old_relative_threshold(tmp_path):
    # 2000 steps, evaluated every 50: the last 20% (after step 1600) holds 8 evaluations plus the one at
    # 1600. The loss falls linearly 3.000 -> 2.985 over those 400 steps: 0.5%, below the 1% of the old rule,
    # with +-0.0005 of alternating noise. Slope by hand: -0.015/400 = -3.75e-5 per step (the alternating
    # noise is nearly orthogonal to the line); its residual SD ~0.0005 gives a standard error ~1.6e-6, so
    # the upper bound (t_0.95,7 = 1.895) is ~-3.4e-5 < 0: still learning.
    def loss(step):
        base = 3.0 if step <= 1600 else 3.0 - 0.015 * (step - 1600) / 400
        return base + (0.0005 if (step // 50) % 2 else -0.0005)
    dev = _curve(2000, 50, loss)
    run = G.read_run(model_dir(tmp_path, "gpt2", "baby", "50k", 1, steps=2000, best=2000, dev=dev))
    (f,) = G.check_undertrained([run], SETTINGS)
    assert f.data["test"] == "slope" and f.data["evaluations"] == 9
    assert f.data["slope_per_step"] == pytest.approx(-3.75e-5, rel=0.1)
    assert f.data["slope_upper"] < 0
    # the relative fall is what the old rule measured: steps 1600 and 2000 both carry -0.0005 of noise,
    # (2.9995 - 2.9845) / 2.9995 = 0.50%: it would not fire
    assert f.data["gain"] == pytest.approx(0.015 / 2.9995, abs=1e-4)
    assert f.data["gain"] < SETTINGS.still_learning


def test_noisy_plateau_does_not_fire_even_when_the_last_step_is_best(tmp_path):
    # a plateau at 2.70 with +-0.02 of noise; the last evaluation happens to be the lowest (2.66), so the
    # relative fall from the window's start (2.72 -> 2.66 = 2.2%) is above the old 1%: the old rule fired.
    window = [2.72, 2.68, 2.71, 2.69, 2.72, 2.68, 2.71, 2.69, 2.66]  # steps 1600, 1650, ..., 2000
    dev = [(s, 2.70) for s in range(50, 1600, 50)] + list(zip(range(1600, 2001, 50), window))
    run = G.read_run(model_dir(tmp_path, "gpt2", "baby", "50k", 1, steps=2000, best=2000, dev=dev))
    assert G.still_learning(run, SETTINGS.window) == pytest.approx((2.72 - 2.66) / 2.72)
    # by hand: x = 0..8 (x 50 steps), y mean 2.6956; Sxy = -0.37 -> slope -0.37/60 per 50 steps
    # = -1.23e-4 per step; SSR ~0.0039, se = sqrt(0.0039 / 7 / 150000) = 6.1e-5; upper = -1.23e-4 +
    # 1.895 x 6.1e-5 = -7e-6 ... close to 0, so check the fit itself before the verdict
    # by hand, steps x = 1600 + 50 k (k = 0..8): Sxx = 50^2 x 60 = 150,000; y mean 2.69556;
    # Sxy = 50 x sum((k - 4)(y - mean)) = 50 x -0.22 = -11.0 -> slope -11 / 150,000 = -7.33e-5 per step;
    # residual SS 0.0026156 -> se = sqrt(0.0026156 / 7 / 150,000) = 4.99e-5; t_0.95,7 = 1.8946:
    # upper bound -7.33e-5 + 1.8946 x 4.99e-5 = +2.12e-5 >= 0 -> the slope could be 0: a plateau
    slope, upper = G.loss_slope(G.window_points(run, SETTINGS.window), SETTINGS.confidence)
    assert slope == pytest.approx(-11 / 150_000, rel=1e-6)
    assert upper == pytest.approx(2.12e-5, abs=0.01e-5)
    assert G.check_undertrained([run], SETTINGS) == []


def test_loss_slope_by_hand():
    # y = 3 - 0.001 x exactly: slope -0.001, no residual, the bound is the slope itself
    slope, upper = G.loss_slope([(0, 3.0), (100, 2.9), (200, 2.8)], 0.95)
    assert slope == pytest.approx(-0.001) and upper == pytest.approx(-0.001)
    # (0, 1), (1, 0), (2, 1): slope 0, residuals 1/3, -2/3, 1/3 -> SSR 2/3, se = sqrt(2/3 / 1 / 2) = 0.577;
    # t_0.95,1 = 6.314: upper = 3.645
    slope, upper = G.loss_slope([(0, 1.0), (1, 0.0), (2, 1.0)], 0.95)
    assert slope == pytest.approx(0.0, abs=1e-12) and upper == pytest.approx(6.3138 * (1 / 3) ** 0.5, rel=1e-3)
    assert G.loss_slope([(0, 1.0), (1, 0.0)], 0.95) is None


def test_lexical_check_does_not_compare_words_of_different_pairs():
    # BLiMP/Zorro style: every pair has its own words. 20 pairs good 'boycotting' / bad 'boycotted' the
    # model gets right, 20 pairs good 'biked' / bad 'biking' it gets wrong. The old check split accuracy by
    # the good word alone (boycotting 100%, biked 0%) and fired; no word pair here comes in both orders,
    # so nothing is compared.
    pairs, rows = [], []
    for i in range(40):
        good, bad = ("boycotting", "boycotted") if i < 20 else ("biked", "biking")
        pairs.append({"suite": "blimp", "paradigm": "p", "item_id": str(i),
                      "good": f"The man was {good} it.", "bad": f"The man was {bad} it."})
        rows.append({**MODEL, "suite": "blimp", "paradigm": "p", "item_id": str(i), "correct": i < 20})
    words = G.contrast_words(pairs)
    assert set(words["contrast"]) == {"boycotted|boycotting", "biked|biking"}
    assert G.check_lexical_preference(pd.DataFrame(rows), pairs, SETTINGS) == []


def test_lexical_check_fires_within_one_pair_among_others():
    # herself/himself in both orders (20 each: always 'herself' -> 100% / 0%), plus 20 unrelated pairs
    # ('that'/'whether', one order only) that must not enter the comparison
    items, pairs = _binding_items(MODEL, lambda i, good: "herself")
    extra_pairs = [{"suite": "posh", "paradigm": "principle_a_command", "item_id": f"w{i}",
                    "good": "I know that he left.", "bad": "I know whether he left."} for i in range(20)]
    extra = pd.DataFrame([{**MODEL, "suite": "posh", "paradigm": "principle_a_command", "item_id": f"w{i}",
                           "correct": True} for i in range(20)])
    (f,) = G.check_lexical_preference(pd.concat([items, extra]), pairs + extra_pairs, SETTINGS)
    assert "100% correct when 'herself' is right and 0% when 'himself'" in f.detail


def _condition(root: Path, condition: str, size: str, stats: dict) -> Path:
    d = root / condition / size
    d.mkdir(parents=True)
    (d / "condition.json").write_text(json.dumps(stats))
    return d / "condition.json"


def test_reinsert_shortfall_fires_below_the_share_of_the_configured_rate(tmp_path):
    # BABY at 150k: 0.002 configured, 6 targeted sentences of 86 needed -> measured 6/21500 = 0.00028,
    # 14% of the rate (< 80%); binding 0.0007 measured 0.00065 = 93%: fine. BABY-F has no reinsert.
    short = _condition(tmp_path, "baby", "150k", {
        "reinsert_config": {"question_formation": 0.002, "binding": 0.0007},
        "dpe_rate_targeted": {"question_formation": 6 / 21500, "binding": 0.00065},
        "reinsert_shortfall": {"question_formation": {"needed": 86, "available": 6}}})
    babyf = _condition(tmp_path, "baby-f", "150k", {"reinsert_config": {}, "dpe_rate_targeted": {}})
    conds = [G.read_condition(p) for p in (short, babyf)]
    (f,) = G.check_reinsert_shortfall(conds, SETTINGS)
    assert f.scope == "baby/150k/question_formation"
    assert f.data == {"phenomenon": "question_formation", "configured": 0.002, "measured": round(6 / 21500, 6),
                      "needed": 86, "available": 6}
    assert "14% of the configured 0.002" in f.detail
    # at a share of 0.1 the 14% passes
    assert G.check_reinsert_shortfall(conds, build(G.GuardrailSettings, "guardrails", {"reinsert_share": 0.1})) == []


def test_cli_reads_condition_stats(tmp_path):
    items, pairs = _binding_items(MODEL, lambda i, good: good)
    items.to_parquet(tmp_path / "items.parquet")
    cond = _condition(tmp_path, "baby", "50k", {"reinsert_config": {"binding": 0.001},
                                                 "dpe_rate_targeted": {"binding": 0.0}})
    out = tmp_path / "g"
    assert main(["guardrails", "--items", str(tmp_path / "items.parquet"), "--conditions", str(cond),
                 str(tmp_path / "missing" / "condition.json"), "--conditions-page", str(tmp_path / "c.html"),
                 "--out-dir", str(out)]) == 0
    result = json.loads((out / "guardrails.json").read_text())
    assert result["fired"] == ["reinsert_shortfall"]
    assert result["settings"]["reinsert_share"] == 0.8
    # the report's conditions table: one row (baby 50k), binding configured 0.001, measured targeted 0.00000
    page = (tmp_path / "c.html").read_text()
    assert page.count("<tr>") == 2 and "<td>0.001</td>" in page and "<td>0.00000</td>" in page


def _upper_by_scipy(points, confidence=0.95):
    """The slope and its one-sided upper bound from scipy's own regression (independent of loss_slope)."""
    from scipy import stats
    fit = stats.linregress([x for x, _ in points], [y for _, y in points])
    return fit.slope, fit.slope + stats.t.ppf(confidence, len(points) - 2) * fit.stderr


def test_steady_decline_whose_final_point_ticks_up_still_fires(tmp_path):
    # Replayed: the final evaluation (lr near 0) was 0.0002 above the best, so the best step was not
    # the last one and the old check skipped the run although its dev loss was still falling.
    # 2000 steps, every 50; steps 1600 + 50k (k = 0..7) fall linearly 3.000 - 0.001875 k, and the last one
    # (k = 8) is y_7 + 0.0002 = 2.987075, i.e. 0.002075 above the line's 2.985. By hand, on k: the line's
    # slope is -0.001875 per 50 steps; the bump adds 0.002075 x (8 - 4) / Sxx (Sxx = 60) = 1.3833e-4:
    # -0.00173667 per 50 steps = -3.4733e-5 per step.
    dev = [(s, 3.0) for s in range(50, 1600, 50)] + [(1600 + 50 * k, 3.0 - 0.001875 * k) for k in range(8)]
    dev.append((2000, dev[-1][1] + 0.0002))
    run = G.read_run(model_dir(tmp_path, "gpt2", "baby-f", "30k", 2, steps=2000, best=1950, dev=dev))
    points = G.window_points(run, SETTINGS.window)
    assert len(points) == 9
    slope, upper = G.loss_slope(points, SETTINGS.confidence)
    assert slope == pytest.approx(-0.00173667 / 50, rel=1e-4)
    ref_slope, ref_upper = _upper_by_scipy(points)
    assert slope == pytest.approx(ref_slope, rel=1e-9) and upper == pytest.approx(ref_upper, rel=1e-9)
    assert upper < 0
    (f,) = G.check_undertrained([run], SETTINGS)
    assert f.data["test"] == "slope" and f.data["best_step"] == 1950
    assert "best step 1950 of 2000" in f.detail and "+0.0002 above the best" in f.detail


def test_replay_curve_with_few_steps_fires(tmp_path):
    # the replay's shape near its own scale (184 steps; model_dir logs every 10 steps, so 190 here): dev
    # every 20 steps and at the end; the window (after step 152) holds 160, 180, 190 and is led by 140:
    # 3.634, 3.608, 3.5966, 3.5968 (best at 180, the final one 0.0002 above it).
    dev = [(s, 3.9 - 0.002 * s) for s in range(20, 140, 20)] + [(140, 3.634), (160, 3.608), (180, 3.5966),
                                                                  (190, 3.5968)]
    run = G.read_run(model_dir(tmp_path, "gpt2-tiny", "baby", "30k", 2, steps=190, best=180, dev=dev))
    points = G.window_points(run, SETTINGS.window)
    assert [p[0] for p in points] == [140, 160, 180, 190]
    ref_slope, ref_upper = _upper_by_scipy(points)
    assert ref_upper < 0  # scipy says the fall is beyond its noise
    (f,) = G.check_undertrained([run], SETTINGS)
    assert f.data["slope_per_step"] == pytest.approx(ref_slope, rel=1e-3)
    assert f.data["slope_upper"] == pytest.approx(ref_upper, rel=1e-3)


def test_noisy_plateau_with_an_earlier_best_or_early_stop_passes(tmp_path):
    # a plateau at 2.70 +- 0.01 whose best (2.69) comes before the end; once trained to max_steps and once
    # ended by early stopping. Slope over k = 0..8 of the window by scipy: its upper bound is above 0.
    window = [2.70, 2.71, 2.69, 2.70, 2.71, 2.69, 2.70, 2.71, 2.70]
    dev = [(s, 2.75) for s in range(50, 1600, 50)] + list(zip(range(1600, 2001, 50), window))
    plateau = G.read_run(model_dir(tmp_path, "gpt2", "baby", "30k", 1, steps=2000, best=1700, dev=dev))
    stopped = G.read_run(model_dir(tmp_path, "gpt2", "baby", "30k", 2, steps=2000, best=1700, dev=dev,
                                   stop="early_stopping"))
    assert _upper_by_scipy(G.window_points(plateau, SETTINGS.window))[1] > 0
    assert G.check_undertrained([plateau, stopped], SETTINGS) == []


# ---- curves flattened by the lr decay ------------------------------------------------------------
# 2000 steps of a linear decay from 1e-3 (no warmup), logged every 10 steps, evaluated every 50. Update u has
# lr 1e-3 x (2000 - u) / 2000, so the cumulative lr after s updates is, by hand, 1e-3 x (s - s(s - 1)/4000).

def _linear_lr(u):
    return 1e-3 * (2000 - u) / 2000


def _cum_lr(s):
    return 1e-3 * (s - s * (s - 1) / 4000)


NOISE = 0.03  # alternating +-: nearly orthogonal to a line, so it widens the slope's interval, not its value


def _noisy(points):
    return [(step, loss + (NOISE if (step // 50) % 2 else -NOISE)) for step, loss in points]


def test_curve_flattened_by_lr_decay_fires(tmp_path):
    import math

    from scipy import stats as st

    # the loss falls with the cumulative lr C as 2.5 + 1.5 exp(-C): still steep in C at the end (C = 1.0), but
    # over the last 20% of the steps (1600-2000) C grows only 0.96 -> 1.0, so the loss there falls 0.022 in
    # steps, within the +-0.03 noise
    dev = _noisy([(s, 2.5 + 1.5 * math.exp(-_cum_lr(s) / 1e-3 / 1000)) for s in range(50, 2001, 50)])
    run = G.read_run(model_dir(tmp_path, "gpt2", "wiki", "60k", 1, steps=2000, best=2000, dev=dev, lr=_linear_lr))
    # the step test alone passes it (what the 60k runs did): its upper bound is above 0
    assert G._undertrained(run, SETTINGS) is None
    (f,) = G.check_undertrained([run], SETTINGS)
    assert f.data["test"] == "lr_decay" and f.data["final_lr_share"] == pytest.approx(1 / 2000, rel=1e-6)
    # by hand: the last 20% of C is C > 0.8, i.e. after step 2000 - sqrt(2000^2 - 4000 x 800) ~ 1106, led by 1100
    xs = [(_cum_lr(s), loss) for s, loss in dev if s >= 1100]
    ref = st.linregress([x for x, _ in xs], [y for _, y in xs])
    assert f.data["evaluations"] == len(xs) == 19
    assert f.data["slope_per_lr"] == pytest.approx(ref.slope, rel=2e-3)  # trapezoid vs exact sum of the lrs
    upper = ref.slope + st.t.ppf(0.95, len(xs) - 2) * ref.stderr
    assert f.data["slope_upper"] == pytest.approx(upper, rel=5e-3) and upper < 0
    assert "0.1% of its peak" in f.detail


def test_plateau_at_full_lr_passes(tmp_path):
    import math

    # constant lr 1e-3 (no decay): the loss reaches its floor 2.5 by mid-training and stays there, +-0.03
    dev = _noisy([(s, 2.5 + 1.5 * math.exp(-s / 100)) for s in range(50, 2001, 50)])
    run = G.read_run(model_dir(tmp_path, "gpt2", "wiki", "60k", 1, steps=2000, best=1950, dev=dev,
                               lr=lambda u: 1e-3))
    assert G.decayed_points(run, SETTINGS) is None  # the lr ended at its peak: nothing to correct for
    assert G.check_undertrained([run], SETTINGS) == []


def test_plateau_reached_before_the_decay_passes(tmp_path):
    import math

    # the same linear decay, but the loss reached its floor early (time constant 0.05 of the final C of 1.0, at
    # high lr): flat on both clocks
    dev = _noisy([(s, 2.5 + 1.5 * math.exp(-_cum_lr(s) / 0.05e-3 / 1000)) for s in range(50, 2001, 50)])
    run = G.read_run(model_dir(tmp_path, "gpt2", "wiki", "60k", 2, steps=2000, best=1950, dev=dev, lr=_linear_lr))
    assert G.decayed_points(run, SETTINGS) is not None  # the test looked, and found a plateau
    assert G.check_undertrained([run], SETTINGS) == []


def test_a_still_falling_curve_fires_whatever_its_label(tmp_path):
    import math

    # the falling curve of the linear-decay test, labelled "plateau" (and once "early_stopping") with no decay
    # recorded: the label is a claim the curve contradicts, so the check fires and says so
    dev = _noisy([(s, 2.5 + 1.5 * math.exp(-_cum_lr(s) / 1e-3 / 1000)) for s in range(50, 2001, 50)])
    runs = [G.read_run(model_dir(tmp_path, "gpt2", "wiki", "60k", seed, steps=2000, best=2000, dev=dev,
                                 lr=_linear_lr, stop=stop)) for seed, stop in ((3, "plateau"), (4, "early_stopping"))]
    found = G.check_undertrained(runs, SETTINGS)
    assert [f.scope for f in found] == ["gpt2/wiki/60k seed 3", "gpt2/wiki/60k seed 4"]
    assert "labelled 'plateau' by its patience" in found[0].detail
    assert "labelled 'early_stopping' by its patience" in found[1].detail


def _wsd_dir(tmp_path, seed, dev, decay_start, steps):
    d = model_dir(tmp_path, "gpt2", "wiki", "60k", seed, steps=steps, best=steps, dev=dev, stop="plateau")
    summary = json.loads((d / "train_summary.json").read_text())
    (d / "train_summary.json").write_text(json.dumps({**summary, "schedule": "wsd", "decay_start": decay_start}))
    return d


def test_wsd_plateau_found_at_full_lr_passes_and_a_false_one_fires(tmp_path):
    # wsd: flat at 2.70 (+-0.01) from step 400 to the plateau at 1000, then the decay lowers it to 2.50 by 1200:
    # the fall comes from the decay, the curve at full lr was flat -> no finding
    flat = [(s, 2.7 + (0.3 if s < 400 else 0.0) + (0.01 if (s // 50) % 2 else -0.01)) for s in range(50, 1001, 50)]
    decay = [(s, 2.7 - 0.2 * (s - 1000) / 200) for s in range(1050, 1201, 50)]
    ok = G.read_run(_wsd_dir(tmp_path, 1, flat + decay, 1000, 1200))
    assert ok.decay_start == 1000 and ok.at_full_lr().steps == 1000
    assert G.check_undertrained([ok], SETTINGS) == []
    # the same schedule, but at full lr the loss fell 0.002 per 50 steps to step 1000 (patience met by one
    # noisy evaluation): over the last 20% of the full-lr part (after step 800: 800..1000, 5 evaluations) the
    # slope is -4e-5 per step with no noise, upper bound < 0 -> undertrained, before the decay
    falling = [(s, 3.0 - 0.00004 * s) for s in range(50, 1001, 50)]
    bad = G.read_run(_wsd_dir(tmp_path, 2, falling + decay, 1000, 1200))
    (f,) = G.check_undertrained([bad], SETTINGS)
    assert "at full lr, before the decay its 'plateau' began at step 1000" in f.detail
    assert f.data["steps"] == 1000 and f.data["slope_per_step"] == pytest.approx(-4e-5, rel=1e-3)


def test_overfitting_fires_when_the_dev_loss_rose_after_its_best(tmp_path):
    # the 20k model: best step 200 of 440, dev loss 4.03 then 4.17 at the end (+3.47% > 2%)
    dev = [(100, 4.5), (200, 4.03), (300, 4.08), (400, 4.12), (440, 4.17)]
    over = G.read_run(model_dir(tmp_path, "gpt2", "baby-f", "20k", 1, steps=440, best=200, dev=dev, stop="plateau"))
    (f,) = G.check_overfitting([over], SETTINGS)
    assert f.data["rise"] == pytest.approx((4.17 - 4.03) / 4.03, abs=1e-4)
    assert "does not mean a plateau" in f.detail and f.data["best_step"] == 200
    # a noisy plateau whose end is 0.5% above its best does not
    flat = G.read_run(model_dir(tmp_path, "gpt2", "baby-f", "20k", 2, steps=440, best=300,
                                dev=[(100, 4.5), (200, 4.05), (300, 4.03), (440, 4.05)], stop="plateau"))
    assert G.check_overfitting([flat], SETTINGS) == []


def test_an_unconverged_fit_reaches_the_guardrails_page_and_the_end_of_run_summary(tmp_path):
    """A Bayesian fit whose diagnostics.json says converged: false (after its refit) is a finding on the Guardrails
    page, and so a line of the run's end-of-run summary (preflight/runs.guardrail_lines, Snakefile onsuccess)."""
    from povstim.preflight import runs as povstim_runs

    items, _ = _binding_items(MODEL, lambda i, good: good)
    items.assign(final=True).to_parquet(tmp_path / "items.parquet")
    bayes = tmp_path / "analysis" / "bayes"
    (bayes / "by" / "blimp" / "gpt2").mkdir(parents=True)
    bad = {"converged": False, "refitted": True, "suite": "posh", "formula": "category * source_filter + (1|run)",
           "problems": ["6 divergent transition(s) after tuning (raise target_accept or tune)"], "divergences": 6,
           "max_r_hat": 1.004, "min_ess_bulk": 640}
    (bayes / "three_level_diagnostics.json").write_text(json.dumps(bad))
    (bayes / "by" / "blimp" / "gpt2" / "diagnostics.json").write_text(json.dumps({**bad, "converged": True,
                                                                                  "problems": []}))
    out = tmp_path / "analysis" / "guardrails"
    assert main(["guardrails", "--items", str(tmp_path / "items.parquet"), "--bayes", str(bayes),
                 "--out-dir", str(out)]) == 0
    result = json.loads((out / "guardrails.json").read_text())
    assert result["fired"] == ["fit_convergence"]
    (finding,) = result["checks"]["fit_convergence"]["findings"]
    assert finding["scope"] == "bayes/three_level_diagnostics.json (posh)"
    assert "did not converge after one refit with stronger settings: 6 divergent" in finding["detail"]
    assert "fit_convergence" in (out / "guardrails.csv").read_text()
    assert "Bayesian fits that failed their convergence diagnostics" in (out / "guardrails.html").read_text()
    lines = povstim_runs.guardrail_lines(result, out / "guardrails.json")
    assert lines[0].startswith("povstim GUARDRAIL Bayesian fits that failed their convergence diagnostics: "
                               "bayes/three_level_diagnostics.json (posh): ")
    # without the folder (an analysis without Bayesian models) the check passes
    assert G.check_fit_convergence(G.read_fit_diagnostics(tmp_path / "none"), SETTINGS) == []
