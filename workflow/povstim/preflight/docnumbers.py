"""Numbers the docs quote from the demo runs, generated from the runs' own output files (docs that cannot
drift from what the demos produce).

A doc marks each quoted passage as a block::

    <!-- demo-numbers constructions-demo/delta (generated: python -m povstim.preflight.docnumbers --update
         constructions-demo; do not edit by hand) -->
    ...text rendered from the run...
    <!-- /demo-numbers -->

Each block has a *summary* -- the few numbers it quotes, read from the demo's result files by a function of
``EXPERIMENTS`` -- and a *render* function that writes the passage from that summary. The summaries of the last
demo run are committed in ``docs/demo-numbers/<experiment>.json`` (small: no corpus, no model, nothing derived
from CHILDES text), so:

* ``--update EXP`` (after running the demo) reads ``results/EXP``, writes the snapshot and rewrites every block
  of that experiment in the docs: the passage is the run's, never typed;
* ``--check`` (the default; ``tests/test_docnumbers.py`` runs it) renders every block from the snapshots and
  fails, naming the doc and block, where a doc's text differs (edited by hand) or a block is missing;
* ``--compare EXP`` summarises a fresh run and lists the numbers that differ from the snapshot (a demo rerun
  with changed code: update the docs, or find out why).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import re
import subprocess
import sys
from dataclasses import dataclass
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Callable

from ..conditions.order import condition_order
from ..io import PovstimError, atomic_write, sha256_file

ROOT = Path(__file__).resolve().parents[3]  # the checkout: workflow/povstim/preflight/ -> .
SNAPSHOTS = Path("docs") / "demo-numbers"
BEGIN = re.compile(r"<!-- demo-numbers (?P<name>[\w.-]+/[\w.-]+)(?P<rest>[^>]*)-->\n", re.S)
END = "<!-- /demo-numbers -->"


@dataclass(frozen=True)
class Block:
    name: str  # experiment/block
    doc: str  # docs/<page>.md, relative to the checkout
    render: Callable[[dict], str]  # the block's summary -> its markdown


# ---------------------------------------------------------------- reading a run's files
def _tsv(path: Path) -> list[dict]:
    if not path.is_file():
        raise PovstimError(f"{path}: missing (run the demo first)")
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def _csv(path: Path) -> list[dict]:
    if not path.is_file():
        raise PovstimError(f"{path}: missing (run the demo first)")
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _num(x) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _json(path: Path):
    if not path.is_file():
        raise PovstimError(f"{path}: missing (run the demo first)")
    return json.loads(path.read_text(encoding="utf-8"))


# ---------------------------------------------------------------- constructions demo
DELTA_KEYS = ["n_target", "acc_filtered_target", "acc_full_target", "raw_delta_target", "raw_delta_control",
              "delta_target", "delta_target_lower", "delta_target_upper", "delta_control", "delta_control_lower",
              "delta_control_upper", "diff", "diff_lower", "diff_upper", "p_diff_below_0", "max_r_hat",
              "max_r_hat_delta", "min_ess_bulk", "divergences"]


def constructions_demo(results: Path) -> dict:
    rows = _tsv(results / "analysis" / "construction_delta" / "delta.tsv")
    out = {}
    for r in rows:
        out[r["condition"]] = {**{k: _num(r.get(k)) for k in DELTA_KEYS}, "converged": r.get("converged") == "True",
                               "problems": r.get("problems") or ""}
    return {"delta": dict(sorted(out.items())), "removals": constructions_removals(results)}


def constructions_removals(results: Path) -> dict:
    """Per filtered corpus x size (filter/*/*/summary.json): sentences, removals per construction, prefilter misses;
    per condition (corpus/*/*/condition.json): what it removed."""
    filters = sorted((results / "filter").glob("*/*/summary.json"))
    if not filters:
        raise PovstimError(f"{results / 'filter'}: no */*/summary.json (run the demo first)")
    out = {"filter": {}, "conditions": {}}
    for path in filters:
        s = _json(path)
        pre = s.get("prefilter") or {}
        out["filter"][f"{path.parent.parent.name}/{path.parent.name}"] = {
            "n_sentences": s["n_sentences"], "removed": dict(sorted(s["per_phenomenon"].items())),
            "prefilter_misses": pre.get("n_misses"), "prefilter_spared": pre.get("n_spared")}
    for path in sorted((results / "corpus").glob("*/*/condition.json")):
        out["conditions"][path.parent.parent.name] = dict(sorted(_json(path).get("dpe_removed", {}).items()))
    return out


def render_removals(summary: dict) -> str:
    r = summary["removals"]
    parts = []
    for where, f in r["filter"].items():
        removed = [f"{n:,} ({c})" for c, n in f["removed"].items()]
        listed = ", ".join(removed[:-1]) + f" and {removed[-1]}" if len(removed) > 1 else "".join(removed)
        parts.append(f"The filter removed {listed} of {f['n_sentences']:,} sentences ({where}); prefilter: "
                     f"{f['prefilter_misses']} misses, {f['prefilter_spared']} sentences spared the parse.")
    conds = [f"{c} {', '.join(f'{k} {n:,}' for k, n in d.items()) or 'nothing'}" for c, d in r["conditions"].items()]
    parts.append(f"Removed per condition (condition.json): {'; '.join(conds)}.")
    return "\n".join(_wrap(" ".join(parts))) + "\n"


def _f(x, digits=3, sign=True) -> str:
    if x is None:
        return "n/a"
    s = f"{x:+.{digits}f}" if sign else f"{x:.{digits}f}"
    return s.replace("-", "−")


def render_raw_delta(summary: dict) -> str:
    lines = ["| condition | target paradigms | Δ target | Δ other |", "|---|---|---|---|"]
    for cond, r in summary["delta"].items():
        lines.append(f"| {cond} | {int(r['n_target'])} | {_f(r['raw_delta_target'])} "
                     f"({_f(r['acc_filtered_target'], sign=False)} vs {_f(r['acc_full_target'], sign=False)}) | "
                     f"{_f(r['raw_delta_control'])} |")
    return "\n".join(lines) + "\n"


def render_delta(summary: dict) -> str:
    rows = summary["delta"]
    lines = ["| condition | Δ target | Δ control | target − control | P(diff < 0) | fit |", "|---|---|---|---|---|---|"]
    for cond, r in rows.items():
        if r["converged"]:
            fit = f"converged (R-hat {r['max_r_hat']:.3f}, bulk ESS {r['min_ess_bulk']:.0f})"
        else:
            fit = (f"**not converged**: {r['problems']} (the Δs' own R-hat {r['max_r_hat_delta']:.3f}; bulk ESS "
                   f"{r['min_ess_bulk']:.0f}), flagged in table and figure")
        lines.append(f"| {cond} | {_f(r['delta_target'])} [{_f(r['delta_target_lower'])}, "
                     f"{_f(r['delta_target_upper'])}] | {_f(r['delta_control'])} [{_f(r['delta_control_lower'])}, "
                     f"{_f(r['delta_control_upper'])}] | {_f(r['diff'])} [{_f(r['diff_lower'])}, "
                     f"{_f(r['diff_upper'])}] | {r['p_diff_below_0']:.2f} | {fit} |")
    n_ok = sum(r["converged"] for r in rows.values())
    word = {0: "none", len(rows): "all"}.get(n_ok, str(n_ok))
    excludes = [c + ("" if rows[c]["converged"] else " (not converged)") for c, r in rows.items()
                if r["diff_lower"] is not None and (r["diff_lower"] > 0 or r["diff_upper"] < 0)]
    # with some fits converged, the sentence is about the others: their estimates, not all of them, are flagged
    others = "" if n_ok == 0 else "the others' "
    lines += ["", f"Of the {len(rows)} fits {word} passed the stage's convergence check"
              + (f": at the demo's 2 x 500 draws {others or 'the '}chains are not called mixed, so "
                 f"{'their' if others else 'its'} estimates are flagged, not results." if n_ok < len(rows) else ".")
              + (" No target − control interval excludes 0." if not excludes else
                 f" The target − control interval excludes 0 for {', '.join(excludes)}.")]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- dose demo (counterfactual rewrites)
REPLACED = {"question_formation": "qf-linear", "binding": "refl-swap"}


def dose_demo(results: Path) -> dict:
    out = {}
    for construction, condition in REPLACED.items():
        rows = [r for r in _tsv(results / "corpus" / condition / "30k" / "operations.tsv") if r["op"] == "replace"]
        kept: dict[str, int] = {}
        for r in rows:
            if r["action"] == "kept":
                # the reason without the words it names ("the gender of 'duck' is unknown"): one count per kind
                reason = re.sub(r" \([^)]*\)$", "", re.sub(r"'[^']*'", "X", r["reason"].split(": ", 1)[-1]))
                kept[reason] = kept.get(reason, 0) + 1
        out[construction] = {"condition": condition, "rows": len(rows),
                             "rewritten": sum(r["action"] == "rewritten" for r in rows),
                             "kept": dict(sorted(kept.items(), key=lambda kv: (-kv[1], kv[0])))}
    return {"replace": out}


def render_replace(summary: dict) -> str:
    qf, b = summary["replace"]["question_formation"], summary["replace"]["binding"]
    def why(kept: dict) -> str:  # most frequent first (the snapshot's keys are sorted by name)
        return ", ".join(f"{n}: {reason}" for reason, n in sorted(kept.items(), key=lambda kv: (-kv[1], kv[0])))

    return (f"On the dose demo's 30k-word child corpus (posh filter): of {qf['rows']} question-formation rows "
            f"{qf['rewritten']} were rewritten ({why(qf['kept'])}); of {b['rows']} binding rows {b['rewritten']} were "
            f"rewritten ({why(b['kept'])}).\n")


# ---------------------------------------------------------------- what a run's jobs cost
def bench_dir(results: Path) -> Path:
    """Snakemake's benchmark files of ``results/<exp>``: ``benchmarks/<exp>/`` beside ``results/`` (the ``BENCH``
    of rules/common.smk), one TSV a job."""
    return results.parent.parent / "benchmarks" / results.name


def run_cost(results: Path) -> dict:
    """Per rule (the benchmark file's first folder): the jobs, their wall seconds summed and each job's range, from
    the run's benchmark files; and the totals. Wall time only: the files' CPU and memory columns do not see the
    jobs' own Python processes here (the demo's 25 s training job reads 0.11 CPU-s and 23 MB), so they would mislead.
    Snakemake's scheduling between jobs is in no file, and jobs overlap at ``--cores`` > 1, so the sum is neither
    the run's wall time nor its CPU (docs/own-data.md has those, measured)."""
    bench = bench_dir(results)
    files = sorted(bench.rglob("*.tsv"))
    if not files:
        raise PovstimError(f"{bench}: no benchmark files (run the demo first, from this checkout)")
    per: dict[str, list[float]] = {}
    for f in files:
        rows = _tsv(f)
        if not rows or "s" not in rows[0] or "max_rss" not in rows[0]:
            raise PovstimError(f"{f}: not a Snakemake benchmark file (columns s and max_rss)")
        per.setdefault(f.relative_to(bench).parts[0], []).append(float(rows[-1]["s"]))
    rules = {k: {"jobs": len(v), "wall_s": round(sum(v), 1), "wall_min_s": round(min(v), 1),
                 "wall_max_s": round(max(v), 1)} for k, v in sorted(per.items())}
    return {"rules": rules, "jobs": sum(len(v) for v in per.values()),
            "wall_s": round(sum(x for v in per.values() for x in v), 1)}


