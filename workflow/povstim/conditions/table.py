"""One TSV of the counts and measured DPE rates of every condition x size (from condition.json files),
and the same as an HTML page for the report (what evidence each condition really contains)."""

from __future__ import annotations

import html
import json
import logging
from pathlib import Path

from ..io import PovstimError, atomic_write, write_lines

log = logging.getLogger("povstim.condition")

COLUMNS = ("condition", "size", "n_base", "n_dpe_removed", "n_sentences", "n_words", "n_train", "n_dev",
           "n_replaced")


def read_stats(paths: list[str]) -> tuple[list[dict], list[str]]:
    """The condition.json files with their condition and size, and the phenomena they name."""
    stats = []
    phen: set[str] = set()
    for p in paths:
        path = Path(p)
        try:
            s = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise PovstimError(f"cannot read condition stats {path}: {exc}") from None
        s["condition"], s["size"] = path.parent.parent.name, path.parent.name
        phen |= set(s.get("dpe_rate", {})) | set(s.get("reinsert_config", {}))
        stats.append(s)
    return stats, sorted(phen)


def write_table(paths: list[str], out: str) -> None:
    """One row per condition x size (``{condition}/{size}/condition.json``)."""
    stats, phens = read_stats(paths)
    cols = list(COLUMNS) + [f"dpe_rate_{p}" for p in phens] + [f"config_rate_{p}" for p in phens] \
        + [f"targeted_rate_{p}" for p in phens] + [f"shortfall_{p}" for p in phens]
    rows = ["\t".join(cols)]
    for s in sorted(stats, key=lambda s: (s["condition"], s["size"])):
        vals = [s.get(c, "") for c in COLUMNS]
        vals += [s.get("dpe_rate", {}).get(p, "") for p in phens]
        vals += [s.get("reinsert_config", {}).get(p, "") for p in phens]
        vals += [s.get("dpe_rate_targeted", {}).get(p, "") for p in phens]
        # "needed/available" when BABY had too little disambiguating evidence for its rate
        vals += ["{needed}/{available}".format(**s["reinsert_shortfall"][p])
                 if p in s.get("reinsert_shortfall", {}) else "" for p in phens]
        rows.append("\t".join(str(v) for v in vals))
    write_lines(out, rows)


def _rate(value) -> str:
    return f"{float(value):.5f}" if value not in ("", None) else ""


def write_html(paths: list[str], out: str) -> None:
    """The report's page: per condition x size the words, sentences, DPE sentences removed and put back,
    and per phenomenon the configured, measured and targeted rates; a shortfall is marked and explained."""
    stats, phens = read_stats(paths)
    head = ["condition", "size", "words", "sentences", "removed (DPE)", "reinserted"]
    for p in phens:
        head += [f"{p}: configured", f"{p}: measured", f"{p}: targeted", f"{p}: shortfall"]
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'><style>body{font-family:sans-serif;font-size:13px}"
             "td,th{border:1px solid #999;padding:3px 8px}table{border-collapse:collapse}td{text-align:right}"
             ".short{color:#b00;font-weight:bold}</style></head><body>",
             "<p>The evidence each training condition really contains (conditions.tsv). <b>removed</b>: sentences "
             "the DPE filter took out of the base corpus; <b>reinserted</b>: removed sentences BABY put back (each "
             "replacing another sentence); <b>measured</b>: the condition's DPE rate; <b>targeted</b>: its rate of "
             "disambiguating evidence (the only kind BABY puts back); <b>shortfall</b>: needed/available when the "
             "filter removed fewer targeted sentences than the configured rate needs.</p>",
             "<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"]
    notes = []
    for s in sorted(stats, key=lambda s: (s["condition"], s["size"])):
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
