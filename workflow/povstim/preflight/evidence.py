"""``povstim plan``: what the DPE filter will remove and what BABY can put back, before anything runs.

For every corpus x size that a filtered condition draws from, the corpus is assembled in memory as the
``assemble`` rule builds it, parsed with the configured parser behind the same prefilter, and the DPE
filter's own rules run on it (``filter.run.run_filter``): the sentences removed (per phenomenon) and the
**targeted pool** -- removals the strict rule also flags, for exactly one phenomenon, the only sentences
BABY puts back (``conditions.build``). For each condition with ``reinsert`` rates this gives the
sentences a rate needs, ``round(rate x |BABY-F|)``, against the pool: a rate the pool cannot fill is
said before anything is trained (the run would end with BABY's ``SHORTFALL`` and a lower measured rate).

How it parses:

* ``parser.backend: gold`` (synthetic sources): every sentence of every size, from the generator's own
  trees -- exact counts, what the filter stage will find;
* spaCy / stanza: a seeded random sample of ``sample`` sentences of the corpus at its largest size (all of
  them when the corpus has fewer), parsed behind the prefilter (``parser.cache_dir``'s parse cache is
  used when configured), and its rates scaled to each size. A sample gives counts with an error: every
  estimate comes with a 95% interval (Clopper-Pearson on the sample's count), and a rate is "cannot be
  met" only when even the interval's upper end is short, "may fall short" when the estimate is.
"""

from __future__ import annotations

import logging
import math
import random
import tempfile
from collections import Counter
from dataclasses import replace
from pathlib import Path

from scipy import stats

from .. import plan as dag_plan
from ..corpus.assemble import assemble
from ..dpe import audit
from ..filter.run import no_match as filter_no_match
from ..filter.run import run_filter
from ..filter.residual import config_recall, residual_rows
from ..filter.settings import (
    condition_phenomena,
    filter_rules,
    filter_settings,
    removal_rules,
)
from ..io import PovstimError, parse_size
from ..parse.run import parse_texts, parser_settings
from . import dose_outlook

log = logging.getLogger("povstim.plan")

DEFAULT_SAMPLE = 5000