def render_cost(summary: dict) -> str:
    c = summary["cost"]
    lines = ["| jobs of | n | wall s, summed | wall per job, s |", "|---|---|---|---|"]
    for name, r in sorted(c["rules"].items(), key=lambda kv: (-kv[1]["wall_s"], kv[0])):
        span = f"{r['wall_min_s']:.1f}" if r["wall_min_s"] == r["wall_max_s"] else \
            f"{r['wall_min_s']:.1f}-{r['wall_max_s']:.1f}"
        lines.append(f"| {name} | {r['jobs']} | {r['wall_s']:.1f} | {span} |")
    lines.append(f"| **all** | **{c['jobs']}** | **{c['wall_s']:.1f}** | |")
    return "\n".join(lines) + "\n\n" + "\n".join(_wrap(
        f"{c['jobs']} jobs wrote a benchmark file (benchmarks/<exp>/, one a job), {c['wall_s']:.0f} job-seconds in "
        "all. Jobs overlap on several cores and Snakemake's scheduling is in no file, so this is neither the run's "
        "wall time nor its CPU (the files' CPU column is left out: it does not see the jobs' own processes).")) \
        + "\n"


# ---------------------------------------------------------------- acquisition demo
def acquisition_demo(results: Path) -> dict:
    adir = results / "analysis" / "acquisition"
    summary = _csv(adir / "summary.csv")
    notes = _json(adir / "notes.json")
    points = {}
    for r in summary:
        points.setdefault(r["paradigm"], {})[r["condition"]] = {
            "acquisition": r["acquisition"], "log10_point": _num(r.get("log10_point")),
            "log10_lo": _num(r.get("log10_lo")), "log10_hi": _num(r.get("log10_hi")),
            "p_not_acquired": _num(r.get("p_not_acquired"))}
    out = {"points": dict(sorted(points.items())),
           "fit": {"divergences": notes.get("divergences"), "not_converged": notes.get("not_converged"),
                   "max_r_hat": round(notes["max_r_hat"], 3) if _num(notes.get("max_r_hat")) else None,
                   "min_ess_bulk": round(notes["min_ess_bulk"]) if _num(notes.get("min_ess_bulk")) else None,
                   "groups": len(summary)}}
    pair = [r for r in _csv(adir / "contrasts.csv") if r["level"] == "paradigm" and r["condition_a"] == "baby-f"
            and r["condition_b"] == "baby"]
    out["baby_f_vs_baby"] = {}
    for r in pair:
        out["baby_f_vs_baby"][r["status"]] = out["baby_f_vs_baby"].get(r["status"], 0) + 1
    words = adir / "word_points.csv"
    if words.is_file():
        from collections import Counter

        per = {}
        for r in _csv(words):
            per.setdefault(r["condition"], Counter())[r["acquisition"]] += 1
        out["word_points"] = {c: dict(sorted(v.items())) for c, v in sorted(per.items())}
    kids = adir / "children.csv"
    if kids.is_file():
        rows = _csv(kids)
        months = [float(r["age_first_months"]) for r in rows]
        out["children"] = {"words": len(rows), "youngest_months": round(min(months), 1) if months else None,
                           "oldest_months": round(max(months), 1) if months else None}
    reg = adir / "word_regression.csv"
    if reg.is_file():
        out["regression"] = {f"{r['condition']}|{r['term']}": {"estimate": _num(r["estimate"]), "se": _num(r["se"]),
                                                                "n_words": int(float(r["n_words"]))}
                             for r in _csv(reg)}
    out["cost"] = run_cost(results)
    return out


