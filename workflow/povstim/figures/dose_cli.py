"""``povstim dose``: dose-response curves of the config's dose series, and the counterfactual audit.

From the analysis's items.parquet and the expanded dose conditions (``--series``: series -> construction,
members -> rate, paradigms) -> ``--out-dir``:

  <series>.json          the fit (analysis/models/dose.py): formula, floor for rate 0, slope per decade with its
                         interval, each positive rate's effect vs rate 0, the smallest rate whose effect
                         excludes zero
  <series>_cells.csv     n_correct / n_items per condition x seed x paradigm (what was fitted)
  <series>_curve.csv     the posterior curve: mean and band over log10(rate + floor)
  dose_<series>.png/.pdf the dose-response figure: observed accuracy per seed and its mean per rate, the
                         fitted curve with its credible band, rate 0 drawn at the floor and labelled 0
  counterfactual_audit.html  with --audits: the rows of every replace operation (rewritten and kept, why)

It sits with the figures because it draws them (analysis < figures in the layers).
"""

from __future__ import annotations

import argparse
import html
import json
import logging
from pathlib import Path

from ..io import PovstimError, atomic_write, json_object_arg, write_json

log = logging.getLogger("povstim.dose")

AUDIT_ROWS_SHOWN = 200


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.description = __doc__.split("\n", 1)[1] if __doc__ else None
    p.add_argument("--items", metavar="PARQUET", help="analysis/items.parquet")
    p.add_argument("--series", metavar="JSON", help="series -> {construction, members: {condition: rate}, "
                   "paradigms}")
    p.add_argument("--params", metavar="JSON", help="sampler settings: the config's analysis section (draws, tune, "
                   "chains, seed, target_accept)")
    p.add_argument("--audits", nargs="*", default=[], metavar="TSV",
                   help="operations.tsv of conditions with a replace operation ({condition}/{size}/operations.tsv)")
    p.add_argument("--out-dir", required=True, metavar="DIR")


