"""Guardrails: the checks a reviewer would ask for before reading a results table.

Each check looks at what the run produced and reports *findings* -- never changes a result:

* ``undertrained``: a model that did not stop early whose dev loss was still falling when training
  stopped: over the last ``window`` of the steps (with the last evaluation at or before its start) the
  least-squares slope of the dev loss against the step is negative beyond its noise (its one-sided
  ``confidence`` upper bound is below 0), however small the fall -- a linear learning-rate decay
  flattens the tail, so a model falling 0.5% per window is still learning -- and whatever its best step
  (a final evaluation 0.0002 above the one before, at a learning rate near 0, does not make a falling
  curve flat). A window with fewer than ``min_evals`` evaluations cannot separate a decline from noise;
  there the best step must be the last one and the relative fall must exceed ``still_learning``. A curve
  flattened by the lr decay (the final lr below ``decayed_lr`` of its peak) is tested again against the
  cumulative lr: still falling per unit of lr over its last ``window`` fires too. A run that stopped early
  (or, schedule wsd, found its plateau at full lr) passes. Its scores describe a model in mid-training, not
  what the data teaches.
* ``equal_tokens``: the sizes of an arch x condition saw the same number of training tokens (equal
  steps x batch). Then "size" only changes how often each sentence repeats, not how much text the
  model learned from.
* ``lexical_preference``: in a substitution paradigm (the two sentences differ in one word, e.g.
  *herself*/*himself*), the model picks the same word whichever is grammatical: among the pairs that
  swap the same two words, its accuracy on those whose good word is A is ~100% and on those whose good
  word is B ~0% (spread at least ``lexical_spread``). Only the two orders of one word pair are compared:
  BLiMP/Zorro items with other words in every pair (*boycotting* in one, *biking* in another) are never
  compared across items. The paradigm's accuracy (often exactly 50%) then measures a lexical bias, not
  the structure.
* ``baseline_solves``: a corpus baseline solves the paradigm (accuracy at least ``baseline_solves``):
  the word-frequency baseline computed when the suite was generated (its ``manifest.json``) or a
  baseline scored like a model (``benchmarks.<suite>.baselines``). A model's accuracy there can come
  from word frequencies alone (e.g. *that* vs *whether*) and says little about structure.
* ``below_chance``: significantly *below* chance (the model reliably prefers the ungrammatical
  sentence). Stars in Tables 3/8 mark significance in either direction, so these are listed apart.
  The direction comes from chisq.csv's ``direction`` column when the tables provide one (hook for the
  tables' own marking), else from the accuracy and ``alpha``.
* ``reinsert_shortfall``: a condition with ``reinsert`` rates (BABY) whose measured rate of targeted
  (disambiguating) evidence is below ``reinsert_share`` of the configured rate (its condition.json):
  the corpus held too little evidence to put back, so BABY vs BABY-F compares less than the config says.
* ``size_label``: a condition x size whose actual words differ from its size label by more than
  ``size_label`` (a fraction; "290k" is the base corpus's budget, and the filter takes words out of
  BABY-F): the tables compare conditions by labels that do not say what the models read.

Outputs: ``guardrails.json`` (every check, fired or not, with its findings), ``guardrails.csv`` (one row
per finding) and ``guardrails.html`` (the report's Guardrails page); each finding is also logged as a
``GUARDRAIL`` warning.
"""

from __future__ import annotations

import html
import json
import logging
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd
from scipy import stats

from povstim.benchmarks.audit import solved_by_baselines
from povstim.io import PovstimError, atomic_write, parse_size, write_json
from povstim.analysis.tables.conditions_page import read_condition, reinsert_rows, size_gaps  # noqa: F401 (read_condition: guardrails_cli)
from povstim.analysis.guardrails.settings import GuardrailSettings

log = logging.getLogger("povstim.guardrails")

MODEL_KEYS = ("arch", "condition", "size", "seed")


@dataclass
class Finding:
    check: str
    scope: str  # what it is about: a model, an arch x condition, a paradigm of a model group
    detail: str
    advice: str
    data: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"check": self.check, "scope": self.scope, "detail": self.detail, "advice": self.advice, **self.data}