def _ordered(d: dict) -> list[tuple[str, object]]:
    """A dict keyed by condition in the conditions' order (BABY-F, BABY, WIKI), not the snapshot's sorted one."""
    return [(c, d[c]) for c in condition_order(list(d))]


def render_acquisition(summary: dict) -> str:
    parts = []
    for par, conds in summary["points"].items():
        said = []
        for cond, r in _ordered(conds):
            if r["acquisition"] == "acquired" and r["log10_point"] is not None:
                said.append(f"{r['log10_point']:.2f} [{r['log10_lo']:.2f}, {r['log10_hi']:.2f}] {cond.upper()}")
            elif r["acquisition"] == "not_acquired":
                said.append(f"not acquired {cond.upper()} (P {r['p_not_acquired']:.2f})"
                            if r["p_not_acquired"] is not None else f"not acquired {cond.upper()}")
            else:
                said.append(f"{r['acquisition'].replace('_', ' ')} {cond.upper()}")
        parts.append(f"*{par}* " + "; ".join(said))
    text = ("Its points (posterior medians, 95% intervals, log10 words; generated from the run's summary.csv): "
            + "; ".join(parts) + ".")
    if summary.get("baby_f_vs_baby"):
        text += " BABY-F vs BABY over the paradigms (contrasts.csv): " + ", ".join(
            f"{n} {status}" for status, n in sorted(summary["baby_f_vs_baby"].items(), key=lambda kv: (-kv[1], kv[0])))\
            + "."
    fit = summary.get("fit") or {}
    if fit:
        text += (f" The fit: {fit.get('divergences')} divergences, worst R-hat {fit.get('max_r_hat')}, smallest "
                 f"bulk ESS {fit.get('min_ess_bulk')}; {fit.get('not_converged') or 0} of {fit.get('groups')} groups "
                 "not converged (named in notes.json).")
    if "word_points" in summary:
        text += " Word learning (word_points.csv, per model): " + "; ".join(
            f"{c.upper()} " + ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in v.items())
            for c, v in _ordered(summary["word_points"])) + "."
    if "children" in summary:
        ch = summary["children"]
        text += (f" Children's ages (children.csv): {ch['words']} of the words produced by a target child, first at "
                 f"{ch['youngest_months']} to {ch['oldest_months']} months.")
    if "regression" in summary:
        ages = {k.split("|")[0]: v for k, v in summary["regression"].items() if "age" in k.split("|")[1]}
        text += " Regression of the models' points on the children's age (log10 words per month): " + "; ".join(
            f"{c.upper()} {v['estimate']:+.3f} ± {v['se']:.3f} ({v['n_words']} words)" for c, v in _ordered(ages)) + "."
    return "\n".join(_wrap(text)) + "\n"


