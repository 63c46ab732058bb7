"""The DPE filter against hand labels: recall and precision with Wilson intervals.

Where no gold treebank exists for a language (French child-directed speech), the filter is measured on
sentences a person labelled from the phenomena's definitions. A labels file is a TSV with ``#`` comment
lines, a header, and per sentence its ``row`` (1-based CSV record of the text file, header = 1), the first
10 hex digits of the SHA-1 of its text (``sha1``: the file the labels were written on, checked), and a
0/1 column per phenomenon. The text is read from the user's own copy (CHILDES text is never committed),
cleaned like the corpus (``sources.normalize.finish``), parsed by the configured parser and run through
:func:`povstim.dpe.find_dpe`.

The numbers are in-sample for whoever wrote the rules after reading the labelled sentences; the French
rules were written from the definitions before the sample was drawn (docs/own-data.md).

:func:`validate_labelled` gives the pipeline's ``filter_validation`` output (``filter_validation.labels``):
the same ``validation.json`` layout as :func:`povstim.filter.validate.validate` on a gold treebank, with the
hand labels as the reference, so the report's table and figure, the floors and the residual evidence read it
the same way (``povstim filter-validation --labels``).
"""

from __future__ import annotations

import csv
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from .. import dpe
from ..io import PovstimError
from ..parse.conllu import Sentence
from ..sources.normalize import CleanStats, Style, finish
from .evaluate import ratio
from .settings import FilterSettings
from .validate import NOT_MEASURABLE, ValidationSettings, _ci, _score, check_floor, decisions, shown
from .validate import wilson as wilson_ci


@dataclass(frozen=True)
class Labelled:
    row: int
    text: str            # as cleaned for the corpus
    labels: dict         # phenomenon -> bool
    # the strata that drew the row (a ``strata`` column: a cue's name, or a random stratum); () without one
    strata: tuple = ()
    # construction -> bool: the labels of a cue's own construction (columns named as a phenomenon's cue)
    cue_labels: dict = field(default_factory=dict)


# Columns of a labels file that are neither a phenomenon's nor a cue's label.
_META = frozenset("row sha1 group strata half transcript_id note".split())


def labels_sample(labels: str | Path) -> str:
    """Whether the rules were measured in or out of sample on these labels, as the labels file says in a
    ``# sample: ...`` comment line (its writer knows whether the rules' author saw the sentences first)."""
    try:
        lines = Path(labels).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise PovstimError(f"cannot read {labels}: {exc}") from None
    for ln in lines:
        if ln.startswith("#") and ln.lstrip("# ").lower().startswith("sample:"):
            return ln.lstrip("# ")[len("sample:"):].strip()
    return "not said (no '# sample:' line in the labels file: in or out of sample for the rules is unknown)"


def recall_strata(labels: str | Path) -> tuple[str, ...]:
    """The strata drawn without looking at any rule (``# recall_strata: random, random_question``): a stratified
    file's recall, and its phenomena's numbers, are measured on their rows alone; () when not said."""
    for ln in Path(labels).read_text(encoding="utf-8").splitlines():
        if ln.startswith("#") and ln.lstrip("# ").lower().startswith("recall_strata:"):
            return tuple(x.strip() for x in ln.split(":", 1)[1].split(",") if x.strip())
    return ()


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
    cue_cols = [h for h in header if h not in _META and h not in phenomena]
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
        bad = next((c for c in cue_cols if cells.get(c, "").strip() not in ("0", "1")), None)
        if bad is not None:
            raise PovstimError(f"{labels}, line {n}: column {bad} is {cells.get(bad, '')!r}, not 0 or 1 (a column "
                               f"that is not {', '.join(sorted(_META))} or a phenomenon is a cue's label)")
        strata = tuple(x for x in cells.get("strata", "").split(",") if x)
        out.append(Labelled(row, cleaned, {p: cells[p].strip() == "1" for p in phenomena}, strata,
                            {c: cells[c].strip() == "1" for c in cue_cols}))
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


