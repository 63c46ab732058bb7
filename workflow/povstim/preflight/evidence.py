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
from ..conditions.build import build as build_condition
from ..conditions.operations import placebo_series as operations_placebo_series
from ..conditions.operations import pool_phenomenon, sentences_for
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
from ..analysis.guardrails import void
from ..io import PovstimError, parse_size
from ..parse.run import parse_texts, parser_settings
from ..settings import section
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
        phen = pool_phenomenon(phens, targeted.get(i, ()))  # what conditions.build may put back: its definition
        if phen:
            pool[phen] = pool.get(phen, 0) + 1
    return {"n": len(lines), "removed": len(removed), "per_phenomenon": per_phen, "pool": pool, "combos": combos,
            "mode": fs.mode, "backend": ps.backend, "audit": (removed, targeted)}


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
    exact: dict[tuple[str, str], tuple] = {}  # (corpus, size) -> (base lines, removed, targeted): every sentence counted
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
                                               int(config["corpora"][corpus]["seed"]), tolerance=None,
                                               warn=False)  # plan.size_table says a dominant line
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
                                 "combos": c["combos"], "pool": c["pool"], "pool_high": dict(c["pool"]),
                                 "pool_low": dict(c["pool"]), "mode": c["mode"], "backend": c["backend"]})
                    exact[(corpus, size)] = (bases[size], *c["audit"])
                continue
            largest = corpus_sizes[-1]
            base = bases[largest]
            n = min(sample, len(base))
            picked = sorted(random.Random(f"povstim-plan:{corpus}:{largest}").sample(range(len(base)), n))
            log.info("plan: parsing %d of the %d sentences of %s at %s (%s) to estimate the filter", n, len(base),
                     corpus, largest, backend)
            try:
                c = count_filter([base[i] for i in picked], config, corpus, None)
                # a smaller size whose whole corpus fits in the sample is counted, not scaled from the largest
                small = {size: count_filter(bases[size], config, corpus, None) for size in corpus_sizes[:-1]
                         if len(bases[size]) <= sample}
            except (PovstimError, ImportError, OSError) as exc:  # no parser installed here: plan the rest
                notes.append(f"{corpus}: no estimate of the DPE filter: the {backend} parser did not run "
                             f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})")
                continue
            sample_audit = c.pop("audit")
            for size, sc in small.items():
                rows.append({"corpus": corpus, "size": size, "sentences": sc["n"],
                             "method": f"all {sc['n']:,} sentences at {size}", "sample": None,
                             "sample_counts": {k: v for k, v in sc.items() if k != "audit"},
                             "removed": sc["removed"], "per_phenomenon": sc["per_phenomenon"], "combos": sc["combos"],
                             "pool": sc["pool"], "pool_high": dict(sc["pool"]), "pool_low": dict(sc["pool"]),
                             "mode": sc["mode"], "backend": sc["backend"]})
                exact[(corpus, size)] = (bases[size], *sc["audit"])
            for size in corpus_sizes:
                if size in small:
                    continue
                total = len(bases[size])
                scale = total / n
                pool = {p: round(k * scale) for p, k in c["pool"].items()}
                pool_high = {p: math.ceil(_interval(k, n)[1] * total) for p, k in c["pool"].items()}
                # the 95% interval's lower end: "ok" only when even it fills a rate (an estimate of
                # 3 at a smaller size, scaled from a sample, was "ok"; the run found 0)
                pool_low = {p: math.floor(_interval(k, n)[0] * total) for p, k in c["pool"].items()}
                counted = size == largest and n == len(base)  # the "sample" is the whole corpus: counted
                if counted:
                    pool_high = pool_low = dict(pool)
                    exact[(corpus, size)] = (base, *sample_audit)
                rows.append({"corpus": corpus, "size": size, "sentences": total,
                             "method": (f"all {n:,} sentences at {largest}" if n == len(base) else
                                        f"a sample of {n:,} of the {len(base):,} sentences at {largest}"),
                             "sample": None if counted else n, "sample_counts": c,
                             "removed": round(c["removed"] * scale),
                             "per_phenomenon": {p: round(k * scale) for p, k in c["per_phenomenon"].items()},
                             "combos": {p: round(k * scale) for p, k in c["combos"].items()},
                             "pool": pool, "pool_high": pool_high, "pool_low": pool_low, "mode": c["mode"],
                             "backend": c["backend"]})
    # the residual evidence: what the removals imply is left in BABY-F at the measured recall
    source = None
    if rows:
        recalls, source, recall_exact = config_recall(config, backend, rows[0]["mode"])
        for r in rows:
            r["residual"] = residual_rows(r["per_phenomenon"], recalls, recall_exact)
    chains = dose_outlook.chain_outlook(config, rows)
    reinsert = reinsert_outlook(config, rows, exact)
    return {"residual_source": source, "rows": rows, "reinsert": reinsert + chains,
            "void": void_outlook(config, reinsert), "dose": dose_outlook.dose_outlook(config, rows, chains),
            "placebo": placebo_outlook(config, rows, reinsert + chains),
            "notes": notes, "no_match": no_match(rows), "unchanged": unchanged_operations(config, rows)}


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