def _wrap(text: str, width: int = 115) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)



# ---------------------------------------------------------------- the embedded default (config.yaml: results/demo)
def demo(results: Path) -> dict:
    """docs/demo.md's numbers of the embedded default: each model's training, the guardrails that fire and their
    findings, the two Bayesian models' filtering numbers, and the power the config's design has."""
    models = {}
    for path in sorted((results / "models").glob("*/*/*/seed*/train_summary.json")):
        s = _json(path)
        models["/".join(path.parent.parts[-4:])] = {
            "best_step": s["best_step"], "steps": s["steps"], "stop_reason": s["stop_reason"],
            "best_dev_loss": round(float(s["best_dev_loss"]), 3)}
    if not models:
        raise PovstimError(f"{results / 'models'}: no */*/*/seed*/train_summary.json (run the demo first)")
    g = _json(results / "analysis" / "guardrails" / "guardrails.json")
    checks = {name: {"fired": bool(c["fired"]),
                     "findings": [{"scope": f.get("scope"), "detail": f.get("detail"),
                                   **({"accuracy": f["accuracy"]} if "accuracy" in f else {})}
                                  for f in c.get("findings", [])]}
              for name, c in sorted(g["checks"].items())}
    bayes = results / "analysis" / "bayes"
    contrasts = {f"{r['contrast']}|{r['scope']}": {k: _num(r[k]) for k in ("median", "lower", "upper", "p_gt0")}
                 for r in _csv(bayes / "three_level_contrasts.csv")}
    table12 = {r["Predictor"]: {"estimate": r["Estimate"], "interval": r["95% CrI"]} for r in _csv(bayes / "table12.csv")}
    fits = {}
    for name, file in (("table12", "diagnostics.json"), ("three_level", "three_level_diagnostics.json")):
        d = _json(bayes / file)
        fits[name] = {"converged": bool(d.get("converged")), "divergences": d.get("divergences"),
                      "max_r_hat": d.get("max_r_hat"), "min_ess_bulk": d.get("min_ess_bulk")}
    from .. import config as cfg
    from ..analysis.models import power as P

    rep = P.analyse(cfg.load(results / "config.yaml"), results)
    return {"models": models, "checks": checks, "contrasts": contrasts, "table12": table12, "fits": fits,
            "power": _power_summary(rep), "cost": run_cost(results)}


def _power_summary(rep: dict) -> dict:
    """The design's power (analysis/models/power.py on the run's recorded config): overall contrasts of the
    first learner, and the seeds or pairs that reach the target."""
    arch = rep["rows"][0]["arch"] if rep["rows"] else None
    rows = {r["contrast"]: {"se": round(r["se"], 3), "effect": r["effect"],
                            "power": None if r["power"] is None else round(r["power"], 2), "mde": round(r["mde"], 2)}
            for r in rep["rows"] if r["arch"] == arch and r["scope"] == "overall"}
    return {"arch": arch, "seeds": rep["seeds"], "sizes": rep["sizes"], "paradigms": sum(map(len, rep["items"].values())),
            "pairs": sorted({n for v in rep["items"].values() for n in v}), "target": rep["target"], "overall": rows,
            "recommend": {k: rep["recommend"][k] for k in ("seeds", "pairs_per_paradigm")}}


_LEVEL = {"baby-f": "BABY-F", "baby": "BABY", "wiki": "WIKI"}


def _span(values, fmt="{}") -> str:
    lo, hi = min(values), max(values)
    return fmt.format(lo) if lo == hi else f"{fmt.format(lo)}-{fmt.format(hi)}"