def per_cue(items: list[Labelled], parsed: list[Sentence | None], phen: str, mode: str,
            random_strata: tuple[str, ...] = ()) -> dict:
    """Each cue of ``phen``'s rule in ``mode`` (a phenomenon that declares ``extras["fired_cues"]``) on its own,
    against its construction's label (the cue's own column when the labels have one, else the phenomenon's):
    precision among the rows it fires on -- in a stratified file (``strata``), only the rows of its own
    stratum, a random sample of its firings --, recall among the labelled positives of the rows drawn without
    any cue (``random_strata``; every row when the file is not stratified). {} for a phenomenon without cues."""
    fired_cues = dpe.PHENOMENA[phen].extras.get("fired_cues")
    if fired_cues is None:
        return {}
    fired = [set(fired_cues(s, mode)) if s is not None else set() for s in parsed]
    names = list(dict.fromkeys(c for f in fired for c in f))
    stratified = any(it.strata for it in items)
    rand = [k for k, it in enumerate(items) if not stratified or set(it.strata) & set(random_strata)]
    out = {}
    for cue in names:
        label = cue if any(cue in it.cue_labels for it in items) else phen
        gold = [it.cue_labels[cue] if label == cue else it.labels[phen] for it in items]
        own = [k for k, it in enumerate(items) if cue in fired[k] and (not stratified or cue in it.strata)]
        pos = [k for k in rand if gold[k]]
        tp, found = sum(gold[k] for k in own), sum(cue in fired[k] for k in pos)
        out[cue] = {"label": label, "n": len(own), "tp": tp, "precision": ratio(tp, len(own)),
                    "precision_ci95": wilson_ci(tp, len(own)), "positives": len(pos), "found": found,
                    "recall": ratio(found, len(pos)), "recall_ci95": wilson_ci(found, len(pos))}
    return out


def validate_labelled(items: list[Labelled], parsed: list[Sentence | None], fs: FilterSettings,
                      vs: ValidationSettings, parser: str, sample: str,
                      random_strata: tuple[str, ...] = ()) -> dict:
    """``filter_validation``'s result against hand labels: per measured mode and phenomenon, the rules'
    decisions on ``parsed`` (``parsed[i]`` the parse of ``items[i]``; None: spared by the prefilter, no rule
    fires) against the labels, with Wilson 95% intervals and the rule (cue) behind each removal.

    The layout is :func:`povstim.filter.validate.validate`'s with the labels as the ``reference``. Nothing of
    a rule is fitted to the labels, so there are no folds: ``cross_validated`` holds the same counts as
    ``in_sample`` (as for a treebank's rules without fitted parts), and ``sample`` says whether the rules'
    author saw the labelled sentences before writing them (``validation.json: cv.note``).

    A stratified file (a ``strata`` column: rows drawn among a cue's firings) gives each phenomenon's numbers
    on the rows of ``random_strata`` alone (drawn without looking at any rule), and each cue's (``per_cue``)
    precision on its own stratum."""
    if len(items) != len(parsed):
        raise ValueError("items and parsed must be aligned")
    all_items, all_parsed = items, parsed
    if any(it.strata for it in items):
        keep = [k for k, it in enumerate(items) if set(it.strata) & set(random_strata)]
        if not keep:
            raise PovstimError("filter_validation.labels: the labels are stratified (a strata column) but no row is "
                               f"in a random stratum ({', '.join(random_strata) or 'none named'}: a "
                               "'# recall_strata: ...' line names them)")
        items, parsed = [items[k] for k in keep], [parsed[k] for k in keep]
    phens = [p for p in fs.rules if p in (items[0].labels if items else {})]
    missing = [p for p in fs.rules if p not in phens]
    if missing:
        raise PovstimError(f"filter_validation.labels: no label column for {', '.join(missing)} (filter.rules "
                           f"names it; the labels have: {', '.join(items[0].labels) if items else 'no rows'})")
    ref = [{p: "label" for p in phens if it.labels[p]} for it in items]
    modes = list(dict.fromkeys((*vs.modes, fs.mode)))
    out_modes = {}
    for mode in modes:
        got = decisions(parsed, fs, mode)
        per = {}
        for phen in phens:
            rules: dict[str, list[int]] = {}
            for r, g in zip(ref, got):
                if phen in g:
                    rc = rules.setdefault(g[phen], [0, 0])
                    rc[0] += 1
                    rc[1] += phen in r
            score = {"reference": _score(ref, got, phen, vs.min_positives)}
            per[phen] = {"cross_validated": score, "in_sample": score,
                         "per_rule": {k: {"n": n, "tp": tp, "precision": ratio(tp, n)}
                                      for k, (n, tp) in sorted(rules.items())},
                         "per_cue": per_cue(all_items, all_parsed, phen, mode, random_strata)}
        n_removed = sum(any(p in g for p in phens) for g in got)
        out_modes[mode] = {"rule_functions": {p: dpe.PHENOMENA[p].rules[mode].__name__ for p in phens},
                           "per_phenomenon": per, "n_removed": n_removed,
                           "removed_fraction": ratio(n_removed, len(items))}
    result = {
        "parser": parser,
        "reference": "hand labels",
        "reference_note": "sentences labelled by hand from the phenomena's definitions (filter_validation.labels)",
        "rules": phens,
        "filter_mode": fs.mode,
        "n_sentences": len(items),
        "n_parsed": sum(p is not None for p in parsed),
        "reference_positives": {p: sum(p in r for r in ref) for p in phens},
        "min_positives": vs.min_positives,
        "min_positives_note": (f"fewer than {vs.min_positives} labelled positives: recall and precision are not "
                               "measurable (None; 'not measurable' in the table), whatever the counts say"),
        "sample": sample,
        "labels": {"n_labelled": len(all_items), "random_strata": list(random_strata),
                   "n_random": len(items)},
        "cv": {"folds": 0, "group_by": [], "n_groups": 0, "fold_sizes": [], "fitted_parts": [],
               "note": ("hand labels: no part of a rule is fitted to them, so cross_validated equals in_sample; "
                        f"the sample is {sample} for the rules")},
        "modes": out_modes,
        "matches_nothing": [],
    }
    # every mode is held to the labels (a treebank's strict mode is held to strict on the gold trees instead)
    result["floor"] = check_floor(result, fs.mode, vs, against="reference")
    return result