def _interval(k: int, n: int) -> tuple[float, float]:
    """95% Clopper-Pearson interval of a binomial proportion k / n."""
    lo = 0.0 if k == 0 else float(stats.beta.ppf(0.025, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(0.975, k + 1, n - k))
    return lo, hi


def filtered_corpora(config: dict) -> dict[str, list[str]]:
    """corpus -> the sizes at which a condition the DPE filter runs for draws from it."""
    out: dict[str, list[str]] = {}
    for name, spec in config["conditions"].items():
        if not dag_plan.filter_applies(config, name):
            continue
        sizes = out.setdefault(spec["from"], [])
        sizes += [s for s in dag_plan.condition_sizes(config, name) if s not in sizes]
    return {c: sorted(s, key=parse_size) for c, s in out.items()}


def count_filter(lines: list[str], config: dict, corpus: str, gold: list[str] | None) -> dict:
    """Parse ``lines`` and run the filter: removed sentences, per phenomenon, and the targeted pool."""
    # what the filter stage runs: filter.rules plus the constructions the conditions' filter lists name
    fs = filter_settings({**(config.get("filter") or {}), "rules": list(filter_rules(config))}, where="filter")
    ps = parser_settings(config.get("parser"), where="parser")
    ps = replace(ps, prefilter_check=0)  # the spared-sentence check guards rule edits, not this count
    language = dag_plan.corpus_languages(config, corpus)[0]
    items = dict(enumerate(lines))
    sentences, _ = parse_texts(items, ps, tuple(fs.rules), gold=gold, language=language)
    result = run_filter(sentences, fs, base=items)
    removed = audit.removed(result.rows)
    targeted = audit.targeted(result.rows)
    per_phen = {p: 0 for p in fs.rules}
    pool = {p: 0 for p in fs.rules}
    # removals per set of constructions: what a condition removing some of them loses is their union
    combos = dict(sorted(Counter(",".join(sorted(set(p))) for p in removed.values()).items()))
    for i, phens in removed.items():
        for p in set(phens):
            per_phen[p] = per_phen.get(p, 0) + 1
        if len(phens) == 1 and phens[0] in targeted.get(i, ()):  # what conditions.build may put back
            pool[phens[0]] = pool.get(phens[0], 0) + 1
    return {"n": len(lines), "removed": len(removed), "per_phenomenon": per_phen, "pool": pool, "combos": combos,
            "mode": fs.mode, "backend": ps.backend}


def estimate(config: dict, counts: dict, sizes: list[dict], sample: int = DEFAULT_SAMPLE,
             gold_blocks: dict[str, list[str]] | None = None) -> dict:
    """The filter's removals and the targeted pool per filtered corpus x size, and each reinsert rate's fate.

    ``counts``: the plan's cleaned sources (``SourceCount``, with ``lines``); ``sizes``: its size table;
    ``gold_blocks``: per synthetic source, the CoNLL-U block of each of its lines (the gold backend's trees).
    """
    corpora = filtered_corpora(config)
    if not corpora:
        return {}
    backend = parser_settings(config.get("parser"), where="parser").backend
    rows, notes = [], []
    with tempfile.TemporaryDirectory(prefix="povstim-plan-") as tmp:
        gold_paths: dict[str, str] = {}
        if backend == "gold":  # one CoNLL-U per synthetic source, as `povstim synth` writes it
            for src, blocks in (gold_blocks or {}).items():
                path = Path(tmp) / f"{src}.conllu"
                path.write_text("".join(blocks), encoding="utf-8")
                gold_paths[src] = str(path)
        for corpus, corpus_sizes in corpora.items():
            mixture_ok = [r for r in sizes if r["corpus"] == corpus and r["size"] in corpus_sizes]
            if any(r["ok"] is None for r in mixture_ok):
                lacking = [f"{s} is {counts[s].status}" for s in config["corpora"][corpus]["mixture"]
                           if s in counts and counts[s].status != "ok"]
                notes.append(f"{corpus}: no estimate: source {', '.join(lacking) or 'not available yet'}"
                             + (" (download it first)" if any(c.endswith("not downloaded") for c in lacking) else
                                " (see Sources above)"))
                continue
            bases = {}
            for r in mixture_ok:
                budget = r["budget"] if r["ok"] else r["largest"]
                mixture = dag_plan.mixture(config, corpus, r["size"])
                bases[r["size"]], _ = assemble({s: counts[s].lines for s in mixture}, mixture, budget,
                                               int(config["corpora"][corpus]["seed"]), tolerance=None)
            if backend == "gold":
                for size in corpus_sizes:
                    # the parse rule's --gold: the mixture's synthetic sources, in mixture order
                    gold = [gold_paths[s] for s in dag_plan.mixture(config, corpus, size) if s in gold_paths]
                    try:
                        c = count_filter(bases[size], config, corpus, gold)
                    except PovstimError as exc:
                        notes.append(f"{corpus} {size}: no estimate ({str(exc).splitlines()[0]})")
                        continue
                    rows.append({"corpus": corpus, "size": size, "sentences": c["n"], "method": "all (gold trees)",
                                 "sample": None, "removed": c["removed"], "per_phenomenon": c["per_phenomenon"],
                                 "combos": c["combos"], "pool": c["pool"], "pool_high": dict(c["pool"]), "mode": c["mode"],
                                 "backend": c["backend"]})
                continue
            largest = corpus_sizes[-1]
            base = bases[largest]
            n = min(sample, len(base))
            picked = sorted(random.Random(f"povstim-plan:{corpus}:{largest}").sample(range(len(base)), n))
            log.info("plan: parsing %d of the %d sentences of %s at %s (%s) to estimate the filter", n, len(base),
                     corpus, largest, backend)
            try:
                c = count_filter([base[i] for i in picked], config, corpus, None)
            except (PovstimError, ImportError, OSError) as exc:  # no parser installed here: plan the rest
                notes.append(f"{corpus}: no estimate of the DPE filter: the {backend} parser did not run "
                             f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})")
                continue
            for size in corpus_sizes:
                total = len(bases[size])
                scale = total / n
                pool = {p: round(k * scale) for p, k in c["pool"].items()}
                pool_high = {p: math.ceil(_interval(k, n)[1] * total) for p, k in c["pool"].items()}
                exact = size == largest and n == len(base)  # the "sample" is the whole corpus: counted
                if exact:
                    pool_high = dict(pool)
                rows.append({"corpus": corpus, "size": size, "sentences": total,
                             "method": (f"all {n:,} sentences at {largest}" if n == len(base) else
                                        f"a sample of {n:,} of the {len(base):,} sentences at {largest}"),
                             "sample": None if exact else n, "sample_counts": c,
                             "removed": round(c["removed"] * scale),
                             "per_phenomenon": {p: round(k * scale) for p, k in c["per_phenomenon"].items()},
                             "combos": {p: round(k * scale) for p, k in c["combos"].items()},
                             "pool": pool, "pool_high": pool_high, "mode": c["mode"], "backend": c["backend"]})
    # the residual evidence: what the removals imply is left in BABY-F at the measured recall (issue 52)
    source = None
    if rows:
        recalls, source, exact = config_recall(config, backend, rows[0]["mode"])
        for r in rows:
            r["residual"] = residual_rows(r["per_phenomenon"], recalls, exact)
    chains = dose_outlook.chain_outlook(config, rows)
    return {"residual_source": source, "rows": rows, "reinsert": reinsert_outlook(config, rows) + chains,
            "dose": dose_outlook.dose_outlook(config, rows, chains), "notes": notes, "no_match": no_match(rows),
            "unchanged": unchanged_operations(config, rows)}