CHECKS = {
    "undertrained": "Models still learning when training stopped (dev loss still falling beyond its noise)",
    "overfitting": "Models whose dev loss rose after its best (the curve stopped improving because it overfit)",
    "equal_tokens": "Sizes trained on the same number of tokens",
    "lexical_preference": "Paradigms decided by a constant lexical preference",
    "baseline_solves": "Paradigms a corpus baseline solves without structure",
    "below_chance": "Results significantly below chance",
    "reinsert_shortfall": "Conditions with less reinserted evidence than configured",
    "size_label": "Conditions whose words differ from their size label",
    "fit_convergence": "Bayesian fits that failed their convergence diagnostics",
}


# ---- training runs ----------------------------------------------------------------------------------

@dataclass
class Run:
    """One trained model as the guardrails see it (from train_summary.json and train_log.jsonl)."""

    meta: dict
    steps: int
    best_step: int
    stop_reason: str
    dev: list[tuple[int, float]]  # (step, dev loss) of every evaluation
    tokens_seen: int | None = None
    lrs: list[tuple[int, float]] = field(default_factory=list)  # (step, lr) of every train_log line with one
    decay_start: int | None = None  # schedule wsd: the step its patience found the plateau and the lr decay began

    def at_full_lr(self) -> "Run":
        """The run up to ``decay_start``: the part of the curve its plateau was found on (the decay after it
        lowers the loss by design)."""
        dev = [p for p in self.dev if p[0] <= self.decay_start]
        best = min(dev, key=lambda p: p[1])[0] if dev else self.best_step
        return Run(meta=self.meta, steps=self.decay_start, best_step=best, stop_reason=self.stop_reason, dev=dev,
                   tokens_seen=self.tokens_seen, lrs=[p for p in self.lrs if p[0] <= self.decay_start])

    @property
    def label(self) -> str:
        return "/".join(str(self.meta.get(k, "?")) for k in ("arch", "condition", "size")) + f" seed {self.meta.get('seed', '?')}"


