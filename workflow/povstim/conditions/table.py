"""One TSV of the counts and measured DPE rates of every condition x size (from condition.json files)."""

from __future__ import annotations

import json
from pathlib import Path

from ..io import PovstimError, write_lines

COLUMNS = ("condition", "size", "n_base", "n_dpe_removed", "n_sentences", "n_words", "n_train", "n_dev",
           "n_replaced")
# token matching: the corpus after a condition's last removal (BABY-F for a filter/reinsert condition) is the
# reference the later steps keep in sentences and words; every condition's words vs its
# base corpus's
MATCH_COLUMNS = ("n_sentences_reference", "n_words_reference", "sentences_vs_reference", "words_vs_reference",
                 "n_base_words", "words_vs_base", "n_rewritten")


def write_table(paths: list[str], out: str) -> None:
    """One row per condition x size (``{condition}/{size}/condition.json``)."""
    stats = []
    phen: set[str] = set()
    for p in paths:
        path = Path(p)
        try:
            s = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise PovstimError(f"cannot read condition stats {path}: {exc}") from None
        s["condition"], s["size"] = path.parent.parent.name, path.parent.name
        if "n_base_words" not in s and s.get("base"):  # a filter/reinsert condition: its base's words from
            base_stats = Path(s["base"]).parent / "stats.json"  # the assembly's stats.json (a rule input)
            if base_stats.is_file() and s.get("n_words"):
                s["n_base_words"] = json.loads(base_stats.read_text())["words"]
                s["words_vs_base"] = round(s["n_words"] / s["n_base_words"] - 1, 8)
        phen |= set(s.get("dpe_rate", {})) | set(s.get("reinsert_config", {}))
        stats.append(s)
    phens = sorted(phen)
    cols = list(COLUMNS) + list(MATCH_COLUMNS) + [f"dpe_rate_{p}" for p in phens] + [f"config_rate_{p}" for p in phens] \
        + [f"targeted_rate_{p}" for p in phens] + [f"shortfall_{p}" for p in phens]
    void = any(s.get("void_definition") for s in stats)  # a column only when a condition is void by definition
    rows = ["\t".join(cols + (["void"] if void else []))]
    for s in sorted(stats, key=lambda s: (s["condition"], s["size"])):
        vals = [s.get(c, "") for c in COLUMNS]
        ref = s.get("reference") or {}
        vals += [ref.get("n_sentences", ""), ref.get("n_words", "")] + [s.get(c, "") for c in MATCH_COLUMNS[2:]]
        vals += [s.get("dpe_rate", {}).get(p, "") for p in phens]
        vals += [s.get("reinsert_config", {}).get(p, "") for p in phens]
        vals += [s.get("dpe_rate_targeted", {}).get(p, "") for p in phens]
        # "needed/available" when BABY had too little disambiguating evidence for its rate
        vals += ["{needed}/{available}".format(**s["reinsert_shortfall"][p])
                 if p in s.get("reinsert_shortfall", {}) else "" for p in phens]
        if void:
            v = s.get("void_definition") or {}
            vals.append(f"VOID: {v['why']}" if v else "")
        rows.append("\t".join(str(v).replace("\t", " ") for v in vals))
    write_lines(out, rows)