def reinsert_outlook(config: dict, rows: list[dict], exact: dict | None = None) -> list[dict]:
    """Per condition with reinsert rates x size x phenomenon: sentences needed against the targeted pool. Where
    every sentence was counted (``exact``: the gold parser, or a corpus no larger than the sample) the condition
    stage's own ``conditions.build.build`` runs on the plan's audit, so "ok" and the sentences put back are what
    the run will find; from a sample, "ok" needs the pool's 95% lower end to fill the rate."""
    by = {(r["corpus"], r["size"]): r for r in rows}
    exact = exact or {}
    out = []
    for name, spec in config["conditions"].items():
        rates = {p: float(v) for p, v in sorted((spec.get("reinsert") or {}).items()) if float(v) > 0}
        if not rates or not dag_plan.filter_applies(config, name):
            continue
        phens = condition_phenomena(config, spec)
        for size in dag_plan.condition_sizes(config, name):
            r = by.get((spec["from"], size))
            if r is None:
                continue
            # BABY-F's sentences: the corpus less what the condition removes (its filter list, or filter: true's)
            kept = r["sentences"] - dose_outlook.removed_for(r, phens or removal_rules(config))
            built = None
            if (spec["from"], size) in exact:  # the condition stage's code on the plan's audit
                lines, removed, targeted = exact[(spec["from"], size)]
                if phens:  # --phenomena: the rows of the condition's constructions only
                    removed = {i: [p for p in v if p in phens] for i, v in removed.items()}
                    removed = {i: v for i, v in removed.items() if v}
                built = build_condition(len(lines), removed, rates, int(config["split"]["seed"]), targeted,
                                        words=[len(x.split()) for x in lines])
            for phen, rate in rates.items():
                need = sentences_for(rate, kept)
                pool, high = r["pool"].get(phen, 0), r["pool_high"].get(phen, 0)
                low = r.get("pool_low", r["pool"]).get(phen, 0)
                if built is not None:
                    got = built.reinserted_targeted.get(phen, 0)
                    status = dose_outlook.status(need, got if phen in built.shortfall else need, high, False)
                else:
                    got = min(pool, need)
                    # "rounds to 0": the corpus is too small for the rate, BABY gets none of it
                    status = dose_outlook.status(need, pool, high, r["sample"] is not None, low)
                out.append({"condition": name, "size": size, "phenomenon": phen, "rate": rate, "needed": need,
                            "pool": pool, "pool_high": high, "pool_low": low, "status": status,
                            "expected": got, "expected_low": got if built is not None else min(low, need),
                            "expected_rate": round(got / kept, 6) if kept else None})
    return out


