"""The report's conditions table: the evidence each training condition really contains.

One row per condition x size from its ``condition.json`` (``povstim condition``): words, sentences, the
DPE sentences the filter removed and those BABY put back, and per phenomenon the configured reinsert
rate, the measured DPE rate, the measured rate of targeted (disambiguating) evidence and the shortfall
(needed/available). It is rendered by the guardrails stage, next to the ``reinsert_shortfall`` check,
so that changing the page never reruns the condition stage (and the training after it); the same
numbers are ``results/<exp>/corpus/conditions.tsv`` (``povstim condition --table``).

Size labels are nominal: "290k" is the word budget of the base corpus, and a filtered condition (BABY-F)
holds fewer words than that. :func:`size_gaps` compares every condition's actual words with its label;
the page, the captions of the accuracy tables (``povstim analyze --condition-stats``) and the
``size_label`` guardrail say so in words when the two differ by more than ``guardrails.size_label``.
"""

from __future__ import annotations

import html
import json
import logging
from pathlib import Path

from povstim.filter.residual import residual_rows
from povstim.io import PovstimError, atomic_write, parse_size

log = logging.getLogger("povstim.guardrails")


def read_condition(path: str | Path) -> dict:
    """A ``{condition}/{size}/condition.json`` written by ``povstim condition``, with its condition and size."""
    p = Path(path)
    try:
        stats = json.loads(p.read_text())
    except (OSError, ValueError) as exc:
        raise PovstimError(f"{p}: cannot read condition statistics ({exc})") from None
    out = {**stats, "condition": p.parent.parent.name, "size": p.parent.name}
    # sizes in English-equivalent bytes (size_unit, said by the base corpus's stats.json beside its base.txt):
    # the label is not a word count, and no words-vs-label gap is computed
    base = Path(stats["base"]).parent / "stats.json" if stats.get("base") else None
    if base is not None and base.is_file():
        try:
            unit = json.loads(base.read_text()).get("size_unit")
        except (OSError, ValueError):
            unit = None
        if unit:
            out["size_unit"] = unit
    return out


def _rate(value) -> str:
    return f"{float(value):.5f}" if value not in ("", None) else ""


def _size_key(size: str):
    try:
        return (0, parse_size(size), size)
    except PovstimError:
        return (1, 0, size)


def label_words(size: str) -> int | None:
    """The words a size label names ("290k" -> 290000); None for a label that is not a size."""
    try:
        return parse_size(size)
    except PovstimError:
        return None


def size_gaps(stats: list[dict], tolerance: float) -> list[dict]:
    """Per condition x size (sorted): its label's words, its actual words and sentences, the relative gap
    (actual / label - 1) and whether it exceeds ``tolerance``. Labels that are not sizes have no gap."""
    rows = []
    for s in sorted(stats, key=lambda s: (s["condition"], _size_key(s["size"]))):
        label = None if s.get("size_unit") == "english_bytes" else label_words(s["size"])
        words = s.get("n_words")  # None: a hand-made condition.json without counts (no gap to report)
        gap = words / label - 1 if label and words is not None else None
        rows.append({"condition": s["condition"], "size": s["size"], "label_words": label, "words": words or 0,
                     "sentences": int(s.get("n_sentences", 0)), "gap": gap,
                     "off": gap is not None and abs(gap) > tolerance})
    return rows


def _gap_text(row: dict) -> str:
    return f"{row['gap']:+.1%}" if row["gap"] is not None else ""


def size_sentence(stats: list[dict], tolerance: float) -> str:
    """Plain text for a table caption: the actual words and sentences behind each size label, and which
    differ from their label by more than ``tolerance``."""
    rows = size_gaps(stats, tolerance)
    if not rows:
        return ""
    parts = [f"{r['condition']} {r['size']} = {r['words']:,} words, {r['sentences']:,} sentences"
             + (f" ({_gap_text(r)})" if r["gap"] is not None else "") for r in rows]
    text = " Size labels are nominal; the words each condition really holds: " + "; ".join(parts) + "."
    if any(s.get("size_unit") == "english_bytes" for s in stats):
        text += " Size labels are English-equivalent bytes (size_unit: english_bytes), not words."
    off = [f"{r['condition']} {r['size']} ({_gap_text(r)})" for r in rows if r["off"]]
    if off:
        text += (f" {', '.join(off)} {'differs' if len(off) == 1 else 'differ'} from the label by more than "
                 f"{tolerance:.0%} (guardrails.size_label): compare sizes by these words, not by the labels.")
    return text


