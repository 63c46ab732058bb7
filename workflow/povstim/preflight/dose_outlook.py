"""``povstim plan`` for conditions built by corpus operations: every ``reinsert`` step of an
operations chain, and so every dose of a dose series, forecast against the filter estimate of
``preflight.evidence`` before anything runs.

An estimate row (one per filtered corpus x size) gives the corpus's sentences, the targeted pool (removals the
strict rule also flags, for one construction alone: what ``reinsert`` puts back) and ``combos``: how many
sentences the filter lists for each set of constructions, so that what a chain removes is the union of the
constructions it names. A ``reinsert`` step of rate r asks for ``round(r x sentences left)`` (the sentences after
the chain's removals, as ``conditions.operations`` counts them) against the pool, less what earlier steps of the
chain put back; a dose series' members are those steps, one per rate (rate 0 puts nothing back).
"""

from __future__ import annotations

from collections import Counter

from .. import plan as dag_plan
from ..conditions import operations
from ..filter.settings import removal_rules

FLAGS = {"ok": "ok", "may fall short": "MAY FALL SHORT", "cannot be met": "CANNOT BE MET",
         "rounds to 0": "ROUNDS TO 0 SENTENCES"}


def status(need: int, pool: int, high: int, sampled: bool, low: int | None = None) -> str:
    """A rate's fate: met (from a sample: even the pool's 95% lower end ``low`` fills it), may fall short (a
    sample's estimate or its 95% upper end fills it, its lower end does not), cannot be met, or asks for no
    sentence at all in a corpus this small."""
    if need == 0:
        return "rounds to 0"
    if pool >= need and (not sampled or low is None or low >= need):
        return "ok"
    return "may fall short" if sampled and max(pool, high) >= need else "cannot be met"


def removed_for(row: dict, cons) -> int:
    """Sentences of ``row`` the filter lists for any of ``cons``."""
    want = set(cons)
    if not want:
        return 0
    if "combos" not in row:  # a row without its combinations: every removal
        return row["removed"]
    return sum(k for key, k in row["combos"].items() if want.intersection(key.split(",")))


def chain_outlook(config: dict, rows: list[dict]) -> list[dict]:
    """Per condition built by operations x size x reinsert step x construction: sentences needed against the
    targeted pool (the keys of ``evidence.reinsert_outlook``'s rows, plus ``step`` and, for a dose series'
    member, ``series``)."""
    by = {(r["corpus"], r["size"]): r for r in rows}
    rules = list(removal_rules(config))
    out = []
    for name, spec in config["conditions"].items():
        if not spec.get("operations") or not dag_plan.filter_applies(config, name):
            continue
        ops = operations.resolve(config["conditions"], name, rules)
        point = spec.get("dose_point") or {}
        for size in dag_plan.condition_sizes(config, name):
            r = by.get((spec["from"], size))
            if r is not None:
                out += _chain(name, size, ops, r, point.get("series"))
    return out


def _chain(name: str, size: str, ops: list[dict], r: dict, series: str | None) -> list[dict]:
    removed: set[str] = set()
    taken, back, out = 0, Counter(), []
    for step, o in enumerate(ops):
        if o["op"] == "remove":
            removed |= set(o["constructions"])
        elif o["op"] == "random_remove":  # as many sentences as its condition's remove
            taken += removed_for(r, o["constructions"])
        elif o["op"] == "reinsert":
            kept = r["sentences"] - removed_for(r, removed) - taken
            for c, rate in sorted(o["rates"].items()):
                rate = float(rate)
                need = operations.sentences_for(rate, kept)
                pool = max(0, r["pool"].get(c, 0) - back[c])
                high = max(0, r["pool_high"].get(c, 0) - back[c])
                low = max(0, r.get("pool_low", r["pool"]).get(c, 0) - back[c])
                got = min(pool, need)
                back[c] += got
                out.append({"condition": name, "size": size, "phenomenon": c, "rate": rate, "needed": need,
                            "pool": pool, "pool_high": high,
                            "status": status(need, pool, high, r["sample"] is not None, low),
                            "expected_rate": round(got / kept, 6) if kept else None, "step": step,
                            **({"series": series} if series else {})})
    return out


def dose_outlook(config: dict, rows: list[dict], chains: list[dict]) -> list[dict]:
    """Per dose series x size x rate (ascending): the sentences the rate asks for, the pool, the status; rate 0
    asks for none."""
    by = {(r["corpus"], r["size"]): r for r in rows}
    steps = {(o["condition"], o["size"], o["phenomenon"]): o for o in chains if o.get("series")}
    out = []
    for series, s in operations.dose_series(config["conditions"]).items():
        c = s["construction"]
        first = next(iter(s["members"]))
        corpus = config["conditions"][first]["from"]
        for size in dag_plan.condition_sizes(config, first):
            r = by.get((corpus, size))
            if r is None:
                continue
            for member, rate in sorted(s["members"].items(), key=lambda kv: kv[1]):
                o = steps.get((member, size, c))
                base = {"series": series, "construction": c, "size": size, "condition": member, "rate": rate}
                if o is None:  # rate 0: nothing put back
                    pool = r["pool"].get(c, 0)
                    out.append({**base, "needed": 0, "pool": pool, "pool_high": r["pool_high"].get(c, pool),
                                "status": "ok", "expected_rate": 0.0})
                else:
                    out.append({**base, **{k: o[k] for k in ("needed", "pool", "pool_high", "status",
                                                             "expected_rate")}})
    return out


def render(doses: list[dict]) -> list[str]:
    """Text lines: one per dose, grouped by series and size, and a warning naming the doses that fall short."""
    if not doses:
        return []
    lines = ["Dose series (conditions.<name>.dose: targeted sentences each rate puts back / the targeted pool):"]
    last = None
    for d in doses:
        if (d["series"], d["size"]) != last:
            last = (d["series"], d["size"])
            pool = f"{d['pool']:,}" + (f" [<= {d['pool_high']:,}]" if d["pool_high"] != d["pool"] else "")
            lines.append(f"  {d['series']} ({d['construction']}) {d['size']}: targeted pool {pool}")
        line = f"    rate {d['rate']:<8g} {d['condition']:<24} needs {d['needed']:>6,}"
        if d["rate"] > 0:
            line += f"  {FLAGS[d['status']]}"
            if d["status"] != "ok":
                line += f": its measured rate would be ~{d['expected_rate']:.6f}"
        lines.append(line)
    short = [d for d in doses if d["rate"] > 0 and d["status"] != "ok"]
    if short:
        names = ", ".join(f"{d['condition']} {d['size']}" for d in short)
        lines.append(f"  -> WARNING: {len(short)} dose(s) the targeted evidence cannot (or may not) fill, or that "
                     f"round to no sentence ({names}): those members would hold less evidence than their rate "
                     "(their SHORTFALL, conditions.tsv), and the dose-response fit reads the configured rate. Use "
                     "a larger corpus, lower rates or another filter mode (docs/manipulations.md).")
    return lines
