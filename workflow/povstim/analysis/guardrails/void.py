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

import math

from povstim.conditions.operations import sentences_for
from povstim.conditions.order import condition_order
from povstim.io import PovstimError


def evidence_difference(a: dict, b: dict) -> int | None:
    """Targeted evidence sentences by which two conditions of one base and the same removals differ (summed
    over phenomena); None when they are not comparable so (another base, other removals, or no counts)."""
    if a.get("base") != b.get("base") or a.get("n_dpe_removed") != b.get("n_dpe_removed"):
        return None
    ca, cb = a.get("dpe_count_targeted"), b.get("dpe_count_targeted")
    if ca is None or cb is None:
        return None
    return sum(abs(int(ca.get(p, 0)) - int(cb.get(p, 0))) for p in set(ca) | set(cb))


def configured_dose(s: dict, phenomenon: str) -> int:
    """The evidence sentences of ``phenomenon`` a condition's configuration asks for: its reinsert rate times the
    sentences of its reference (BABY-F's count, as conditions.build and the reinsert operation round it), plus the
    ``n`` of its add operations; 0 when it asks for none."""
    ref = int((s.get("reference") or {}).get("n_sentences") or s.get("n_filtered") or s.get("n_sentences") or 0)
    rate = (s.get("reinsert_config") or {}).get(phenomenon)
    n = sentences_for(rate, ref) if rate else 0
    return n + sum(int(o.get("n", 0)) for o in s.get("operations") or []
                   if o.get("op") == "add" and o.get("construction") == phenomenon)


def phenomenon_thresholds(a: dict, b: dict, setting, share: float) -> dict[str, tuple[int, int]]:
    """phenomenon -> (threshold, configured dose) of the contrast of two comparable conditions (
    :func:`evidence_difference`): ``setting`` (analysis.void_evidence) as given, or ``auto``: ``share`` of the
    larger of the two conditions' configured doses, at least 1 (1 where neither asks for the phenomenon: only
    identical evidence is void). An integer above a configured dose would call every such contrast void: an
    error naming the key."""
    ca, cb = a.get("dpe_count_targeted") or {}, b.get("dpe_count_targeted") or {}
    out = {}
    for p in sorted(set(ca) | set(cb)):
        dose = max(configured_dose(a, p), configured_dose(b, p))
        who = a if configured_dose(a, p) == dose else b
        out[p] = (threshold(setting, dose, share, f"{who['condition']} at {who.get('size')} ({p}"), dose)
    return out


def threshold(setting, dose: int, share: float, what: str = "") -> int:
    """The void threshold of one phenomenon whose configured dose is ``dose`` sentences (0: not manipulated):
    ``setting`` (analysis.void_evidence) as given, or ``auto``: ``share`` of the dose, at least 1. An integer above
    the dose is an error naming the key (``what``: whose dose, for the message). Also povstim plan's
    (preflight/evidence.py)."""
    if setting == "auto":
        return max(1, math.ceil(share * dose)) if dose else 1
    thr = int(setting)
    if dose and thr > dose:
        raise PovstimError(f"analysis.void_evidence: {thr} is above the configured dose of {what}: {dose} "
                           f"sentence(s)), so every contrast with it would be void; use at most {dose}, or auto "
                           f"({share:g} of each dose)")
    return thr


def phenomenon_void(a: dict, b: dict, setting, share: float) -> dict:
    """Per phenomenon, whether the evidence of two comparable conditions differs by a threshold's worth:
    {"covered": {p: sentences apart}, "void": {p: {evidence, threshold, dose}}}."""
    ca, cb = a.get("dpe_count_targeted") or {}, b.get("dpe_count_targeted") or {}
    out: dict = {"covered": {}, "void": {}}
    for p, (thr, dose) in phenomenon_thresholds(a, b, setting, share).items():
        diff = abs(int(ca.get(p, 0)) - int(cb.get(p, 0)))
        if diff >= thr:  # 0: never void by evidence
            out["covered"][p] = diff
        else:
            out["void"][p] = {"evidence": diff, "threshold": thr, "dose": dose}
    return out


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