def _flagged(parts: list[str], label: str, items: list[str], why: str) -> None:
    """A flagged paragraph of the page (LABEL: the items; why) and a warning per item in the log."""
    parts.append(f"<p class='short'>{label}: " + "; ".join(html.escape(x) for x in items) + why + "</p>")
    for x in items:
        log.warning("%s %s", label, x)


def write_page(stats: list[dict], out: str | Path, tolerance: float, residual: tuple | None = None) -> None:
    """``stats``: condition.json contents with ``condition`` and ``size`` (guardrails.read_condition);
    ``tolerance``: guardrails.size_label (a condition whose words differ more from its size label is flagged);
    ``residual``: ``filter.residual.recall_source``'s (recalls, source, exact): a column with the expected
    direct-evidence sentences still in each filtered condition, per phenomenon."""
    gaps = {(r["condition"], r["size"]): r for r in size_gaps(stats, tolerance)}
    phens = sorted({p for s in stats for p in list(s.get("dpe_rate", {})) + list(s.get("reinsert_config", {}))})
    head = ["condition", "size", "words", "words vs label", "sentences", "removed (DPE)", "put back"]  # put back: docs' term for n_replaced
    if residual is not None:
        head.append("still in it (expected DPE, 95%)")
    for p in phens:
        head += [f"{p}: configured", f"{p}: measured", f"{p}: targeted", f"{p}: shortfall"]
    parts = [("<!DOCTYPE html><html><head><meta charset='utf-8'><style>body{font-family:sans-serif;font-size:13px}"
              "td,th{border:1px solid #999;padding:3px 8px}table{border-collapse:collapse}td{text-align:right}"
              ".short{color:#b00;font-weight:bold}</style></head><body>"),
             ("<p>The evidence each training condition really contains (also results/&lt;experiment&gt;/corpus/"
             "conditions.tsv). <b>words vs label</b>: the words the condition really holds against its size label "
             f"(a nominal budget; flagged beyond &plusmn;{tolerance:.0%}, guardrails.size_label); "
             "<b>removed</b>: sentences the DPE filter took out of the base corpus; "
             "<b>put back</b>: removed sentences BABY put back (each replacing another sentence; n_replaced in the tsv); "
             "<b>measured</b>: the condition's DPE rate; <b>targeted</b>: its rate of disambiguating evidence (the "
             "only kind BABY puts back); <b>shortfall</b>: needed/available when the filter removed fewer targeted "
             "sentences than the configured rate needs.</p>")]
    if not stats:
        parts.append("<p>No condition statistics were found (an analysis-only run?).</p>")
    else:
        parts.append("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>")
    notes = []
    for s in sorted(stats, key=lambda s: (s["condition"], _size_key(s["size"]))):
        gap = gaps[(s["condition"], s["size"])]
        cells = [s["condition"], s["size"], f"{s.get('n_words', 0):,}", _gap_text(gap), f"{s.get('n_sentences', 0):,}",
                 f"{s.get('n_dpe_removed', '')}", f"{s.get('n_replaced', '')}"]
        if residual is not None:
            cells.append(residual_text(s, residual))
        short_cells = {3} if gap["off"] else set()
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
    if residual is not None and stats:
        parts.append("<p><b>still in it</b>: the direct-evidence sentences the filter's rules are expected to have "
                     "missed, per phenomenon: removals &times; (1 &minus; recall) / recall, with the Wilson 95% "
                     "interval of the recall; recall from " + html.escape(residual[1]) + ". A recall measured on "
                     "fewer than 20 positives is not measurable, and none measured is said so, never a number "
                     "(docs/filter.md, &ldquo;The residual evidence&rdquo;).</p>")
    off = [r for r in gaps.values() if r["off"]]
    if off:
        parts.append("<p class='short'>SIZE LABELS: " + "; ".join(
            html.escape(f"{r['condition']} {r['size']} holds {r['words']:,} words, {_gap_text(r)} against its "
                        f"label's {r['label_words']:,}") for r in off)
            + f" (beyond &plusmn;{tolerance:.0%}, guardrails.size_label). Compare these conditions and sizes by "
            "their actual words, not by the labels.</p>")
    if notes:
        _flagged(parts, "SHORTFALL", notes, ". BABY then holds less evidence than configured (the Guardrails page "
                 "says whether it is below guardrails.reinsert_share of the rate).")
    # an operation or filter list that changed nothing (condition.json `warnings`: a construction that matched
    # no sentence, a replace that rewrote none): the condition is a copy of its corpus, not what it is named
    unchanged = [f"{s['condition']} {s['size']}: {w}" for s in sorted(stats, key=lambda s: (s["condition"],
                 _size_key(s["size"]))) for w in s.get("warnings", [])]
    if unchanged:
        _flagged(parts, "NOTHING CHANGED", unchanged, ". These conditions do not differ from their corpus in what the "
                 "operation names (a typo in a construction's pattern, or a corpus without the construction: "
                 "docs/constructions.md).")
    parts.append("</body></html>\n")
    with atomic_write(out) as fh:
        fh.write("".join(parts))


