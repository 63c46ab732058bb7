"""Guardrails fire on planted cases and stay silent on healthy ones (issue 12).

Gold values are worked out by hand in each test from the planted numbers, never read back from the code.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from povstim.analysis import guardrails as G
from povstim.cli import main
from povstim.settings import build

SETTINGS = build(G.GuardrailSettings, "guardrails", {})  # the schema's defaults


def model_dir(root: Path, arch: str, condition: str, size: str, seed: int, *, steps: int, best: int,
              dev: list[tuple[int, float]], stop: str = "max_steps", tokens: int | None = None) -> Path:
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
        lines.append(json.dumps({"step": step, "loss": 3.0, "dev_loss": loss}))
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
    assert "All 5 guardrails pass" in (out / "guardrails.html").read_text()
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
    assert "4 of 5 guardrails fired" in html


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
        {"suite": "babies-it", "paradigm": "accordo", "item_id": "3", "word": "rossa"}]
