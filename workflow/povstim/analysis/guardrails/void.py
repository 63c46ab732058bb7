"""Void contrasts: two conditions whose training corpora are the same (or, built from one base with the same
removals, differ by fewer targeted evidence sentences than ``analysis.void_evidence``) train the same models, so
a contrast between them has no evidence to measure, and fitting both as independent cells would count every
model twice and let noise pass as an effect of filtering (BABY got nothing back).

From the conditions' ``condition.json`` (``corpus_sha256``: the training text's hash; ``dpe_count_targeted``:
the disambiguating evidence it holds), per size: which condition duplicates which. The analysis leaves the
duplicate's cells out of the Bayesian models at the sizes where it is void and the report states the contrast
as void, with no estimate, when that holds at every size (``povstim plan`` forecasts the same from the
evidence estimate, preflight/evidence.py)."""

from __future__ import annotations

from povstim.conditions.order import condition_order


def evidence_difference(a: dict, b: dict) -> int | None:
    """Targeted evidence sentences by which two conditions of one base and the same removals differ (summed
    over phenomena); None when they are not comparable so (another base, other removals, or no counts)."""
    if a.get("base") != b.get("base") or a.get("n_dpe_removed") != b.get("n_dpe_removed"):
        return None
    ca, cb = a.get("dpe_count_targeted"), b.get("dpe_count_targeted")
    if ca is None or cb is None:
        return None
    return sum(abs(int(ca.get(p, 0)) - int(cb.get(p, 0))) for p in set(ca) | set(cb))


def _duplicate(a: dict, b: dict, order: list[str]) -> tuple[str, str]:
    """(kept, duplicate): the condition meant to differ (reinsert rates, operations) is the duplicate; else the
    later one."""
    def differs(s):
        return bool(s.get("reinsert_config")) or bool(s.get("operations"))

    if differs(a) != differs(b):
        return (b["condition"], a["condition"]) if differs(a) else (a["condition"], b["condition"])
    ia, ib = (order.index(x["condition"]) if x["condition"] in order else len(order) for x in (a, b))
    return (a["condition"], b["condition"]) if (ia, a["condition"]) <= (ib, b["condition"]) else \
        (b["condition"], a["condition"])


def void_pairs(stats: list[dict], threshold: int, order: list[str] | None = None) -> list[dict]:
    """Per size, each pair of conditions whose corpora are identical, or differ by fewer than ``threshold``
    evidence sentences: {size, kept, duplicate, identical, evidence}. ``stats``: condition.json contents with
    ``condition`` and ``size`` (conditions_page.read_condition); ``order``: the config's condition order."""
    order = list(order or condition_order(s["condition"] for s in stats))
    by_size: dict[str, list[dict]] = {}
    for s in stats:
        by_size.setdefault(s["size"], []).append(s)
    out = []
    for size, group in by_size.items():
        group = sorted(group, key=lambda s: s["condition"])
        for i, a in enumerate(group):
            for b in group[i + 1:]:
                same = bool(a.get("corpus_sha256")) and a.get("corpus_sha256") == b.get("corpus_sha256")
                diff = evidence_difference(a, b)
                if same or (diff is not None and diff < threshold):
                    kept, dup = _duplicate(a, b, order)
                    out.append({"size": size, "kept": kept, "duplicate": dup, "identical": same,
                                "evidence": 0 if same and diff is None else diff})
    return out


def summarise(pairs: list[dict], sizes_of: dict[str, list[str]]) -> list[dict]:
    """Per (kept, duplicate): the sizes where it is void and whether that is every size the duplicate has
    (``sizes_of``: condition -> its sizes), so the whole contrast is void."""
    out: dict[tuple[str, str], dict] = {}
    for p in pairs:
        row = out.setdefault((p["kept"], p["duplicate"]), {"kept": p["kept"], "duplicate": p["duplicate"],
                                                           "sizes": [], "evidence": {}, "identical": {}})
        row["sizes"].append(p["size"])
        row["evidence"][p["size"]] = p["evidence"]
        row["identical"][p["size"]] = p["identical"]
    for row in out.values():
        have = sizes_of.get(row["duplicate"], [])
        row["sizes"] = [s for s in have if s in row["sizes"]] or row["sizes"]
        row["all_sizes"] = set(row["sizes"]) >= set(have)
    return list(out.values())


def describe(row: dict, threshold: int, level_of: dict[str, str]) -> str:
    """The report's sentence about one void pair (also a caption note)."""
    a, b = level_of.get(row["kept"], row["kept"].upper()), level_of.get(row["duplicate"], row["duplicate"].upper())
    how = []
    for size in row["sizes"]:
        if row["identical"][size]:
            how.append(f"{size}: identical training text")
        else:
            how.append(f"{size}: {row['evidence'][size]} evidence sentence(s) apart")
    scope = "at every size" if row["all_sizes"] else f"at {', '.join(row['sizes'])} (not at its other sizes)"
    head = (f"{a} vs. {b}: VOID, no estimate: the two conditions' training corpora do not differ in evidence "
            if row["all_sizes"] else f"{a} vs. {b} is void {scope}: ")
    return (head + f"({'; '.join(how)}; analysis.void_evidence = {threshold}: fewer evidence sentences apart is "
            f"void). {b}'s models there are copies of {a}'s in all but noise, so their cells were left out of the "
            "Bayesian models instead of being counted as independent evidence"
            + (f"; its contrasts with the other conditions are {a}'s." if row["all_sizes"] else
               "; the contrast comes from the other sizes only."))
