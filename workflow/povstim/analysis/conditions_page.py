"""The report's conditions table: the evidence each training condition really contains.

One row per condition x size from its ``condition.json`` (``povstim condition``): words, sentences, the
DPE sentences the filter removed and those BABY put back, and per phenomenon the configured reinsert
rate, the measured DPE rate, the measured rate of targeted (disambiguating) evidence and the shortfall
(needed/available). It is rendered by the guardrails stage, next to the ``reinsert_shortfall`` check,
so that changing the page never reruns the condition stage (and the training after it); the same
numbers are ``results/<exp>/corpus/conditions.tsv`` (``povstim condition --table``).
"""

from __future__ import annotations

import html
import logging
from pathlib import Path

from ..io import PovstimError, atomic_write, parse_size

log = logging.getLogger("povstim.guardrails")


def _rate(value) -> str:
    return f"{float(value):.5f}" if value not in ("", None) else ""


def _size_key(size: str):
    try:
        return (0, parse_size(size), size)
    except PovstimError:
        return (1, 0, size)


def write_page(stats: list[dict], out: str | Path) -> None:
    """``stats``: condition.json contents with ``condition`` and ``size`` (guardrails.read_condition)."""
    phens = sorted({p for s in stats for p in list(s.get("dpe_rate", {})) + list(s.get("reinsert_config", {}))})
    head = ["condition", "size", "words", "sentences", "removed (DPE)", "reinserted"]
    for p in phens:
        head += [f"{p}: configured", f"{p}: measured", f"{p}: targeted", f"{p}: shortfall"]
    parts = [("<!DOCTYPE html><html><head><meta charset='utf-8'><style>body{font-family:sans-serif;font-size:13px}"
              "td,th{border:1px solid #999;padding:3px 8px}table{border-collapse:collapse}td{text-align:right}"
              ".short{color:#b00;font-weight:bold}</style></head><body>"),
             ("<p>The evidence each training condition really contains (also results/&lt;experiment&gt;/corpus/"
             "conditions.tsv). <b>removed</b>: sentences the DPE filter took out of the base corpus; "
             "<b>reinserted</b>: removed sentences BABY put back (each replacing another sentence); "
             "<b>measured</b>: the condition's DPE rate; <b>targeted</b>: its rate of disambiguating evidence (the "
             "only kind BABY puts back); <b>shortfall</b>: needed/available when the filter removed fewer targeted "
             "sentences than the configured rate needs.</p>")]
    if not stats:
        parts.append("<p>No condition statistics were found (an analysis-only run?).</p>")
    else:
        parts.append("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>")
    notes = []
    for s in sorted(stats, key=lambda s: (s["condition"], _size_key(s["size"]))):
        cells = [s["condition"], s["size"], f"{s.get('n_words', 0):,}", f"{s.get('n_sentences', 0):,}",
                 f"{s.get('n_dpe_removed', '')}", f"{s.get('n_replaced', '')}"]
        short_cells = set()
        for p in phens:
            short = s.get("reinsert_shortfall", {}).get(p)
            cells += [str(s.get("reinsert_config", {}).get(p, "")), _rate(s.get("dpe_rate", {}).get(p)),
                      _rate(s.get("dpe_rate_targeted", {}).get(p)),
                      "{needed}/{available}".format(**short) if short else ""]
            if short:
                short_cells.add(len(cells) - 1)
                notes.append(f"{s['condition']} {s['size']}: {p} needed {short['needed']} targeted sentences at "
                             f"rate {s['reinsert_config'][p]} but the filter removed {short['available']}; the "
                             f"measured targeted rate is {_rate(s.get('dpe_rate_targeted', {}).get(p, 0))}")
        parts.append("<tr>" + "".join(
            f"<td class='short'>{html.escape(c)}</td>" if i in short_cells else
            f"<td>{html.escape(c)}</td>" if i > 1 else f"<td style='text-align:left'>{html.escape(c)}</td>"
            for i, c in enumerate(cells)) + "</tr>")
    if stats:
        parts.append("</table>")
    if notes:
        parts.append("<p class='short'>SHORTFALL: " + "; ".join(html.escape(n) for n in notes)
                     + ". BABY then holds less evidence than configured (the Guardrails page says whether it is "
                     "below guardrails.reinsert_share of the rate).</p>")
        for n in notes:
            log.warning("SHORTFALL %s", n)
    parts.append("</body></html>\n")
    with atomic_write(out) as fh:
        fh.write("".join(parts))