def render_demo_training(summary: dict) -> str:
    models = summary["models"]
    reasons: dict[str, int] = {}
    for m in models.values():
        reasons[m["stop_reason"]] = reasons.get(m["stop_reason"], 0) + 1
    parts = []
    for size in sorted({k.split("/")[2] for k in models}, key=lambda x: float(x.rstrip("kM"))):
        at = {k: m for k, m in models.items() if k.split("/")[2] == size}
        losses = []
        for conds, label in ((("baby-f", "baby"), "BABY/BABY-F"), (("wiki",), "WIKI")):
            ls = [m["best_dev_loss"] for k, m in at.items() if k.split("/")[1] in conds]
            if ls:
                losses.append(f"{_span(ls, '{:.2f}')} {label}")
        last = sum(m["best_step"] == m["steps"] for m in at.values())
        parts.append(f"best steps {_span([m['best_step'] for m in at.values()])} at {size} (of "
                     f"{_span([m['steps'] for m in at.values()])} steps; the best is the last step in {last} of "
                     f"{len(at)}; dev losses {', '.join(losses)})")
    said = "; ".join(f"{n} `{r}`" for r, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])))
    checks = summary["checks"]
    passed = [c for c in ("undertrained", "equal_tokens") if c in checks and not checks[c]["fired"]]
    text = (f"The {len(models)} models stopped by {said}: " + "; ".join(parts) + "."
            + (f" {' and '.join(f'`{c}`' for c in passed)} pass." if passed else ""))
    return "\n".join(_wrap(text)) + "\n"


def _interval(r: dict) -> str:
    return f"{r['median']:+.2f} [{r['lower']:.2f}, {r['upper']:.2f}]"


def _credible(r: dict) -> bool:
    return r["lower"] > 0 or r["upper"] < 0


def render_demo_filtering(summary: dict) -> str:
    c, t = summary["contrasts"], summary["table12"]
    qf_term = t.get("Question Formation × Filtering")
    fb_qf, fb_all = c.get("BABY-F vs. BABY|Question Formation"), c.get("BABY-F vs. BABY|overall")
    bw_qf = c.get("BABY vs. WIKI|Question Formation")
    if not (qf_term and fb_qf and fb_all and bw_qf):
        raise PovstimError("demo: the snapshot lacks Table 12's Question Formation × Filtering or the three-level "
                           "contrasts of question formation")
    est = float(qf_term["estimate"])
    reads = "worse" if est < 0 else "better"
    text = (f"Table 12's Question Formation × Filtering is {est:+.2f} "
            f"{qf_term['interval']} log-odds, which reads as filtering faring {reads} on question formation; the "
            f"three-level model's BABY-F vs. BABY on question formation is {_interval(fb_qf)} "
            f"(P(> 0) = {fb_qf['p_gt0']:.2f}), and BABY vs. WIKI there {_interval(bw_qf)} "
            f"(P(> 0) = {bw_qf['p_gt0']:.2f}).")
    lo, hi = (float(x) for x in qf_term["interval"].strip("[]").split(","))
    term_credible = lo > 0 or hi < 0
    direct_agrees = _credible(fb_qf) and (fb_qf["median"] < 0) == (est < 0)
    if term_credible and not direct_agrees:
        text += (" The two disagree in the way docs/analysis.md warns about: the interaction is measured against "
                 "the WIKI cells as well, and the direct contrast does not show it.")
    elif term_credible:
        text += " Here the direct contrast agrees with the interaction."
    text += (f" Overall BABY-F and BABY " + ("differ credibly" if _credible(fb_all) else "do not differ credibly")
             + f" ({_interval(fb_all)}, P(> 0) = {fb_all['p_gt0']:.2f}).")
    fits = summary["fits"]
    text += " Fits: " + "; ".join(
        f"{name} {'converged' if f['converged'] else 'NOT converged'} ({f['divergences']} divergences, R-hat "
        f"{f['max_r_hat']:.3f}, bulk ESS {f['min_ess_bulk']:.0f})" for name, f in fits.items()) + "."
    return "\n".join(_wrap(text)) + "\n"


def _model_of(detail: str) -> str:
    """'gpt2-tiny wiki 10k: accuracy ...' -> 'WIKI 10k'."""
    words = detail.split(":")[0].split()
    return " ".join([_LEVEL.get(words[1], words[1]), *words[2:]]) if len(words) >= 3 else detail.split(":")[0]


def render_demo_checks(summary: dict) -> str:
    checks = summary["checks"]
    fired = [n for n, c in checks.items() if c["fired"]]
    lines = [f"Checks that fire ({len(fired)} of {len(checks)}): {', '.join(f'`{n}`' for n in fired) or 'none'}; "
             f"pass: {', '.join(f'`{n}`' for n, c in checks.items() if not c['fired']) or 'none'}.", ""]
    for name in fired:
        findings = checks[name]["findings"]
        if name == "below_chance":
            per: dict[str, list[str]] = {}
            for f in findings:
                per.setdefault(f["scope"], []).append(f"{_model_of(f['detail'])} {100 * f['accuracy']:.1f}%")
            said = "; ".join(f"{scope.split('/', 1)[-1]}: {', '.join(v)}" for scope, v in per.items())
            lines.append(f"* `below_chance` ({len(findings)} findings): {said}.")
        elif name == "lexical_preference":
            said = "; ".join(f"{f['scope'].split('/', 1)[-1]}: {f['detail'].split(': e.g.')[0]}" for f in findings)
            lines.append(f"* `lexical_preference` ({len(findings)} paradigms): {said}.")
        else:
            said = "; ".join(f"{f['scope']}: {f['detail']}" for f in findings)
            lines.append(f"* `{name}` ({len(findings)} finding{'s' * (len(findings) != 1)}): {said}.")
    out = []
    for ln in lines:
        if ln.startswith("* "):
            wrapped = _wrap(ln[2:], 113)
            out += ["* " + wrapped[0]] + ["  " + w for w in wrapped[1:]]
        else:
            out += _wrap(ln) if ln else [""]
    return "\n".join(out) + "\n"