def unchanged_operations(config: dict, rows: list[dict]) -> list[str]:
    """The conditions' remove and replace operations that would change nothing: every construction they name
    is found in no sentence of the condition's corpus (an AANN -> ANAN replace on a corpus without AANNs
    would train an unchanged copy under the counterfactual's name)."""
    out = []
    for name, spec in config["conditions"].items():
        mine = [r for r in rows if r["corpus"] == spec["from"]]
        if not mine or not spec.get("operations"):
            continue
        for k, o in enumerate(spec["operations"]):
            if o["op"] == "replace":
                cons = [o["construction"]]
            elif o["op"] == "remove" and isinstance(o.get("constructions"), list):
                cons = list(o["constructions"])
            else:
                continue
            if cons and all(r["per_phenomenon"].get(c, 1) == 0 for r in mine for c in cons):
                sample = mine[-1]["sample"]
                of = f"the {sample:,}-sentence sample" if sample else "the corpus"
                point = spec.get("dose_point")
                where = f"conditions.{point['series'] if point else name}.operations[{k}]"
                out.append(f"{where} {o['op']} {', '.join(cons)}: no sentence of {of} of {spec['from']} holds it: "
                           f"nothing would be {'rewritten' if o['op'] == 'replace' else 'removed'} ({name} would be "
                           "an unchanged copy)")
    return list(dict.fromkeys(out))


def no_match(rows: list[dict]) -> list[dict]:
    """Per corpus, the declarative constructions (library or filter.constructions) the filter would find in no
    sentence of it (at any size; in a sampled estimate, none of the sample): a typo in a pattern, or a corpus
    without the construction. Python phenomena (App. C's) are left out: their zero is a corpus fact."""
    out = []
    for corpus in dict.fromkeys(r["corpus"] for r in rows):
        mine = [r for r in rows if r["corpus"] == corpus]
        names = filter_no_match({"per_phenomenon": {p: sum(r["per_phenomenon"].get(p, 0) for r in mine)
                                                    for p in mine[0]["per_phenomenon"]}})
        if names:
            sample = mine[-1]["sample"]
            out.append({"corpus": corpus, "constructions": names,
                        "of": f"the {sample:,}-sentence sample" if sample else f"its {mine[-1]['sentences']:,} sentences"})
    return out


def reinsert_outlook(config: dict, rows: list[dict]) -> list[dict]:
    """Per condition with reinsert rates x size x phenomenon: sentences needed against the targeted pool."""
    by = {(r["corpus"], r["size"]): r for r in rows}
    out = []
    for name, spec in config["conditions"].items():
        rates = {p: float(v) for p, v in sorted((spec.get("reinsert") or {}).items()) if float(v) > 0}
        if not rates or not dag_plan.filter_applies(config, name):
            continue
        for size in dag_plan.condition_sizes(config, name):
            r = by.get((spec["from"], size))
            if r is None:
                continue
            # BABY-F's sentences: the corpus less what the condition removes (its filter list, or filter: true's)
            kept = r["sentences"] - dose_outlook.removed_for(
                r, condition_phenomena(config, spec) or removal_rules(config))
            for phen, rate in rates.items():
                need = int(round(rate * kept))
                pool, high = r["pool"].get(phen, 0), r["pool_high"].get(phen, 0)
                # "rounds to 0": the corpus is too small for the rate, BABY gets none of it
                status = dose_outlook.status(need, pool, high, r["sample"] is not None)
                got = min(pool, need)
                out.append({"condition": name, "size": size, "phenomenon": phen, "rate": rate, "needed": need,
                            "pool": pool, "pool_high": high, "status": status,
                            "expected_rate": round(got / kept, 6) if kept else None})
    return out