def residual_text(s: dict, residual: tuple) -> str:
    """The residual cell of a condition: per phenomenon it removed, the expected sentences left (filter.residual)."""
    removed = s.get("dpe_removed") or {}
    if not s.get("filtered") or not removed:
        return ""
    rows = residual_rows(removed, residual[0], residual[2])
    return "; ".join(f"{p}: {x['text']}" for p, x in rows.items())


# ---- what BABY really got back ------------------------------------------------------------

def reinsert_rows(stats: list[dict], share: float) -> list[dict]:
    """Per condition x size x phenomenon with a configured reinsert rate (sorted): what was put back
    (``reinserted``: DPE sentences, ``targeted``: disambiguating ones), the measured targeted rate against
    the configured one, the pool shortfall (needed/available; None when the pool sufficed) and
    ``below_share``: measured < ``share`` x configured (the reinsert_shortfall guardrail's test)."""
    rows = []
    for s in sorted(stats, key=lambda s: (s["condition"], _size_key(s["size"]))):
        for phen, rate in sorted((s.get("reinsert_config") or {}).items()):
            rate = float(rate)
            if rate <= 0:
                continue
            got = float((s.get("dpe_rate_targeted") or {}).get(phen, 0.0))
            rows.append({"condition": s["condition"], "size": s["size"], "phenomenon": phen, "configured": rate,
                         "measured": got, "reinserted": int((s.get("reinserted") or {}).get(phen, 0)),
                         "targeted": int((s.get("reinserted_targeted") or {}).get(phen, 0)),
                         "shortfall": (s.get("reinsert_shortfall") or {}).get(phen),
                         "below_share": got < share * rate})
    return rows


def _row_text(r: dict) -> str:
    short = r["shortfall"]
    pool = f", {short['needed']} needed and {short['available']} in the pool" if short else ""
    return (f"{r['size']} {r['phenomenon']}: {r['targeted']:,} targeted sentence{'s' if r['targeted'] != 1 else ''} "
            f"put back{pool}, measured rate {r['measured']:.5f} vs configured {r['configured']:g}")


def reinsert_description(stats: list[dict], condition: str, share: float) -> str:
    """The report description's words for a reinserting condition: what it really got back, per size."""
    rows = [r for r in reinsert_rows(stats, share) if r["condition"] == condition]
    if not rows:
        return ""
    short = any(r["below_share"] or r["shortfall"] for r in rows)
    if not any(r["reinserted"] for r in rows):
        head = "**nothing reinserted** (it holds the same evidence as its filtered corpus)"
    else:
        head = "DPE reinserted" + (" **below the configured rate**" if short else "")
    return f"{head}: " + "; ".join(_row_text(r) for r in rows)


def report_evidence(config: dict, results: str | Path, sizes_of) -> dict[str, str]:
    """{condition: description} for the conditions with ``reinsert`` whose condition.json files exist under
    ``results``/corpus (``snakemake --report``: the description then states what was really put back).
    ``sizes_of(config, condition)``: the sizes a condition is built at (plan.condition_sizes)."""
    share = float(config["guardrails"]["reinsert_share"])  # the validated config holds the default
    out = {}
    for name, spec in (config.get("conditions") or {}).items():
        if not spec.get("reinsert"):
            continue
        paths = [Path(results) / "corpus" / name / size / "condition.json" for size in sizes_of(config, name)]
        stats = [read_condition(p) for p in paths if p.exists()]
        text = reinsert_description(stats, name, share)
        if text:
            out[name] = text
    return out


def shortfall_caveat(stats: list[dict], share: float) -> str:
    """A plain caveat for the BABY-F vs. BABY sentence when a reinserting condition holds less targeted
    evidence than configured (below ``share`` of the rate, or a pool shortfall); "" when none does."""
    rows = [r for r in reinsert_rows(stats, share) if r["below_share"] or r["shortfall"]]
    if not rows:
        return ""
    text = ("Caveat: BABY holds less direct evidence than configured (reinsert_shortfall; the Conditions table): "
            + "; ".join(f"{r['condition']} {_row_text(r)}" for r in rows) + ".")
    if any(r["reinserted"] == 0 for r in rows):
        text += (" Where nothing was put back BABY and BABY-F hold the same evidence, so this contrast cannot show "
                 "an effect of direct evidence there.")
    else:
        text += " This contrast measures a smaller dose than the config names."
    return text