def render_demo_power(summary: dict) -> str:
    pw = summary["power"]
    fb = pw["overall"].get("BABY-F vs. BABY")
    if fb is None:
        raise PovstimError("demo: the snapshot's power has no BABY-F vs. BABY contrast")
    rec = pw["recommend"]
    need = " or ".join(x for x in (f"{rec['seeds']} seeds" if rec["seeds"] else "",
                                   f"{rec['pairs_per_paradigm']} pairs per paradigm" if rec["pairs_per_paradigm"]
                                   else "") if x) or "more than power.max_seeds seeds"
    pairs = "/".join(str(n) for n in pw["pairs"])
    power_at = "" if fb["power"] is None else f", power {fb['power']:.2f} at {fb['effect']:.2f}"
    text = (f"On the embedded default ({pw['seeds']} seeds × {pw['sizes']} sizes, {pw['paradigms']} paradigms × "
            f"{pairs} pairs) BABY-F vs. BABY has SE {fb['se']:.3f}{power_at} and MDE {fb['mde']:.2f}; "
            f"{pw['target']:.0%} needs {need}.")
    return "\n".join(_wrap(text)) + "\n"


# ---------------------------------------------------------------- other studies' released results (povstim release)
def fict_release(results: Path) -> dict:
    """configs/release/fict.yaml's run: the Δ check, the corpora's sizes, the raw Δ per filter and the Δ model."""
    a = results / "analysis"
    check = _json(a / "delta_check.json")
    sizes = _csv(a / "tables" / "corpus_sizes.csv")
    filt = [r for r in sizes if r["corpus"] != "full"]
    small = min(filt, key=lambda r: float(r["share_of_full"]))
    raw = _csv(a / "tables" / "delta_targets.csv")
    out = {"check": {k: check[k] for k in ("rows", "cells", "match", "differ")},
           "sizes": {"filters": len(filt), "min_share": _num(small["share_of_full"]), "min_corpus": small["corpus"],
                     "max_share": max(_num(r["share_of_full"]) for r in filt),
                     "full_tokens": int(float(next(r for r in sizes if r["corpus"] == "full")["tokens"]))},
           "raw": {"comparisons": len(raw), "target_below_control": sum(_num(r["difference"]) < 0 for r in raw),
                   "largest": min(({"corpus": r["corpus"], "arch": r["arch"], "delta_target": _num(r["delta_target"])}
                                   for r in raw), key=lambda r: r["delta_target"])}}
    delta = a / "construction_delta" / "delta.tsv"
    if delta.is_file():
        rows = _tsv(delta)
        out["model"] = {"fits": len(rows), "converged": sum(r["converged"] == "True" for r in rows),
                        "diff_below_0": sum(_num(r["diff_upper"]) < 0 for r in rows),
                        "target_below_0": sum(_num(r["delta_target_upper"]) < 0 for r in rows),
                        "max_r_hat_delta": max(_num(r["max_r_hat_delta"]) or 0 for r in rows),
                        "divergences": sum(int(float(r["divergences"])) for r in rows)}
    return out


def render_fict_release(s: dict) -> str:
    c, z, r = s["check"], s["sizes"], s["raw"]
    text = (f"Δ check: **{c['match']:,} of {c['cells']:,}** Δ cells ({c['rows']:,} rows × 2 columns) equal the "
            f"authors' `blimp_delta_same_seed` / `blimp_delta_all_seed_avg` within 1e-9; {c['differ']} differ. "
            f"Corpus sizes: the {z['filters']} filtered corpora hold {z['min_share']:.1%} ({z['min_corpus']}) to "
            f"{z['max_share']:.3%} of the full corpus's {z['full_tokens']:,} tokens. Raw Δ: in "
            f"{r['target_below_control']} of {r['comparisons']} corpus × arch comparisons the mean Δ on the filter's "
            f"targets is below the mean Δ on the other paradigms; the largest target loss is "
            f"{_f(r['largest']['delta_target'])} ({r['largest']['corpus']}, {r['largest']['arch']}).")
    m = s.get("model")
    if m:
        text += (f" Δ model: {m['fits']} fits, {m['converged']} pass every convergence check (max R-hat of the "
                 f"reported Δs {m['max_r_hat_delta']:.3f}, {m['divergences']} divergences in all); the target Δ's "
                 f"95% interval lies below 0 in {m['target_below_0']}, and target − control below 0 in "
                 f"{m['diff_below_0']}.")
    return "\n".join(_wrap(text)) + "\n"


