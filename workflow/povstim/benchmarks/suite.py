"""The benchmark schema shared by every suite: reading, writing, validating.

A suite on disk is a folder of ``{paradigm}.jsonl`` files (one pair per line)
plus ``manifest.json``; a single ``.jsonl`` file in the same schema is also a
suite. Categories follow POSH Table 10 so overlapping phenomena can be compared
across suites.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..io import PovstimError, atomic_write, write_json
from .tasks import iter_jsonl, safe_file_name, validate_record  # noqa: F401 (importers read iter_jsonl here)

# POSH-BENCH subcategories (Table 8/10 names) -> category (Table 10).
POSH_CATEGORIES: dict[str, str] = {
    "island_adjunct": "Island",
    "island_complex_np": "Island",
    "island_wh": "Island",
    "question_formation_sr": "Question Formation",
    "question_formation_or": "Question Formation",
    "question_formation_rr": "Question Formation",
    "principle_a_command": "Binding",
    "principle_a_locality": "Binding",
    "wanna": "Wanna",
}

# Phenomena of other suites that POSH Table 10 maps onto its categories.
# Keys are lower-cased paradigm names as the suites spell them.
OVERLAP_CATEGORIES: dict[str, str] = {
    # BLiMP
    "adjunct_island": "Island",
    "wh_island": "Island",
    "complex_np_island": "Island",
    "principle_a_c_command": "Binding",
    "principle_a_case_2": "Binding",
    "principle_a_domain_2": "Binding",
    "principle_a_domain_3": "Binding",
    # SCaMP (implausible variants)
    "complex_np_island_implausible": "Island",
    "wh_island_implausible": "Island",
    "adjunct_island_implausible": "Island",
    "principle_a_domain_2_implausible": "Binding",
    "principle_a_domain_3_implausible": "Binding",
    "principle_a_c_command_implausible": "Binding",
    # Zorro
    "island-effects-adjunct_island": "Island",
    "binding-principle_a": "Binding",
}


def posh_paradigm_name(name: str) -> str:
    """Normalise POSH release spellings ('island-complex-np', 'question-formation_or')."""
    return re.sub(r"[-\s]+", "_", name.strip().lower())


def category_for(paradigm: str, fallback: str) -> str:
    """POSH Table 10 category when the paradigm overlaps POSH-BENCH, else ``fallback``."""
    key = paradigm.lower()
    if key in OVERLAP_CATEGORIES:
        return OVERLAP_CATEGORIES[key]
    norm = posh_paradigm_name(paradigm)
    if norm in POSH_CATEGORIES:
        return POSH_CATEGORIES[norm]
    return fallback


@dataclass
class Pair:
    suite: str
    paradigm: str
    category: str
    item_id: str
    good: str
    bad: str
    extra: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        obj = {
            "suite": self.suite,
            "paradigm": self.paradigm,
            "category": self.category,
            "item_id": self.item_id,
            "good": self.good,
            "bad": self.bad,
        }
        for k in sorted(self.extra):
            if k not in obj:
                obj[k] = self.extra[k]
        return obj


def write_suite(out_dir: str | Path, pairs: list[Pair], params: dict) -> dict:
    """Write one ``{paradigm}.jsonl`` per paradigm and ``manifest.json``; return the manifest.

    Files are written atomically; the folder may be the target of a Snakemake
    ``directory()`` output.
    """
    out_dir = Path(out_dir)
    if not pairs:
        raise PovstimError("the suite has no pairs: nothing to write")
    by_paradigm: dict[str, list[Pair]] = {}
    for p in pairs:
        by_paradigm.setdefault(p.paradigm, []).append(p)
    out_dir.mkdir(parents=True, exist_ok=True)
    counts = {}
    for paradigm in sorted(by_paradigm):
        items = by_paradigm[paradigm]
        with atomic_write(out_dir / safe_file_name(paradigm)) as fh:
            for p in items:
                fh.write(json.dumps(p.to_json(), ensure_ascii=False, sort_keys=False))
                fh.write("\n")
        counts[paradigm] = len(items)
    categories = {}
    for p in pairs:
        categories.setdefault(p.paradigm, p.category)
    manifest = {
        "suite": pairs[0].suite,
        "n_pairs": len(pairs),
        "paradigms": counts,
        "categories": {k: categories[k] for k in sorted(categories)},
        "params": params,
    }
    write_json(out_dir / "manifest.json", manifest)
    return manifest


def read_jsonl(path: str | Path) -> list[dict]:
    return [validate_record(obj, f"{path}, line {n}") for n, obj in iter_jsonl(path)]


def read_suite(path: str | Path) -> list[dict]:
    """Read a suite folder (every ``*.jsonl`` in it, sorted) or a single ``.jsonl`` file."""
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.glob("*.jsonl"))
        if not files:
            raise PovstimError(f"suite folder {path} holds no .jsonl files")
        records = [r for f in files for r in read_jsonl(f)]
    elif path.exists():
        records = read_jsonl(path)
    else:
        raise PovstimError(f"suite {path} does not exist")
    if not records:
        raise PovstimError(f"suite {path} holds no pairs")
    seen = Counter((r["paradigm"], r["item_id"]) for r in records)
    dup = [k for k, c in seen.items() if c > 1]
    if dup:
        raise PovstimError(
            f"suite {path}: item_id {dup[0][1]!r} occurs more than once in paradigm {dup[0][0]!r}"
        )
    return records