def render(ev: dict) -> list[str]:
    """Text lines for the plan."""
    if not ev:
        return []
    lines = [""]
    rows = ev["rows"]
    if rows:
        r0 = rows[0]
        how = ("every sentence, gold trees: exact" if "sample_counts" not in r0 else
               "estimated from a seeded sample of each corpus at its largest size, parsed behind the prefilter "
               "(povstim plan --filter-sample N; 95% upper bounds in brackets)")
        lines.append(f"DPE filter ({r0['mode']} on {r0['backend']} parses; {how}):")
    parsed = []  # how each corpus was parsed: after the table, not between its per-size lines
    for r in rows:
        per = ", ".join(f"{p} {k:,}" for p, k in r["per_phenomenon"].items())
        pool = ", ".join(f"{p} {k:,}" + (f" [<= {r['pool_high'][p]:,}]" if r["sample"] is not None else "")
                         for p, k in r["pool"].items())
        share = r["removed"] / r["sentences"] if r["sentences"] else 0.0
        approx = "~" if r["sample"] is not None else ""
        lines.append(f"  {r['corpus']:<10} {r['size']:>6}  {r['sentences']:>9,} sentences; removes {approx}"
                     f"{r['removed']:,} ({share:.1%}: {per}); targeted pool {approx}{pool}")
        if r.get("residual"):
            lines.append("  " + " " * 18 + "still in BABY-F (expected DPE sentences, 95%): " + "; ".join(
                f"{p} {x['text']}" for p, x in r["residual"].items()))
        if "sample_counts" in r and (r["corpus"], r["size"]) == next(
                (x["corpus"], x["size"]) for x in rows if x["corpus"] == r["corpus"]):
            parsed.append(f"  ({r['corpus']}: parsed {r['method']}, seeded)")
    lines += parsed
    if rows and ev.get("residual_source"):
        lines.append(f"  (still in BABY-F: removals x (1 - recall) / recall, recall from {ev['residual_source']}; "
                     "docs/filter.md, \"The residual evidence\")")
    for note in ev.get("notes", []):
        lines.append(f"  note: {note}")
    for u in ev.get("unchanged", []):
        lines.append(f"  -> WARNING: NOTHING CHANGED: {u}")
    for nm in ev.get("no_match", []):
        lines.append(f"  -> WARNING: NO MATCH: {nm['corpus']}: construction(s) {', '.join(nm['constructions'])} "
                     f"match no sentence of {nm['of']}: a condition removing or rewriting them changes nothing (a typo in a "
                     "pattern's values, or a corpus without the construction; docs/constructions.md)")
    reinsert = [o for o in ev["reinsert"] if not o.get("series")]  # a dose series' members: below
    if reinsert:
        lines.append("Reinsertion (conditions.<name>.reinsert: sentences needed at the rate / targeted pool):")
    for o in reinsert:
        flag = {"ok": "ok", "may fall short": "MAY FALL SHORT", "cannot be met": "CANNOT BE MET",
                "rounds to 0": "ROUNDS TO 0 SENTENCES"}[o["status"]]
        pool = f"{o['pool']:,}" + (f" [<= {o['pool_high']:,}]" if o["pool_high"] != o["pool"] else "")
        line = (f"  {o['condition']:<10} {o['size']:>6}  {o['phenomenon']:<20} {o['rate']:g}: needs {o['needed']:,}, "
                f"pool {pool}  {flag}")
        if o["status"] != "ok":
            line += f": BABY's measured rate would be ~{o['expected_rate']:.5f}"
        lines.append(line)
    short = [o for o in reinsert if o["status"] != "ok"]
    if short:
        lines.append(f"  -> WARNING: {len(short)} reinsert rate(s) the targeted evidence cannot (or may not) fill, "
                     "or that round to no sentence at all in a corpus this small: "
                     "BABY would hold less evidence than configured (its SHORTFALL, conditions.tsv and the "
                     "reinsert_shortfall guardrail). Use more or larger child-directed sources, a lower rate, or "
                     "another filter mode (docs/filter.md).")
    return lines + dose_outlook.render(ev.get("dose") or [])