def childes_vs_wiki_release(results: Path) -> dict:
    """configs/release/childes-vs-wiki.yaml's run: suites, final-checkpoint differences, acquisition, source model."""
    a = results / "analysis"
    notes = _json(a / "notes.json")
    final = _csv(a / "tables" / "final_checkpoint.csv")
    out = {"suites": {}, "gaps": len(notes["notes"])}
    for suite in notes["suites"]:
        rows = [r for r in final if r["suite"] == suite and r["source"] == "childes"]
        diffs = [_num(r["childes_minus_wikipedia"]) for r in rows]
        acq = [r for r in _csv(a / "acquisition" / "summary.csv") if r["suite"] == suite]
        con = [r for r in _csv(a / "acquisition" / "contrasts.csv") if r["suite"] == suite and r["level"] == "paradigm"]
        entry = {"paradigms": len(rows), "childes_below": sum(d < 0 for d in diffs),
                 "diff_min": min(diffs), "diff_max": max(diffs),
                 "acquired": {src: sum(r["acquisition"] in ("acquired", "partly") for r in acq if r["condition"] == src)
                              for src in ("childes", "wikipedia")},
                 "childes_later": sum(r["status"] == "later" or (_num(r["lo"]) or 0) > 0 for r in con)}
        model = a / "bayes" / suite / "source_contrasts.csv"
        if model.is_file():
            mc = _csv(model)
            o = next(r for r in mc if r["scope"] == "overall")
            entry["model"] = {"overall": [_num(o["median"]), _num(o["lower"]), _num(o["upper"])],
                              "below_0": sum(_num(r["upper"]) < 0 for r in mc if r["scope"] != "overall"),
                              "above_0": sum(_num(r["lower"]) > 0 for r in mc if r["scope"] != "overall")}
            fit = notes.get("models", {}).get(suite, {})
            entry["converged"], entry["divergences"] = fit.get("converged"), fit.get("divergences")
        out["suites"][suite] = entry
    return out


def render_childes_vs_wiki_release(s: dict) -> str:
    lines = ["| suite | paradigms | CHILDES − Wikipedia, last checkpoint | CHILDES below | acquired (CHILDES / Wiki) "
             "| CHILDES later | model: CHILDES vs. Wikipedia, log-odds (paradigms below / above 0) |",
             "|---|---|---|---|---|---|---|"]
    for suite, e in s["suites"].items():
        m = e.get("model")
        model = (f"{_f(m['overall'][0], 2)} [{_f(m['overall'][1], 2)}, {_f(m['overall'][2], 2)}] "
                 f"({m['below_0']} / {m['above_0']})"
                 f"{'' if e.get('converged') else ', not converged (%s divergences)' % e.get('divergences')}") if m else "n/a"
        lines.append(f"| {suite} | {e['paradigms']} | {_f(e['diff_min'])} to {_f(e['diff_max'])} | "
                     f"{e['childes_below']} | {e['acquired']['childes']} / {e['acquired']['wikipedia']} | "
                     f"{e['childes_later']} | {model} |")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- the registry
EXPERIMENTS: dict[str, Callable[[Path], dict]] = {
    "constructions-demo": constructions_demo,
    "dose-demo": dose_demo,
    "acquisition-demo": acquisition_demo,
    "demo": demo,
    "fict-release": fict_release,
    "childes-vs-wiki-release": childes_vs_wiki_release,
}
BLOCKS = {b.name: b for b in [
    Block("constructions-demo/removals", "docs/constructions.md", lambda s: render_removals(s)),
    Block("constructions-demo/raw-delta", "docs/constructions.md", lambda s: render_raw_delta(s)),
    Block("constructions-demo/delta", "docs/constructions.md", lambda s: render_delta(s)),
    Block("dose-demo/replace", "docs/manipulations.md", lambda s: render_replace(s)),
    Block("acquisition-demo/points", "docs/analysis.md", lambda s: render_acquisition(s)),
    Block("acquisition-demo/cost", "docs/analysis.md", render_cost),
    Block("demo/training", "docs/demo.md", render_demo_training),
    Block("demo/filtering", "docs/demo.md", render_demo_filtering),
    Block("demo/checks", "docs/demo.md", render_demo_checks),
    Block("demo/power", "docs/analysis.md", render_demo_power),
    Block("demo/cost", "docs/own-data.md", render_cost),
    Block("fict-release/summary", "docs/published.md", render_fict_release),
    Block("childes-vs-wiki-release/summary", "docs/published.md", render_childes_vs_wiki_release),
]}


def snapshot(experiment: str, root: Path = ROOT) -> dict:
    path = root / SNAPSHOTS / f"{experiment}.json"
    if not path.is_file():
        raise PovstimError(f"{path}: no snapshot of {experiment}'s numbers (run the demo, then --update {experiment})")
    return json.loads(path.read_text(encoding="utf-8"))


def blocks_in(text: str) -> dict[str, tuple[int, int]]:
    """{block name: (start, end) of its body} of a doc's text; an unclosed block is an error."""
    out = {}
    for m in BEGIN.finditer(text):
        end = text.find(END, m.end())
        if end < 0:
            raise PovstimError(f"demo-numbers block {m['name']} has no closing {END}")
        out[m["name"]] = (m.end(), end)
    return out


def rendered(name: str, root: Path = ROOT) -> str:
    experiment = name.split("/")[0]
    return BLOCKS[name].render(snapshot(experiment, root))


def check(root: Path = ROOT) -> list[str]:
    """What differs between the docs and their snapshots: one line per block."""
    problems = []
    for name, block in BLOCKS.items():
        doc = root / block.doc
        found = blocks_in(doc.read_text(encoding="utf-8"))
        if name not in found:
            problems.append(f"{block.doc}: no demo-numbers block {name}")
            continue
        start, end = found[name]
        have = doc.read_text(encoding="utf-8")[start:end]
        want = rendered(name, root)
        if have != want:
            problems.append(f"{block.doc}: block {name} differs from docs/demo-numbers/{name.split('/')[0]}.json "
                            f"(edited by hand? regenerate: python -m povstim.preflight.docnumbers --update "
                            f"{name.split('/')[0]})")
    return problems


