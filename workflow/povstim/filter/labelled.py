"""The DPE filter against hand labels: recall and precision with Wilson intervals (issue 53).

Where no gold treebank exists for a language (French child-directed speech), the filter is measured on
sentences a person labelled from the phenomena's definitions. A labels file is a TSV with ``#`` comment
lines, a header, and per sentence its ``row`` (1-based CSV record of the text file, header = 1), the first
10 hex digits of the SHA-1 of its text (``sha1``: the file the labels were written on, checked), and a
0/1 column per phenomenon. The text is read from the user's own copy (CHILDES text is never committed),
cleaned like the corpus (``sources.normalize.finish``), parsed by the configured parser and run through
:func:`povstim.dpe.find_dpe`.

The numbers are in-sample for whoever wrote the rules after reading the labelled sentences; the French
rules were written from the definitions before the sample was drawn (docs/own-data.md).
"""

from __future__ import annotations

import csv
import hashlib
from dataclasses import dataclass
from pathlib import Path

from .. import dpe
from ..io import PovstimError
from ..sources.normalize import CleanStats, Style, finish


@dataclass(frozen=True)
class Labelled:
    row: int
    text: str            # as cleaned for the corpus
    labels: dict         # phenomenon -> bool


def wilson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of k successes in n trials (scipy's binomtest); (nan, nan) when n is 0."""
    if n == 0:
        return float("nan"), float("nan")
    # deferred: scipy is heavy and this module is imported by the filter's command line
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def read_labels(labels: str | Path, texts: str | Path, language: str, text_column: str = "text") -> list[Labelled]:
    """The labelled sentences: their labels and their cleaned text from ``texts`` (a CSV with a header)."""
    labels, texts = Path(labels), Path(texts)
    try:
        with open(texts, encoding="utf-8", newline="") as fh:
            reader = csv.reader(fh)
            header = next(reader)
            if text_column not in header:
                raise PovstimError(f"{texts}, line 1: no column {text_column!r} (found: {', '.join(header)})")
            col = header.index(text_column)
            rows = {n: r[col] for n, r in enumerate(reader, 2)}
        lines = [ln for ln in labels.read_text(encoding="utf-8").splitlines() if ln.strip()]
    except (OSError, UnicodeDecodeError, StopIteration) as exc:
        raise PovstimError(f"cannot read {texts} or {labels}: {exc}") from None
    body = [(n, ln) for n, ln in enumerate(lines, 1) if not ln.startswith("#")]
    if not body:
        raise PovstimError(f"{labels}: no header line")
    header = body[0][1].split("\t")
    for need in ("row", "sha1"):
        if need not in header:
            raise PovstimError(f"{labels}: the header lacks column {need!r}")
    phenomena = [h for h in header if h in dpe.PHENOMENA]
    if not phenomena:
        raise PovstimError(f"{labels}: no column names a DPE phenomenon (known: {', '.join(sorted(dpe.PHENOMENA))})")
    style = Style(language=language, min_words=1)
    out = []
    for n, ln in body[1:]:
        cells = dict(zip(header, ln.split("\t")))
        row = int(cells["row"])
        if row not in rows:
            raise PovstimError(f"{labels}, line {n}: row {row} is not in {texts}")
        text = rows[row]
        if hashlib.sha1(text.encode("utf-8")).hexdigest()[:10] != cells["sha1"]:
            raise PovstimError(f"{labels}, line {n}: row {row} of {texts} is not the text these labels were "
                               "written on (its SHA-1 differs): another version of the file?")
        cleaned = finish(text, style, CleanStats())
        if cleaned is None:
            raise PovstimError(f"{labels}, line {n}: row {row} cleans to nothing")
        out.append(Labelled(row, cleaned, {p: cells[p].strip() == "1" for p in phenomena}))
    return out


def measure(items: list[Labelled], sentences, mode: str) -> list[dict]:
    """Per phenomenon: the rule's decisions on the parses ``sentences`` (one per item) against the labels."""
    out = []
    for phen in items[0].labels if items else []:
        fired = [bool(dpe.find_dpe(s, mode, (phen,))) for s in sentences]
        gold = [it.labels[phen] for it in items]
        tp = sum(f and g for f, g in zip(fired, gold))
        fp = sum(f and not g for f, g in zip(fired, gold))
        fn = sum(g and not f for f, g in zip(fired, gold))
        r_lo, r_hi = wilson(tp, tp + fn)
        p_lo, p_hi = wilson(tp, tp + fp)
        out.append({"phenomenon": phen, "mode": mode, "n": len(items), "positives": tp + fn, "tp": tp, "fp": fp,
                    "fn": fn, "recall": tp / (tp + fn) if tp + fn else float("nan"), "recall_lo": r_lo,
                    "recall_hi": r_hi, "precision": tp / (tp + fp) if tp + fp else float("nan"),
                    "precision_lo": p_lo, "precision_hi": p_hi})
    return out


def markdown(rows: list[dict]) -> str:
    """The table as Markdown (docs, the report)."""
    lines = ["| phenomenon | mode | sentences | positives | recall [95% Wilson] | precision [95% Wilson] |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['phenomenon']} | {r['mode']} | {r['n']} | {r['positives']} | "
                     f"{r['recall']:.2f} [{r['recall_lo']:.2f}, {r['recall_hi']:.2f}] ({r['tp']}/{r['tp'] + r['fn']}) | "
                     f"{r['precision']:.2f} [{r['precision_lo']:.2f}, {r['precision_hi']:.2f}] "
                     f"({r['tp']}/{r['tp'] + r['fp']}) |")
    return "\n".join(lines) + "\n"