def void_pairs(stats: list[dict], threshold, order: list[str] | None = None, share: float = 0.5,
               partial: list | None = None) -> list[dict]:
    """Per size, each pair of conditions whose corpora are identical, or void for every phenomenon (their evidence
    of it differs by fewer sentences than its threshold, :func:`phenomenon_thresholds`; ``threshold``:
    analysis.void_evidence, an integer or auto with ``share``): {size, kept, duplicate, identical, evidence,
    phenomena}. ``stats``: condition.json contents with ``condition`` and ``size``
    (conditions_page.read_condition); ``order``: the config's condition order. ``partial``, a list: filled with
    the comparable pairs that are not void, each with the phenomena it covers and those void for it."""
    order = list(order or condition_order(s["condition"] for s in stats))
    by_size: dict[str, list[dict]] = {}
    for s in stats:
        by_size.setdefault(s["size"], []).append(s)
    out = []
    for size, group in by_size.items():
        group = sorted(group, key=lambda s: s["condition"])
        for i, a in enumerate(group):
            for b in group[i + 1:]:
                if a.get("placebo") or b.get("placebo"):  # no evidence apart by design: read as a placebo
                    continue
                same = bool(a.get("corpus_sha256")) and a.get("corpus_sha256") == b.get("corpus_sha256")
                diff = evidence_difference(a, b)
                per = phenomenon_void(a, b, threshold, share) if diff is not None else None
                # void by the two conditions' definitions (plan.void_definitions, condition.json void_definition)
                why = next((x["void_definition"].get("why") for x, y in ((a, b), (b, a))
                            if (x.get("void_definition") or {}).get("of") == y["condition"]), None)
                if not (same or why or (per is not None and not per["covered"])):
                    if per is not None and partial is not None:
                        kept, dup = _duplicate(a, b, order)
                        partial.append({"size": size, "kept": kept, "duplicate": dup, "phenomena": per})
                    continue
                kept, dup = _duplicate(a, b, order)
                if why and (b.get("void_definition") or {}).get("of") == a["condition"]:
                    kept, dup = a["condition"], b["condition"]  # the duplicate the definitions name
                elif why:
                    kept, dup = b["condition"], a["condition"]
                out.append({"size": size, "kept": kept, "duplicate": dup, "identical": same,
                            "evidence": 0 if same and diff is None else diff,
                            **({"definition": why} if why else {}), **({"phenomena": per} if per else {})})
    return out


def coverage(partial: list[dict], level_of: dict[str, str]) -> dict[tuple[str, str], dict]:
    """The comparable pairs that are not void (``void_pairs(partial=...)``), by their model levels (kept,
    duplicate): {"covered": {phenomenon: {size: sentences apart}}, "void": {phenomenon: {size: {evidence,
    threshold, dose}}}}: what the filtering page may read each contrast on (bayes.filtering_sentences)."""
    out: dict = {}
    for p in partial:
        key = (level_of.get(p["kept"], p["kept"].upper()), level_of.get(p["duplicate"], p["duplicate"].upper()))
        row = out.setdefault(key, {"covered": {}, "void": {}})
        for ph, d in p["phenomena"]["covered"].items():
            row["covered"].setdefault(ph, {})[p["size"]] = d
        for ph, v in p["phenomena"]["void"].items():
            row["void"].setdefault(ph, {})[p["size"]] = v
    return out


def summarise(pairs: list[dict], sizes_of: dict[str, list[str]]) -> list[dict]:
    """Per (kept, duplicate): the sizes where it is void and whether that is every size the duplicate has
    (``sizes_of``: condition -> its sizes), so the whole contrast is void."""
    out: dict[tuple[str, str], dict] = {}
    for p in pairs:
        row = out.setdefault((p["kept"], p["duplicate"]), {"kept": p["kept"], "duplicate": p["duplicate"],
                                                           "sizes": [], "evidence": {}, "identical": {}})
        if p.get("definition"):
            row["definition"] = p["definition"]
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
    if row.get("definition"):  # why, from the conditions' definitions
        head += f"(by definition: {row['definition']}) "
    rule = (f"analysis.void_evidence = {threshold}: fewer evidence sentences of a phenomenon apart than its "
            "threshold (auto: analysis.void_dose_share of its configured dose) is void for it"
            if threshold == "auto" else
            f"analysis.void_evidence = {threshold}: fewer evidence sentences of a phenomenon apart is void for it")
    return (head + f"({'; '.join(how)}; {rule}). {b}'s models there are copies of {a}'s in all but noise, so their cells were left out of the "
            "Bayesian models instead of being counted as independent evidence"
            + (f"; its contrasts with the other conditions are {a}'s." if row["all_sizes"] else
               "; the contrast comes from the other sizes only."))