def plot(name: str, info: dict, cells, curve, fit: dict, out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from .style import apply, save

    apply()
    fig, ax = plt.subplots(figsize=(5.2, 3.6))
    ax.fill_between(curve["rate_plus_floor"], curve["lower"], curve["upper"], color="C0", alpha=0.25,
                    label=f"{int(100 * fit['interval'])}% credible band")
    ax.plot(curve["rate_plus_floor"], curve["mean"], color="C0", label="fit: logit p ~ log10(rate + floor)")
    per_seed = cells.groupby(["rate", "seed"])[["n_correct", "n_items"]].sum().reset_index()
    x = per_seed["rate"] + fit["floor"]
    ax.scatter(x, per_seed["n_correct"] / per_seed["n_items"], s=14, color="0.4", zorder=3, label="one seed")
    mean = cells.groupby("rate")[["n_correct", "n_items"]].sum()
    ax.scatter(mean.index + fit["floor"], mean["n_correct"] / mean["n_items"], marker="D", s=36, color="C3",
               zorder=4, label="all seeds")
    eff = fit["smallest_effective_rate"]
    if eff is not None:
        ax.axvline(eff + fit["floor"], color="C3", ls=":", lw=1)
    ax.set_xscale("log")
    rates = sorted(cells["rate"].unique())
    ax.set_xticks([r + fit["floor"] for r in rates])
    ax.set_xticklabels(["0" if r == 0 else f"{r:g}" for r in rates])
    ax.minorticks_off()
    ax.axhline(0.5, color="0.6", lw=0.8, ls="--")
    ax.set_xlabel(f"rate of {info['construction']} evidence (0 drawn at {fit['floor']:g})")
    ax.set_ylabel("accuracy, target paradigms")
    s = fit["slope_per_decade"]
    ax.set_title(f"{name}: slope {s['mean']:+.2f}/decade [{s['lower']:+.2f}, {s['upper']:+.2f}]; "
                 f"smallest effective rate {'none' if eff is None else f'{eff:g}'}", fontsize=8)
    ax.set_ylim(max(0.0, float(np.nanmin(curve["lower"])) - 0.1), min(1.0, float(np.nanmax(curve["upper"])) + 0.1))
    ax.legend(fontsize=7, loc="best")
    return save(fig, out_dir, f"dose_{name}")


def audit_page(paths: list[str], out: Path) -> None:
    """The counterfactual audit: every replace operation's rows, per condition x size (first rows shown)."""
    parts = ["<html><head><meta charset='utf-8'><title>Counterfactual audit</title></head><body>",
             "<h1>Counterfactual audit (replace operations)</h1>",
             "<p>One row per sentence a <code>replace</code> operation rewrote (<b>rewritten</b>: the variant) or "
             "left as it was (<b>kept</b>: why the variant does not apply). Full rows: each condition's "
             "operations.tsv.</p>"]
    for p in sorted(paths):
        path = Path(p)
        lines = path.read_text(encoding="utf-8").splitlines()
        header = lines[0].split("\t")
        rows = [dict(zip(header, r.split("\t"))) for r in lines[1:]]
        rows = [r for r in rows if r.get("op") == "replace"]
        n_rw = sum(r["action"] == "rewritten" for r in rows)
        parts.append(f"<h2>{html.escape(path.parent.parent.name)} / {html.escape(path.parent.name)}: {n_rw} rewritten, "
                     f"{len(rows) - n_rw} kept</h2><table border='1' cellspacing='0' cellpadding='3'>"
                     "<tr><th>line</th><th>construction</th><th>action</th><th>sentence</th><th>variant</th>"
                     "<th>reason</th></tr>")
        for r in rows[:AUDIT_ROWS_SHOWN]:
            parts.append("<tr>" + "".join(f"<td>{html.escape(str(r.get(k, '')))}</td>" for k in
                                          ("sent_id", "construction", "action", "sentence", "new_sentence", "reason"))
                         + "</tr>")
        parts.append("</table>")
    parts.append("</body></html>")
    with atomic_write(out) as fh:
        fh.write("\n".join(parts) + "\n")


def run(args) -> int:
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    series = json_object_arg(args.series, "--series") if args.series else {}
    if series:
        import pandas as pd

        from ..analysis.models import dose

        if not args.items:
            raise PovstimError("--series needs --items")
        params = json_object_arg(args.params, "--params")
        missing = [k for k in ("draws", "tune", "chains", "seed", "target_accept") if k not in params]
        if missing:
            raise PovstimError(f"--params: the analysis section lacks {', '.join(missing)}")
        items = pd.read_parquet(args.items)
        for name, info in sorted(series.items()):
            paradigms = dose.target_paradigms(items, info["construction"], info.get("paradigms"))
            cells = dose.cells(items, info["members"], paradigms)
            fit = dose.fit(cells, draws=int(params["draws"]), tune=int(params["tune"]), chains=int(params["chains"]),
                           seed=int(params["seed"]), target_accept=float(params["target_accept"]))
            curve = fit.pop("curve")
            fit.pop("seconds")  # wall time is not a result: the outputs are byte-identical on a rerun
            fit.update({"series": name, "construction": info["construction"], "paradigms": paradigms,
                        "members": info["members"]})
            cells.to_csv(out / f"{name}_cells.csv", index=False, float_format="%.10g")
            curve.to_csv(out / f"{name}_curve.csv", index=False, float_format="%.6g")
            write_json(out / f"{name}.json", fit)
            plot(name, info, cells, curve, fit, out)
            log.info("%s: slope %s per decade, smallest effective rate %s", name, fit["slope_per_decade"],
                     fit["smallest_effective_rate"])
    if args.audits:
        audit_page(args.audits, out / "counterfactual_audit.html")
    if not series and not args.audits:
        with atomic_write(out / "NONE.txt") as fh:
            fh.write(json.dumps({"note": "no dose series and no replace operation in this config"}) + "\n")
    return 0
