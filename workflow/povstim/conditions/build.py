"""Build a training condition from an assembled corpus and the DPE audit.

- BABY-F: base.txt minus every sentence ``dpe.tsv`` lists.
- BABY:   BABY-F, then for each phenomenon ``round(rate * len(BABY-F))`` of the
  removed DPE sentences put back (targeted evidence first, see :func:`build`),
  each replacing one non-DPE sentence, so BABY
  has exactly as many sentences as BABY-F and its measured DPE rate is the
  configured one.
- WIKI (or any unfiltered condition): base.txt as is.

Sentences keep their base.txt order (a put-back sentence takes its own
original position), and the train/dev split ranks sentences by a seeded hash
of their base.txt line index, so BABY and BABY-F share the dev sentences they
have in common.
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from ..io import PovstimError, read_lines


@dataclass
class Condition:
    ids: list[int]                      # base.txt line indices, in corpus order
    dpe_of: dict[int, list[str]]        # id -> phenomena, for every DPE sentence of the base
    reinserted: dict[str, list[int]] = field(default_factory=dict)
    replaced: list[int] = field(default_factory=list)
    pool: dict[str, dict[str, int]] = field(default_factory=dict)  # phenomenon -> candidates to put back
    reinserted_targeted: dict[str, int] = field(default_factory=dict)


def strict_rule_names() -> set[str]:
    from ..filter.rules import RULES

    return {r.modes["strict"].__name__ for r in RULES.values() if "strict" in r.modes}


def read_targeted(path: str | Path) -> dict[int, set[str]]:
    """sent_id -> phenomena a strict (targeted-evidence) rule flagged, from a dpe.tsv audit."""
    names = strict_rule_names()
    out: dict[int, set[str]] = defaultdict(set)
    for line in read_lines(path)[1:]:
        cols = line.split("\t")
        if len(cols) >= 3 and cols[2] in names:
            out[int(cols[0])].add(cols[1])
    return dict(out)


def read_dpe(path: str | Path, n_lines: int) -> dict[int, list[str]]:
    """sent_id -> phenomena (in file order) from a dpe.tsv audit."""
    path = Path(path)
    if not path.is_file():
        raise PovstimError(f"DPE audit {path} does not exist")
    lines = read_lines(path)
    if not lines or lines[0].split("\t")[:2] != ["sent_id", "phenomenon"]:
        raise PovstimError(f"{path}: not a dpe.tsv (expected a header starting 'sent_id<TAB>phenomenon')")
    out: dict[int, list[str]] = defaultdict(list)
    for lineno, line in enumerate(lines[1:], 2):
        cols = line.split("\t")
        try:
            i = int(cols[0])
            phen = cols[1]
        except (ValueError, IndexError):
            raise PovstimError(f"{path}:{lineno}: bad row {line!r}") from None
        if not 0 <= i < n_lines:
            raise PovstimError(f"{path}:{lineno}: sent_id {i} is not a line of the base corpus ({n_lines} lines)")
        if phen not in out[i]:
            out[i].append(phen)
    return dict(out)


def build(
    n_base: int,
    dpe: dict[int, list[str]] | None,
    reinsert: dict[str, float],
    seed: int,
    targeted: dict[int, set[str]] | None = None,
) -> Condition:
    """Build the condition's sentence list (see the module docstring).

    ``targeted`` marks the removed sentences a strict rule also flags (posh-mode
    audits carry these rows). BABY puts those back first and only then other
    removals, so it gets back as much real evidence as the configured rate
    allows, rather than App. C's false positives.
    """
    if dpe is None:
        if any(reinsert.values()):
            raise PovstimError("reinsert is set but the condition has no DPE audit (set filter: true on it)")
        return Condition(list(range(n_base)), {})
    kept = [i for i in range(n_base) if i not in dpe]
    if not kept:
        raise PovstimError(f"every one of the {n_base} sentences was removed as DPE: the filtered corpus is empty")
    cond = Condition(kept, dpe)
    rates = {p: float(r) for p, r in sorted(reinsert.items()) if float(r) > 0}
    if not rates:
        return cond
    rng = random.Random(f"{seed}:reinsert")
    n = len(kept)
    targeted = targeted or {}
    # Only sentences removed for exactly one phenomenon are put back, so putting
    # one back raises exactly one phenomenon's rate and every measured rate
    # equals its configured one.
    first: dict[str, list[int]] = defaultdict(list)
    rest: dict[str, list[int]] = defaultdict(list)
    for i in sorted(dpe):
        if len(dpe[i]) == 1:
            phen = dpe[i][0]
            (first if phen in targeted.get(i, ()) else rest)[phen].append(i)
    cond.pool = {p: {"targeted": len(first.get(p, [])), "other": len(rest.get(p, []))} for p in rates}
    chosen: dict[str, list[int]] = {}
    for phen, rate in rates.items():
        need = int(round(rate * n))
        a, b = first.get(phen, []), rest.get(phen, [])
        if need > len(a) + len(b):
            raise PovstimError(
                f"reinsert.{phen}={rate}: a rate of {rate} in {n} sentences needs {need} DPE sentences "
                f"but only {len(a) + len(b)} sentences were removed for {phen} alone; "
                "lower the rate or use a larger corpus"
            )
        if need <= len(a):
            chosen[phen] = sorted(rng.sample(a, need))
        else:
            chosen[phen] = sorted(a + rng.sample(b, need - len(a)))
        cond.reinserted_targeted[phen] = min(need, len(a))
    total = sum(len(v) for v in chosen.values())
    if total >= n:
        raise PovstimError(f"reinsert rates add up to {total} sentences, as many as the corpus holds ({n})")
    replaced = sorted(rng.sample(kept, total))
    gone = set(replaced)
    ids = sorted([i for i in kept if i not in gone] + [i for v in chosen.values() for i in v])
    cond.ids = ids
    cond.reinserted = chosen
    cond.replaced = replaced
    return cond


def split(ids: list[int], dev_fraction: float, seed: int) -> tuple[list[int], list[int]]:
    """Deterministic train/dev split: the dev set is the ids with the lowest seeded hash."""
    if len(ids) < 2:
        raise PovstimError(f"a condition needs at least 2 sentences for a train/dev split, it has {len(ids)}")
    n_dev = min(max(1, int(round(dev_fraction * len(ids)))), len(ids) - 1)

    def key(i: int) -> bytes:
        return hashlib.sha256(f"{seed}:{i}".encode()).digest()

    dev = set(sorted(ids, key=key)[:n_dev])
    return [i for i in ids if i not in dev], [i for i in ids if i in dev]