def read_run(model_dir: str | Path) -> Run:
    """A model folder written by ``povstim train``: its summary and dev-loss curve."""
    d = Path(model_dir)
    try:
        summary = json.loads((d / "train_summary.json").read_text())
    except FileNotFoundError:
        raise PovstimError(f"{d}: no train_summary.json (not a folder `povstim train` finished)") from None
    except ValueError as exc:
        raise PovstimError(f"{d / 'train_summary.json'}: not JSON ({exc})") from None
    dev, lrs = [], []
    log_path = d / "train_log.jsonl"
    if log_path.exists():
        for n, line in enumerate(log_path.read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                raise PovstimError(f"{log_path}:{n}: not JSON") from None
            if entry.get("dev_loss") is not None:
                dev.append((int(entry["step"]), float(entry["dev_loss"])))
            if entry.get("lr") is not None:
                lrs.append((int(entry["step"]), float(entry["lr"])))
    meta = dict(summary.get("model") or {})
    if not meta.get("arch"):  # older summaries: the models/{arch}/{condition}/{size}/seed{N} layout
        parts = d.resolve().parts
        if len(parts) >= 4 and parts[-1].startswith("seed"):
            meta = {"arch": parts[-4], "condition": parts[-3], "size": parts[-2]}
    meta["seed"] = int(summary.get("seed", meta.get("seed", 0)))
    return Run(meta=meta, steps=int(summary["steps"]), best_step=int(summary["best_step"]),
               stop_reason=str(summary.get("stop_reason", "")), dev=sorted(dev),
               tokens_seen=summary.get("tokens_seen"), lrs=sorted(lrs),
               decay_start=int(summary["decay_start"]) if summary.get("decay_start") is not None else None)


def still_learning(run: Run, window: float) -> float | None:
    """Relative dev-loss improvement over the last ``window`` of the steps (None: too few evaluations)."""
    if len(run.dev) < 2:
        return None
    cut = run.steps * (1.0 - window)
    earlier = [loss for step, loss in run.dev if step <= cut]
    ref = earlier[-1] if earlier else run.dev[0][1]
    end = run.dev[-1][1]
    return (ref - end) / ref if ref > 0 else None


def window_points(run: Run, window: float) -> list[tuple[int, float]]:
    """The evaluations of the last ``window`` of the steps, led by the last one at or before its start."""
    cut = run.steps * (1.0 - window)
    earlier = [p for p in run.dev if p[0] <= cut]
    return earlier[-1:] + [p for p in run.dev if p[0] > cut]


def loss_slope(points: list[tuple[int, float]], confidence: float) -> tuple[float, float] | None:
    """Least-squares slope of the dev loss per step and its one-sided ``confidence`` upper bound
    (Student t with n - 2 degrees of freedom); None with fewer than 3 points."""
    n = len(points)
    if n < 3:
        return None
    xs = [float(x) for x, _ in points]
    ys = [float(y) for _, y in points]
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return None
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    resid = [y - (my + slope * (x - mx)) for x, y in zip(xs, ys)]
    se = (sum(r * r for r in resid) / (n - 2) / sxx) ** 0.5
    return slope, slope + float(stats.t.ppf(confidence, n - 2)) * se


def lr_time(run: Run) -> dict[int, float] | None:
    """The cumulative learning rate (the sum of the lr over the updates so far, by the trapezoid rule over the
    logged steps) at each logged step; None without a logged lr. A model moves by about lr x gradient per
    update, so a curve against this clock shows what the training did, not how fast the schedule let it."""
    if len(run.lrs) < 2:
        return None
    out, total, prev_step, prev_lr = {}, 0.0, 0, run.lrs[0][1]
    for step, lr in run.lrs:
        total += (step - prev_step) * (lr + prev_lr) / 2.0
        out[step] = total
        prev_step, prev_lr = step, lr
    return out


def decayed_points(run: Run, s: GuardrailSettings) -> tuple[list[tuple[float, float]], float] | None:
    """(the evaluations of the last ``window`` of the cumulative lr, as (cumulative lr, dev loss) led by the last
    one at or before its start; the final lr's share of the peak) for a run whose lr ended below ``decayed_lr``
    of its peak; None for any other run, or one whose evaluations are not on logged steps."""
    clock = lr_time(run)
    if clock is None:
        return None
    peak, final = max(lr for _, lr in run.lrs), run.lrs[-1][1]
    if peak <= 0 or final >= s.decayed_lr * peak:
        return None
    pts = [(clock[step], loss) for step, loss in run.dev if step in clock]
    if len(pts) < 2:
        return None
    cut = pts[-1][0] * (1.0 - s.window)
    earlier = [p for p in pts if p[0] <= cut]
    return earlier[-1:] + [p for p in pts if p[0] > cut], final / peak


def check_undertrained(runs: list[Run], s: GuardrailSettings) -> list[Finding]:
    """Every run's curve is tested, whatever its ``stop_reason``: "plateau" and "early_stopping" come from a
    patience that a noisy, still-falling curve can satisfy too early, so the label is a claim, not evidence. A
    wsd run whose patience found its plateau is tested up to ``decay_start``, at full lr (the decay after it
    lowers the loss by design); an early-stopped run's curve ends where it stopped."""
    out = []
    for run in runs:
        if run.decay_start is not None:
            finding = _undertrained(run.at_full_lr(), s)
            if finding is not None:
                finding = replace(finding, detail=f"{finding.detail} -- at full lr, before the decay its "
                                  f"'{run.stop_reason}' began at step {run.decay_start}")
        else:
            finding = _undertrained(run, s) or _flattened_by_decay(run, s)
        if finding is not None and run.stop_reason in ("plateau", "early_stopping"):
            finding = replace(finding, detail=f"{finding.detail}; labelled '{run.stop_reason}' by its patience, "
                              "which a noisy curve can satisfy while it still falls")
        if finding is not None:
            out.append(finding)
    return out


def check_overfitting(runs: list[Run], s: GuardrailSettings) -> list[Finding]:
    """A run whose final dev loss is more than ``overfit_rise`` above its best: the curve stopped improving
    because the model began to overfit its corpus, not because it reached a plateau. The scored weights are the
    best step's; the finding says the models of a comparison stopped at different points of their curves."""
    out = []
    for run in runs:
        if len(run.dev) < 2:
            continue
        best = min(loss for _, loss in run.dev)
        final = run.dev[-1][1]
        rise = (final - best) / best if best > 0 else 0.0
        if rise > s.overfit_rise:
            out.append(Finding(
                "overfitting", run.label,
                f"best step {run.best_step} of {run.steps}: the dev loss then rose from {best:.3f} to {final:.3f} "
                f"({rise:+.1%}, more than guardrails.overfit_rise {s.overfit_rise:.0%}); its stop_reason "
                f"'{run.stop_reason}' does not mean a plateau here. The scored weights are step {run.best_step}'s",
                "the corpus is small for this learner: a smaller model, more dropout or fewer epochs; read its "
                "contrasts knowing the models stopped at different points of their curves",
                {"best_step": run.best_step, "steps": run.steps, "best_loss": round(best, 4),
                 "final_loss": round(final, 4), "rise": round(rise, 4), "stop_reason": run.stop_reason}))
    return out


def _undertrained(run: Run, s: GuardrailSettings) -> Finding | None:
    """The slope test whenever the window has ``min_evals`` evaluations, whatever the best step (a final
    evaluation a hair above an earlier one -- lr near 0 at the end of a linear decay -- does not make a
    falling curve flat); else the old rule: best step last and a relative fall above ``still_learning``."""
    gain = still_learning(run, s.window)
    if gain is None:
        return None
    points = window_points(run, s.window)
    fit = loss_slope(points, s.confidence) if len(points) >= s.min_evals else None
    last = run.best_step == run.steps
    best = (f"best step {run.best_step} is the last step" if last else
            f"best step {run.best_step} of {run.steps} (the final dev loss {run.dev[-1][1]:.4f} is "
            f"{run.dev[-1][1] - min(loss for _, loss in run.dev):+.4f} above the best)")
    data = {"gain": round(gain, 4), "best_step": run.best_step, "steps": run.steps}
    if fit is not None:
        slope, upper = fit
        if not upper < 0:
            return None  # a plateau: the slope could be 0 (or positive) within its noise
        per = 1000 if run.steps >= 2000 else 100
        detail = (f"{best}; over the last {s.window:.0%} of training ({len(points)} evaluations) the dev loss "
                  f"fell {gain:.2%} (to {run.dev[-1][1]:.3f}), a slope of {slope * per:+.4f} per {per} steps "
                  f"whose {s.confidence:.0%} upper bound ({upper * per:+.4f}) is below 0: still falling beyond "
                  "its noise")
        data |= {"slope_per_step": float(f"{slope:.4g}"), "slope_upper": float(f"{upper:.4g}"),
                 "evaluations": len(points), "test": "slope"}
    elif last and gain > s.still_learning:
        detail = (f"{best}; the dev loss fell {gain:.1%} over the last {s.window:.0%} of training "
                  f"(to {run.dev[-1][1]:.3f})")
    else:
        return None
    return Finding(
        "undertrained", run.label, detail,
        "train longer (training.max_steps or training.epochs) until the dev loss levels off or early "
        "stopping ends the run",
        data,
    )


def _flattened_by_decay(run: Run, s: GuardrailSettings) -> Finding | None:
    """A curve the lr decay flattened while the model was still learning (at 60k words a linear decay
    to ~0 made the last 20% of the steps flat, and the step test passed). Once the lr has decayed below
    ``decayed_lr`` of its peak, the dev loss is measured against the cumulative lr instead of the step: over the
    last ``window`` of the cumulative lr (where the schedule still let the model move), a slope whose one-sided
    ``confidence`` upper bound is below 0 means each further unit of lr still lowered the loss. A plateau at full
    lr is flat on both clocks and passes."""
    found = decayed_points(run, s)
    if found is None:
        return None
    points, share = found
    if len(points) < s.min_evals:
        return None
    fit = loss_slope(points, s.confidence)
    if fit is None or not fit[1] < 0:
        return None
    slope, upper = fit
    first, last = points[0][1], points[-1][1]
    detail = (f"the learning rate ended at {share:.1%} of its peak, so the last steps could barely move the model: "
              f"against the cumulative lr (the sum of the lr over the updates), the dev loss was still falling "
              f"over the last {s.window:.0%} of it ({len(points)} evaluations, {first:.3f} -> {last:.3f}; slope "
              f"{slope:+.4g} per unit of lr, {s.confidence:.0%} upper bound {upper:+.4g} < 0): flat in steps "
              "only because the schedule decayed the lr, not because the model stopped learning")
    return Finding(
        "undertrained", run.label, detail,
        "train until a plateau at full lr: training.schedule: wsd (the lr stays at its peak until early "
        "stopping's patience finds the plateau, then decays), or a larger training.max_steps / epochs",
        {"best_step": run.best_step, "steps": run.steps, "final_lr_share": round(share, 4),
         "slope_per_lr": float(f"{slope:.4g}"), "slope_upper": float(f"{upper:.4g}"),
         "evaluations": len(points), "test": "lr_decay"},
    )


def check_equal_tokens(runs: list[Run], s: GuardrailSettings) -> list[Finding]:
    out = []
    groups: dict[tuple, dict[str, list[float]]] = {}
    for run in runs:
        key = (run.meta.get("arch"), run.meta.get("condition"))
        amount = float(run.tokens_seen) if run.tokens_seen is not None else float(run.steps)
        groups.setdefault(key, {}).setdefault(str(run.meta.get("size")), []).append(amount)
    for (arch, condition), by_size in sorted(groups.items(), key=lambda kv: str(kv[0])):
        if len(by_size) < 2:
            continue
        means = {size: sum(v) / len(v) for size, v in by_size.items()}
        lo, hi = min(means.values()), max(means.values())
        if hi <= lo * (1 + s.equal_tokens):
            what = "tokens" if all(r.tokens_seen is not None for r in runs) else "steps"
            out.append(Finding(
                "equal_tokens", f"{arch}/{condition}",
                f"sizes {', '.join(sorted(means, key=_size_key))} all trained on ~{hi:,.0f} {what}: a larger "
                "corpus was only seen for fewer epochs",
                "train by epochs (training.epochs) or until early stopping, so larger corpora get more training",
                {"per_size": {k: round(v) for k, v in means.items()}},
            ))
    return out


def _size_key(size: str):
    try:
        return parse_size(size)
    except PovstimError:
        return size


# ---- items -----------------------------------------------------------------------------------------

def _words(sentence: str) -> list[str]:
    return sentence.rstrip(" .?!").split()


def contrast_words(pairs: list[dict]) -> pd.DataFrame:
    """suite, paradigm, item_id, word (the good sentence's word), other (the bad sentence's) and contrast
    (the two words, sorted, "a|b") for pairs that differ in exactly one word."""
    rows = []
    for p in pairs:
        if "good" not in p or "bad" not in p:  # other task kinds (multiple choice, completion): no pair
            continue
        good, bad = _words(p["good"]), _words(p["bad"])
        if len(good) != len(bad):
            continue
        diff = [(g.lower(), b.lower()) for g, b in zip(good, bad) if g != b]
        if len(diff) == 1 and diff[0][0] != diff[0][1]:  # a case-only difference is no word contrast
            word, other = diff[0]
            rows.append({"suite": p["suite"], "paradigm": p["paradigm"], "item_id": str(p["item_id"]),
                         "word": word, "other": other, "contrast": "|".join(sorted((word, other)))})
    return pd.DataFrame(rows, columns=["suite", "paradigm", "item_id", "word", "other", "contrast"])


def check_lexical_preference(items: pd.DataFrame, pairs: list[dict], s: GuardrailSettings) -> list[Finding]:
    """Per model x paradigm x word pair: accuracy when one word of the pair is the good one vs the other.

    Items are compared only with items that swap the same two words (*herself*/*himself* and
    *himself*/*herself*), never with items of other words (BLiMP/Zorro: each pair has its own)."""
    words = contrast_words(pairs)
    if words.empty or items.empty:
        return []
    df = items.assign(item_id=items["item_id"].astype(str)).merge(words, on=["suite", "paradigm", "item_id"])
    if df.empty:
        return []
    acc = (df.groupby(["suite", "paradigm", *MODEL_KEYS, "contrast", "word"])["correct"]
           .agg(acc="mean", n="size").reset_index())
    acc = acc[acc["n"] >= s.min_items]
    out = []
    for (suite, paradigm), g in acc.groupby(["suite", "paradigm"]):
        flagged, models = [], 0
        for key, m in g.groupby(list(MODEL_KEYS)):
            # both orders of one word pair, each with enough items; the widest spread of the model's pairs
            spreads = []
            for _, c in m.groupby("contrast"):
                if len(c) == 2:
                    hi, lo = c.loc[c["acc"].idxmax()], c.loc[c["acc"].idxmin()]
                    spreads.append((hi["acc"] - lo["acc"], hi, lo))
            if not spreads:
                continue
            models += 1
            spread, hi, lo = max(spreads, key=lambda t: t[0])
            if spread >= s.lexical_spread:
                flagged.append((dict(zip(MODEL_KEYS, key)), hi, lo))
        if not flagged:
            continue
        favourite = pd.Series([hi["word"] for _, hi, _ in flagged]).value_counts()
        example_meta, hi, lo = flagged[0]
        example = "/".join(str(example_meta[k]) for k in ("arch", "condition", "size")) + f" seed {example_meta['seed']}"
        out.append(Finding(
            "lexical_preference", f"{suite}/{paradigm}",
            f"{len(flagged)} of {models} models choose by the word, not the structure: e.g. {example} is "
            f"{hi['acc']:.0%} correct when '{hi['word']}' is right and {lo['acc']:.0%} when '{lo['word']}' is "
            f"(preferred word: {', '.join(f'{w} in {n}' for w, n in favourite.items())})",
            "read this paradigm's accuracy as a lexical bias; compare per-word accuracy (guardrails.csv) or "
            "balance/score the contrast differently (e.g. scoring.reduction, a word-frequency baseline)",
            {"models_flagged": len(flagged), "models": models, "favourite": favourite.to_dict()},
        ))
    return out


def _direction(row) -> str:
    """above / below / none. The tables' own ``direction`` column wins when chisq.csv has one."""
    if "direction" in row and isinstance(row["direction"], str) and row["direction"]:
        return row["direction"]
    return "above" if row["accuracy_mean"] > 0.5 else ("below" if row["accuracy_mean"] < 0.5 else "none")


def check_below_chance(chisq: pd.DataFrame, s: GuardrailSettings) -> list[Finding]:
    if chisq is None or chisq.empty:
        return []
    p = "p_adj" if "p_adj" in chisq.columns else "p"
    out = []
    for _, r in chisq.iterrows():
        if r.get("level") not in ("paradigm", "category") or not (float(r[p]) < s.alpha):
            continue
        if _direction(r) != "below":
            continue
        what = r["paradigm"] if r["level"] == "paradigm" else r["category"]
        out.append(Finding(
            "below_chance", f"{r['suite']}/{what}",
            f"{r['arch']} {r['condition']} {r['size']}: accuracy {float(r['accuracy_mean']):.1%} is significantly "
            f"BELOW chance ({p} = {float(r[p]):.2g}): the model prefers the ungrammatical sentence",
            "do not read its stars as success; look for a cue that favours the bad sentence (a frequent word, "
            "a shorter sentence)",
            {"level": r["level"], "accuracy": round(float(r["accuracy_mean"]), 4), p: float(r[p])},
        ))
    return out


def check_baseline_solves(manifests: list[dict], items: pd.DataFrame, s: GuardrailSettings) -> list[Finding]:
    """Paradigms a word-frequency (or n-gram) baseline solves: from the suites' manifests and baseline scores."""
    advice = ("read a model's accuracy here against the baseline's, not against chance: word frequencies alone "
              "get it right")
    out = []
    for m in manifests:
        for row in ((m.get("params") or {}).get("baseline") or {}).get("solved", []):
            if row.get("level") != "paradigm" or float(row["accuracy"]) < s.baseline_solves:
                continue
            out.append(Finding(
                "baseline_solves", f"{m.get('suite', '?')}/{row['name']}",
                f"the word-frequency baseline of {Path(str(row['corpus'])).parent.parent.name}/"
                f"{Path(str(row['corpus'])).parent.name} scores {float(row['accuracy']):.1%}",
                advice, {"source": "manifest", "corpus": str(row["corpus"]), "accuracy": float(row["accuracy"])},
            ))
    if not items.empty and "arch" in items.columns:
        for _, r in solved_by_baselines(items, threshold=s.baseline_solves).iterrows():
            out.append(Finding(
                "baseline_solves", f"{r['suite']}/{r['paradigm']}",
                f"the {r['arch']} baseline of {r['condition']} {r['size']} scores {float(r['accuracy']):.1%}",
                advice, {"source": "scores", "baseline": r["arch"], "accuracy": round(float(r["accuracy"]), 4)},
            ))
    return out


# ---- conditions ------------------------------------------------------------------------------------

def check_reinsert_shortfall(conditions: list[dict], s: GuardrailSettings) -> list[Finding]:
    """Conditions (BABY) whose measured targeted-evidence rate is below ``reinsert_share`` x the configured one."""
    out = []
    for r in reinsert_rows(conditions, s.reinsert_share):
        if not r["below_share"]:
            continue
        phen, rate, got, short = r["phenomenon"], r["configured"], r["measured"], r["shortfall"]
        pool = (f": it needed {short['needed']} targeted sentences and the filter removed {short['available']}"
                if short else "")
        out.append(Finding(
            "reinsert_shortfall", f"{r['condition']}/{r['size']}/{phen}",
            f"measured {phen} rate {got:.5f} is {got / rate:.0%} of the configured {rate:g}{pool} "
            f"(below {s.reinsert_share:.0%})",
            "read BABY vs BABY-F as a smaller dose than configured; more or larger child-directed sources, "
            "a lower reinsert rate, or a filter mode with more targeted evidence (docs/filter.md); "
            "`povstim plan` estimates the pool before training",
            {"phenomenon": phen, "configured": rate, "measured": round(got, 6),
             **({"needed": short["needed"], "available": short["available"]} if short else {})},
        ))
    return out


def check_size_label(conditions: list[dict], s: GuardrailSettings) -> list[Finding]:
    """Conditions x sizes whose actual words differ from the size label by more than ``size_label``."""
    return [Finding(
        "size_label", f"{r['condition']}/{r['size']}",
        f"holds {r['words']:,} words ({r['sentences']:,} sentences), {r['gap']:+.1%} against the label's "
        f"{r['label_words']:,} (beyond {s.size_label:.0%})",
        "compare conditions and sizes by their actual words (the report's conditions table and the captions of "
        "Tables 3/8), not by the labels (docs/manipulations.md: what each condition takes out of its base corpus)",
        {"label_words": r["label_words"], "words": r["words"], "gap": round(r["gap"], 6)},
    ) for r in size_gaps(conditions, s.size_label) if r["off"]]


# ---- the Bayesian fits -----------------------------------------------------------------------------

def read_fit_diagnostics(bayes_dir: str | Path | None) -> list[tuple[str, dict]]:
    """(path under the analysis folder, contents) of every ``*diagnostics.json`` the analysis wrote in
    ``bayes_dir`` and its per-suite x learner folders (bayes/by/<suite>/<learner>/)."""
    if not bayes_dir or not Path(bayes_dir).is_dir():
        return []
    root = Path(bayes_dir)
    return [(str(f.relative_to(root.parent)), json.loads(f.read_text()))
            for f in sorted(root.rglob("*diagnostics.json"))]


def check_fit_convergence(fits: list[tuple[str, dict]], s: GuardrailSettings) -> list[Finding]:
    """Every Bayesian fit whose diagnostics.json says it did not converge (after its refit, if it had one)."""
    out = []
    for path, d in fits:
        if d.get("converged", True):
            continue
        refit = " after one refit with stronger settings" if d.get("refitted") else ""
        out.append(Finding(
            "fit_convergence", path + (f" ({d['suite']})" if d.get("suite") else ""),
            f"{d.get('formula', 'the model')}: did not converge{refit}: " + "; ".join(d.get("problems", [])),
            "do not interpret its estimates or the sentences drawn from them; raise analysis.tune, analysis.draws or "
            "analysis.target_accept and rerun analyze (docs/analysis.md, \"Convergence is loud\")",
            {"divergences": d.get("divergences"), "max_r_hat": d.get("max_r_hat"), "min_ess_bulk": d.get("min_ess_bulk")},
        ))
    return out


# ---- all together ----------------------------------------------------------------------------------

def run_checks(runs: list[Run], items: pd.DataFrame, pairs: list[dict], chisq: pd.DataFrame | None,
               settings: GuardrailSettings, manifests: list[dict] | None = None,
               conditions: list[dict] | None = None, fits: list[tuple[str, dict]] | None = None) -> dict:
    findings = {
        "undertrained": check_undertrained(runs, settings),
        "overfitting": check_overfitting(runs, settings),
        "equal_tokens": check_equal_tokens(runs, settings),
        "lexical_preference": check_lexical_preference(items, pairs, settings),
        "baseline_solves": check_baseline_solves(manifests or [], items, settings),
        "below_chance": check_below_chance(chisq, settings),
        "reinsert_shortfall": check_reinsert_shortfall(conditions or [], settings),
        "size_label": check_size_label(conditions or [], settings),
        "fit_convergence": check_fit_convergence(fits or [], settings),
    }
    return {
        "settings": settings.__dict__,
        "n_models": len(runs),
        "fired": [name for name, f in findings.items() if f],
        "checks": {name: {"title": CHECKS[name], "fired": bool(f), "findings": [x.as_dict() for x in f]}
                   for name, f in findings.items()},
    }


def write_outputs(result: dict, out_dir: str | Path) -> None:
    out = Path(out_dir)
    rows = [f for c in result["checks"].values() for f in c["findings"]]
    for c in result["checks"].values():
        for f in c["findings"][:10]:
            log.warning("GUARDRAIL %s: %s: %s", f["check"], f["scope"], f["detail"])
        if len(c["findings"]) > 10:
            log.warning("GUARDRAIL %s: ... and %d more (guardrails.csv)", c["findings"][0]["check"],
                        len(c["findings"]) - 10)
    if not rows:
        log.info("guardrails: all %d checks pass", len(result["checks"]))
    write_json(out / "guardrails.json", result)
    frame = pd.DataFrame([{k: f[k] for k in ("check", "scope", "detail", "advice")} for f in rows],
                         columns=["check", "scope", "detail", "advice"])
    with atomic_write(out / "guardrails.csv") as fh:
        frame.to_csv(fh, index=False, lineterminator="\n")
    with atomic_write(out / "guardrails.html") as fh:
        fh.write(to_html(result))


def to_html(result: dict) -> str:
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'><style>body{font-family:sans-serif;font-size:13px}"
             "td,th{border:1px solid #999;padding:3px 8px;vertical-align:top}table{border-collapse:collapse}"
             ".fired{color:#b00;font-weight:bold}.ok{color:#070}</style></head><body>"]
    fired = result["fired"]
    if fired:
        parts.append(f"<p class='fired'>{len(fired)} of {len(result['checks'])} guardrails fired: "
                     f"{html.escape(', '.join(fired))}. Read the affected results with the caveat below.</p>")
    else:
        parts.append(f"<p class='ok'>All {len(result['checks'])} guardrails pass.</p>")
    parts.append("<table><tr><th>check</th><th>result</th><th>about</th><th>finding</th><th>what to do</th></tr>")
    for name, c in result["checks"].items():
        if not c["findings"]:
            parts.append(f"<tr><td>{html.escape(c['title'])}</td><td class='ok'>pass</td><td></td><td></td><td></td></tr>")
        for f in c["findings"]:
            parts.append(f"<tr><td>{html.escape(c['title'])}</td><td class='fired'>fired</td>"
                         f"<td>{html.escape(f['scope'])}</td><td>{html.escape(f['detail'])}</td>"
                         f"<td>{html.escape(f['advice'])}</td></tr>")
    parts.append("</table></body></html>\n")
    return "".join(parts)