def labelled_table_rows(result: dict) -> list[dict]:
    """One row per mode x phenomenon (validation.tsv, the report's table) of a labelled validation."""
    fl = result["floor"]
    below = {(b["phenomenon"], b["measure"]) for b in fl["below"]}
    rows = []
    for mode, m in result["modes"].items():
        for phen, d in m["per_phenomenon"].items():
            c = d["cross_validated"]["reference"]
            flag = ""
            if mode == fl["mode"]:
                flag = ("BELOW FLOOR: " + ", ".join(w for p, w in sorted(below) if p == phen)
                        if any(p == phen for p, _ in below) else "ok")
            rows.append({
                "parser": result["parser"], "mode": mode, "phenomenon": phen, "sentences": result["n_sentences"],
                "labelled_positives": c["n_reference"], "flagged": c["n_flagged"],
                "tp": c["tp"], "fp": c["fp"], "fn": c["fn"],
                "recall": shown(c, "recall"), "recall_ci95": _ci(c["recall_ci95"]),
                "precision": shown(c, "precision"), "precision_ci95": _ci(c["precision_ci95"]),
                "rules": "; ".join(f"{k} {v['tp']}/{v['n']}" for k, v in d["per_rule"].items()),
                "sample": result["sample"], "floor": flag,
            })
            rows += [_cue_row(result, mode, phen, cue, v) for cue, v in d.get("per_cue", {}).items()]
    return rows


def _cue_row(result: dict, mode: str, phen: str, cue: str, v: dict) -> dict:
    """A cue's own row under its phenomenon's: its precision and recall against its construction's label, and
    whether its removals may be targeted evidence (dpe.feeds_targeted: the shipped measurement)."""
    enough = v["positives"] >= result["min_positives"]
    feeds = dpe.feeds_targeted(phen, cue)
    return {
        "parser": result["parser"], "mode": mode, "phenomenon": f"{phen} / cue {cue}",
        "sentences": v["n"],
        "labelled_positives": v["positives"], "flagged": v["n"], "tp": v["tp"], "fp": v["n"] - v["tp"],
        "fn": v["positives"] - v["found"],
        "recall": v["recall"] if enough else NOT_MEASURABLE, "recall_ci95": _ci(v["recall_ci95"]),
        "precision": v["precision"] if v["n"] else NOT_MEASURABLE, "precision_ci95": _ci(v["precision_ci95"]),
        "rules": (f"the cue alone against label {v['label']}: precision {v['tp']}/{v['n']} on its firings, recall "
                  f"{v['found']}/{v['positives']} on the rows drawn without a cue"),
        "sample": result["sample"],
        "floor": "" if feeds else f"never targeted: measured precision below {dpe.TARGETED_PRECISION}",
    }


def labelled_disagreements(items: list[Labelled], parsed: list[Sentence | None], fs: FilterSettings,
                           phens: list[str]) -> list[dict]:
    """The sentences where filter.mode on the parse and the hand label disagree (they hold the user's text)."""
    got = decisions(parsed, fs, fs.mode)
    rows = []
    for k, (it, d) in enumerate(zip(items, got)):
        for phen in phens:
            if it.labels[phen] != (phen in d):
                rows.append({"index": k, "row": it.row, "phenomenon": phen,
                             "kind": "miss" if it.labels[phen] else "extra", "parser_rule": d.get(phen, ""),
                             "text": it.text})
    return rows
