"""The residual evidence: how many direct-evidence sentences a filtered condition (BABY-F) still holds.

The filter removes what its rules flag on the parse; what they miss stays. With the measured recall ``r`` of a
phenomenon's rules (the configured parser and filter mode against the reference rule on gold trees), ``n``
removals stand for ``n / r`` sentences of evidence in all, so the expected number left in BABY-F is

    residual = n * (1 - r) / r

with an interval from the Wilson 95% interval ``[r_lo, r_hi]`` of the recall: ``[n (1 - r_hi) / r_hi,
n (1 - r_lo) / r_lo]`` (a recall interval reaching 0 leaves no upper bound). Counting every removal as evidence
(precision taken as 1) makes this an upper estimate when the rules over-remove; the figure says how much
evidence the filter's recall leaves behind, not a count of what is there.

Where the recall comes from, in order:

1. the config's own ``filter_validation`` output (``results/<exp>/filter/validation.json``), its
   cross-validated counts for the configured mode, when the file exists;
2. the table shipped with povstim, ``filter/measured_recall.yaml`` (per parser backend and mode; its
   provenance -- treebank, parser, in or out of sample -- travels with every number);
3. else: "recall not measured" -- never a number.

A recall measured on fewer than ``MIN_POSITIVES`` (20) reference positives is "not measurable": its interval
is too wide to say anything, and no number is given. With the ``gold`` backend and ``posh`` mode the rules run
on the reference trees themselves: nothing is missed by construction (residual 0).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from ..io import PovstimError, load_yaml, project_path

TABLE = Path(__file__).with_name("measured_recall.yaml")
MIN_POSITIVES = 20
Z95 = 1.959963984540054


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of the proportion k / n."""
    if n <= 0:
        return 0.0, 1.0
    p = k / n
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, centre - half), min(1.0, centre + half)


def _left(n: int, r: float) -> float | None:
    return None if r <= 0 else n * (1 - r) / r


def residual(removed: int, tp: int, positives: int) -> dict:
    """The expected direct-evidence sentences left, from ``removed`` removals and a recall of tp / positives."""
    if positives < MIN_POSITIVES:
        return {"status": "not measurable", "positives": positives,
                "text": f"recall not measurable ({positives} reference positives < {MIN_POSITIVES})"}
    r = tp / positives
    lo, hi = wilson(tp, positives)
    est, low, high = _left(removed, r), _left(removed, hi), _left(removed, lo)
    if est is None:
        return {"status": "recall 0", "positives": positives, "recall": 0.0,
                "text": f"recall 0 of {positives}: the filter finds none of this evidence"}
    hi_txt = f"{high:,.0f}" if high is not None else "no bound"
    return {"status": "ok", "expected": round(est, 1), "low": round(low, 1),
            "high": None if high is None else round(high, 1), "recall": round(r, 3), "recall_low": round(lo, 3),
            "recall_high": round(hi, 3), "positives": positives,
            "text": f"~{est:,.0f} [{low:,.0f}, {hi_txt}] (recall {r:.2f} [{lo:.2f}, {hi:.2f}], {positives} positives)"}


def shipped_table(path: Path = TABLE) -> dict:
    return load_yaml(path, mapping=None, what="the measured-recall table") or {}


def validation_recall(path: str | Path, mode: str) -> dict[str, dict]:
    """phenomenon -> {tp, positives, provenance} from a filter_validation output's cross-validated counts."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise PovstimError(f"{path}: not a filter_validation output ({exc})") from None
    per = ((data.get("modes") or {}).get(mode) or {}).get("per_phenomenon") or {}
    tb = data.get("treebank") or {}
    prov = (f"filter_validation: {tb.get('path', '?')} ({data.get('n_sentences', '?')} sentences), parser "
            f"{data.get('parser', '?')}, cross-validated by {', '.join((data.get('cv') or {}).get('group_by') or [])}")
    sample = "cross-validated"
    if data.get("labels"):  # measured against hand labels (filter/labelled.py): nothing fitted, no folds
        prov = (f"filter_validation: {data['labels'].get('path', '?')} ({data.get('n_sentences', '?')} hand-labelled "
                f"sentences), parser {data.get('parser', '?')}, {data.get('sample', '')}")
        sample = "out" if str(data.get("sample", "")).startswith("out of sample") else "in"
    out = {}
    for phen, v in per.items():
        c = (v.get("cross_validated") or {}).get("reference") or {}
        if "tp" in c:
            out[phen] = {"tp": int(c["tp"]), "positives": int(c["tp"]) + int(c["fn"]), "provenance": prov,
                         "sample": sample}
    return out


def recall_source(backend: str, mode: str, validation: str | Path | None = None) -> tuple[dict[str, dict], str, bool]:
    """(phenomenon -> {tp, positives, sample, provenance}, where the numbers come from, exact) for a parser
    backend and filter mode; ``validation``: the run's filter_validation output, used when it exists; ``exact``:
    the gold backend in posh mode (the rules run on the reference trees)."""
    if backend == "gold" and mode == "posh":
        return {}, "gold trees, posh mode: the rules run on the reference trees (nothing missed by construction)", True
    if validation is not None and Path(validation).is_file():
        return validation_recall(validation, mode), f"this run's filter_validation ({validation})", False
    table = shipped_table()
    entry = table.get(backend) or {}
    got = {p: {**v, "provenance": entry.get("provenance", "")} for p, v in (entry.get(mode) or {}).items()}
    if not got:
        return {}, f"no measured recall for parser {backend} in {mode} mode (filter/measured_recall.yaml)", False
    return got, f"povstim's measured-recall table (filter/measured_recall.yaml: {entry.get('provenance', '')})", False


def config_recall(config: dict, backend: str, mode: str) -> tuple[dict[str, dict], str, bool]:
    """:func:`recall_source` for a config's parser ``backend`` and filter ``mode`` (as its settings objects say),
    with its filter_validation output (``results/<experiment>/filter/validation.json``) when the config has the
    section and the file exists."""
    validation = None
    if config.get("filter_validation"):
        validation = project_path(Path("results") / str(config.get("experiment", "")) / "filter" / "validation.json")
    return recall_source(backend, mode, validation)


def residual_rows(removals: dict[str, int], recalls: dict[str, dict], exact: bool) -> dict[str, dict]:
    """phenomenon -> residual (see :func:`residual`) for each phenomenon's removal count."""
    out = {}
    for phen, n in removals.items():
        if exact:
            out[phen] = {"status": "exact", "expected": 0.0, "text": "0 (gold trees: the reference itself)"}
        elif phen in recalls:
            rc = recalls[phen]
            row = residual(int(n), rc["tp"], rc["positives"])
            row["sample"] = rc.get("sample")
            label = {"in": "in sample", "out": "out of sample"}.get(rc.get("sample"))
            if label and row["status"] == "ok":
                row["text"] += f", {label}"
            out[phen] = row
        else:
            out[phen] = {"status": "not measured", "text": "recall not measured"}
    return out