# A run's cost typed into a doc ("3 min 47 s", "443 CPU-s") is a record of one run on one machine: outside the
# generated blocks it must say when it was measured (a date in its paragraph or its section's heading), so no
# reader takes an old timing for what the current code costs.
RUN_TIME = re.compile(r"\b\d+ min \d+ s\b|\b[\d,.]+ CPU-s\b")
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")


def undated_timings(root: Path = ROOT) -> list[str]:
    """``doc:line: ...`` for each paragraph of README.md and docs/*.md, outside the generated blocks, that types a
    run's time or CPU without a date in the paragraph or earlier in its section."""
    out = []
    for doc in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        for start, end in sorted(blocks_in(text).values(), reverse=True):
            text = text[:start] + "\n" * text.count("\n", start, end) + text[end:]  # keep the line numbers
        dated, line = False, 1
        for para in re.split(r"(\n\s*\n)", text):
            if para.strip():
                if para.lstrip().startswith("#"):
                    dated = False
                dated = dated or bool(DATE.search(para))
                hit = RUN_TIME.search(para)
                if hit and not dated:
                    at = line + para.count("\n", 0, hit.start())
                    out.append(f"{doc.relative_to(root)}:{at}: '{hit.group(0)}' has no date in its paragraph or "
                               "section (say when it was measured)")
            line += para.count("\n")
    return out


def provenance(run: Path) -> dict:
    """Which code and which run a snapshot's numbers come from: the checkout's commit (``+dirty`` with uncommitted
    changes), the run's config record (``results/<exp>/config.yaml``: its sha256 and when it was written) and the
    day of the snapshot."""
    def git(*args):
        got = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
        return got.stdout.strip() if got.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit and git("status", "--porcelain", "--untracked-files=no"):
        commit += "+dirty"
    record = run / "config.yaml"
    out = {"commit": commit or "unknown (not a git checkout)", "snapshot_date": date.today().isoformat()}
    if record.is_file():
        out["run"] = {"config_sha256": sha256_file(record),
                      "config_written": datetime.fromtimestamp(record.stat().st_mtime, timezone.utc)
                      .strftime("%Y-%m-%dT%H:%M:%SZ")}
    return out


def update(experiment: str, results: Path, root: Path = ROOT) -> list[str]:
    """Snapshot ``results/<experiment>`` (with its :func:`provenance`) and rewrite its blocks in the docs; the
    docs changed."""
    numbers = {**EXPERIMENTS[experiment](results / experiment), "provenance": provenance(results / experiment)}
    text = json.dumps(numbers, indent=1, sort_keys=True, ensure_ascii=False)
    summary = json.loads(text)  # rendered as --check will render it: from the snapshot, keys sorted
    with atomic_write(root / SNAPSHOTS / f"{experiment}.json") as fh:
        fh.write(text + "\n")
    changed = []
    for name, block in BLOCKS.items():
        if not name.startswith(experiment + "/"):
            continue
        doc = root / block.doc
        text = doc.read_text(encoding="utf-8")
        found = blocks_in(text)
        if name not in found:
            raise PovstimError(f"{block.doc}: no demo-numbers block {name} to fill")
        start, end = found[name]
        new = text[:start] + block.render(summary) + text[end:]
        if new != text:
            with atomic_write(doc) as fh:
                fh.write(new)
            changed.append(block.doc)
    return changed


def compare(experiment: str, results: Path, root: Path = ROOT) -> list[str]:
    """Numbers of a fresh run that differ from the snapshot (paths into the summary). The jobs' wall times
    (``cost``) are left out: they differ on every run and machine, and are what the code measured, not computed."""
    fresh = json.loads(json.dumps(EXPERIMENTS[experiment](results / experiment)))
    old = snapshot(experiment, root)
    for key in ("cost", "provenance"):  # a rerun's timings and its commit and run are its own
        fresh.pop(key, None)
        old.pop(key, None)
    out: list[str] = []

    def walk(a, b, where):
        if isinstance(a, dict) and isinstance(b, dict):
            for k in sorted(set(a) | set(b)):
                walk(a.get(k), b.get(k), f"{where}/{k}")
        elif a != b:
            out.append(f"{where}: snapshot {b!r}, run {a!r}")

    walk(fresh, old, experiment)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m povstim.preflight.docnumbers", description=__doc__.split("\n")[0])
    p.add_argument("--results", default="results", help="the results folder of the demo runs (default: results)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--update", nargs="+", metavar="EXP", choices=sorted(EXPERIMENTS))
    g.add_argument("--compare", nargs="+", metavar="EXP", choices=sorted(EXPERIMENTS))
    g.add_argument("--check", action="store_true", help="the docs against the snapshots (the default)")
    args = p.parse_args(argv)
    try:
        if args.update:
            for exp in args.update:
                changed = update(exp, Path(args.results))
                print(f"{exp}: snapshot written; {', '.join(dict.fromkeys(changed)) or 'no doc'} changed")
            return 0
        if args.compare:
            diffs = [d for exp in args.compare for d in compare(exp, Path(args.results))]
            print("\n".join(diffs) or "the runs give the snapshots' numbers")
            return 1 if diffs else 0
        problems = check() + undated_timings()
    except PovstimError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print("\n".join(problems) or f"{len(BLOCKS)} demo-numbers blocks match their snapshots")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