def void_outlook(config: dict, reinsert: list[dict]) -> list[dict]:
    """Per condition with reinsert rates x size: the evidence sentences it is expected to get back per phenomenon,
    against its threshold (``analysis.void_evidence``, auto: ``void_dose_share`` of the configured dose, the
    sentences the rate asks for; analysis/guardrails/void.threshold): a phenomenon under it is void for the
    contrast with the filtered sibling (a condition of the same corpus and removals with nothing put back:
    BABY-F), every phenomenon under it makes the contrast void, as the analysis will find."""
    analysis = section("analysis", config.get("analysis") or {}, "analysis")
    setting, share = analysis["void_evidence"], float(analysis["void_dose_share"])
    conds = config["conditions"]
    out = []
    for name, spec in conds.items():
        rows = [o for o in reinsert if o["condition"] == name]
        if not rows:
            continue
        sibling = next((c for c, s in conds.items() if c != name and s["from"] == spec["from"]
                        and dag_plan.filter_applies(config, c) and not s.get("reinsert") and not s.get("operations")
                        and condition_phenomena(config, s) == condition_phenomena(config, spec)), None)
        if sibling is None:
            continue
        for size in dict.fromkeys(o["size"] for o in rows):
            at = [o for o in rows if o["size"] == size]
            expected, low = sum(o["expected"] for o in at), sum(o["expected_low"] for o in at)
            per = {o["phenomenon"]: {"expected": o["expected"], "low": o["expected_low"], "dose": o["needed"],
                                     "threshold": void.threshold(setting, o["needed"], share,
                                                                 f"{name} at {size} ({o['phenomenon']}")}
                   for o in at}
            gone = [p for p, v in per.items() if v["expected"] < v["threshold"]]
            maybe = [p for p, v in per.items() if v["low"] < v["threshold"]]
            status = "void" if len(gone) == len(per) else ("may be void" if len(maybe) == len(per) else "ok")
            # nothing goes back: the condition stage writes the sibling's text byte for byte, and the train jobs
            # of the two train one model (train/reuse.py); a few sentences back is void but trained apart
            out.append({"condition": name, "sibling": sibling, "size": size, "expected": expected, "low": low,
                        "threshold": setting, "status": status, "identical": expected == 0, "phenomena": per,
                        "void_phenomena": gone if status == "ok" else [],
                        "placebo": any((s.get("placebo_point") or {}).get("of") == name for s in conds.values()),
                        "shared_tokenizer": config["tokenizer"]["shared"] is not False})
    return out


def placebo_outlook(config: dict, rows: list[dict], reinsert: list[dict]) -> list[dict]:
    """Per placebo series x size (conditions.<name>.placebo): the sentences each draw changes (twice the evidence
    its ``of`` condition puts back in place of as many others: the lines by which of and vs differ) against the
    sentences without evidence its ``vs`` corpus holds; more is ``CANNOT BE MATCHED`` (the condition job's error,
    said before anything runs). Only for an ``of`` whose reinsertions the plan forecasts."""
    out = []
    by = {(r["corpus"], r["size"]): r for r in rows}
    for series, p in operations_placebo_series(config["conditions"]).items():
        spec = config["conditions"][p["members"][0]]
        for size in dag_plan.condition_sizes(config, p["members"][0]):
            back = [o for o in reinsert if o["condition"] == p["of"] and o["size"] == size]
            r = by.get((spec["from"], size))
            if not back or r is None:
                continue
            changes = 2 * sum(o["expected"] for o in back)
            free = r["sentences"] - r["removed"]
            out.append({"series": series, "of": p["of"], "vs": p["vs"], "size": size, "draws": len(p["members"]),
                        "changes": changes, "free": free, "ok": changes <= free})
    return out


def render_placebo(placebos: list[dict]) -> list[str]:
    if not placebos:
        return []
    lines = ["Placebo conditions (conditions.<name>.placebo: sentences each draw changes / sentences without evidence):"]
    for p in placebos:
        lines.append(f"  {p['series']:<14} {p['size']:>6}  {p['draws']} draws of {p['vs']} vs. {p['of']}: "
                     f"~{p['changes']:,} / {p['free']:,}  " + ("ok" if p["ok"] else "CANNOT BE MATCHED"))
    bad = [p for p in placebos if not p["ok"]]
    if bad:
        lines.append(f"  -> WARNING: conditions.{bad[0]['series']}.placebo: cannot be matched at "
                     f"{', '.join(p['size'] for p in bad)}: the condition job will stop there")
    return lines


SMALL_MANIPULATION = 50  # evidence sentences: fewer, and a per-condition tokenizer may move more than the evidence
# does (the issue-63 experiment: 4 sentences changed 6-8 vocabulary entries and 2,208 merges' order); placebos say


def reused_models(voids: list[dict]) -> dict[tuple[str, str], str]:
    """(condition, size) -> the sibling whose models its train jobs will link instead of training (the void
    rows whose text is expected identical to the sibling's); the compute forecast counts those trainings once."""
    return {(v["condition"], v["size"]): v["sibling"] for v in voids if v["status"] == "void" and v.get("identical")}


def render_void(voids: list[dict]) -> list[str]:
    bad = [v for v in voids if v["status"] != "ok"]
    partly = [v for v in voids if v["status"] == "ok" and v.get("void_phenomena")]
    small = sorted({(v["condition"], v["sibling"]) for v in voids if v["status"] != "void"
                    and v["expected"] < SMALL_MANIPULATION and not v.get("placebo")})
    if not (bad or partly or small):
        return []
    lines = [f"Void contrasts (evidence put back per phenomenon vs. its threshold, analysis.void_evidence = "
             f"{voids[0]['threshold']}):"]
    for v in bad:
        got = (f"{v['expected']:,}" if v["low"] == v["expected"] else f"~{v['expected']:,} (95% low {v['low']:,})")
        lines.append(f"  {v['condition']:<10} {v['size']:>6}  gets back {got} evidence sentence(s): "
                     + ("VOID" if v["status"] == "void" else "MAY BE VOID")
                     + f": its corpus is {v['sibling']}'s in evidence"
                     + (f"; identical text: trains one model for both (its train jobs link {v['sibling']}'s "
                        "models)" if v["status"] == "void" and v.get("identical") else ""))
    for v in partly:  # a contrast that covers some phenomena: read on them only
        lines.append(f"  {v['condition']:<10} {v['size']:>6}  void for " + ", ".join(
            f"{p} (gets back {v['phenomena'][p]['expected']:,}, threshold {v['phenomena'][p]['threshold']:,} of a "
            f"dose of {v['phenomena'][p]['dose']:,})" for p in v["void_phenomena"])
            + f": its contrast with {v['sibling']} is read on "
            + ", ".join(p for p in v["phenomena"] if p not in v["void_phenomena"]) + " only")
    if bad:
        every = {v["condition"] for v in bad if v["status"] == "void"} - {
            v["condition"] for v in voids if v["status"] != "void"}
        lines.append("  -> WARNING: the analysis leaves a void condition's cells out of the Bayesian models and "
                     "reports its contrast as VOID, with no estimate" + (f" ({', '.join(sorted(every))}: at every "
                                                                         "size)" if every else "") +
                     ". Add child-directed text with the evidence, or use larger sizes, before training.")
    for c, sib in small:
        lines.append(f"  -> ADVICE: {c} vs. {sib} changes fewer than {SMALL_MANIPULATION} evidence sentences at "
                     "some size: a per-condition tokenizer and the corpus' other changes can move the models more "
                     f"than that; add placebo conditions (conditions: {c}-placebo: {{placebo: {{of: {c}, vs: {sib}}}}}) "
                     "so the report reads the contrast against chance corpus changes"
                     + ("" if any(v.get("shared_tokenizer") for v in voids) else
                        ", or share one tokenizer (tokenizer.shared: true)")
                     + " (docs/manipulations.md, \"Placebo conditions\")")
    return lines


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
    return (lines + render_void(ev.get("void") or []) + render_placebo(ev.get("placebo") or [])
            + dose_outlook.render(ev.get("dose") or []))
