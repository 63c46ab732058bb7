#!/usr/bin/env python
"""Benchmark construction matching on real CHILDES parses: 20 constructions against App. C's two rules.

Parses a fixed, seeded sample of AO-CHILDES adult utterances once with spaCy (en_core_web_sm, the
parse stage's path; or reads the parses of an earlier run with --parses), then times, in one run and
on the same parsed sentences, ``dpe.find_dpe`` in posh mode with:

- **two**: App. C's two Python rules (question_formation, binding) — today's filter;
- **twenty**: every registered phenomenon — the library's declarative constructions (FiCT's 15 and
  the AANN), POSH's three Python phenomena (question_formation, binding, wanna) — padded to 20 with
  a user-declared construction written in this script (a config's ``filter.constructions`` entry, no
  Python: docs/constructions.md's example), so the count is 16 library + 3 POSH + 1 user = 20;

and the library constructions alone through both matchers: the compiled one the rules run
(``constructions/fastmatch.py``) and spaCy's DependencyMatcher over a Doc per sentence (the reference,
and the path every construction ran before). Each timing is the best of ``--repeats`` interleaved
rounds (the machine is shared); the ratios are of timings of this one run. The compiled matcher's
caches (its plans, the token rows it has seen) are emptied before each of its rounds — "cold", what
one filter run over these sentences pays — and the round is repeated "warm" (every row, and every
sentence's search, seen before).
It also checks that the rules as the filter runs them and the DependencyMatcher give the same match
(pattern and tokens) for every construction, mode and sentence.

    .venv/bin/python scripts/speed_constructions.py [--n 20000] [--parses /tmp/aochildes.conllu] [--clock cpu] [--out bench.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow"))
sys.path.insert(0, str(REPO / "scripts"))

from povstim import dpe
from povstim.constructions import library, match
from povstim.parse import backends
from povstim.parse.conllu import read_file, write
from speed_filter import childes_adult_utterances

TWO = ("question_formation", "binding")
# The padding: a user construction as a config declares it (filter.constructions), no Python.
USER = [
    {"name": "intransitive_subject", "description": "a subject whose verb has no object",
     "citation": "docs/constructions.md's example", "targets": {"blimp": ["intransitive"]},
     "patterns": [{"name": "subject_no_object",
                   "nodes": {"verb": {"upos": "VERB"}, "subj": {"deprel": "nsubj"}},
                   "relations": [["verb", ">", "subj"]],
                   "absent": [["verb", ">", {"deprel": ["obj", "ccomp", "xcomp"]}]]}]},
]


def sample_parses(args) -> list:
    if args.parses and args.parses.is_file():
        return read_file(args.parses)
    texts = childes_adult_utterances(args.data)
    print(f"AO-CHILDES adult utterances: {len(texts)}", flush=True)
    rng = random.Random(args.seed)
    if args.n:
        texts = [texts[i] for i in sorted(rng.sample(range(len(texts)), min(args.n, len(texts))))]
    t0 = time.perf_counter()
    sents = backends.parse_spacy(texts)
    print(f"parsed {len(sents)} utterances with spaCy in {time.perf_counter() - t0:.1f} s", flush=True)
    for k, (t, s) in enumerate(zip(texts, sents)):
        s.meta = {"sent_id": str(k), "text": t}
    if args.parses:
        tmp = args.parses.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            write(fh, sents)
        tmp.replace(args.parses)
    return sents


# The clock (--clock): wall time, or this process's CPU time — on a shared machine the CPU time leaves
# out the time other jobs hold the cores, which wall time counts.
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
clock = CLOCKS["wall"]


def time_rules(sents, rules, ctx) -> float:
    t0 = clock()
    for s in sents:
        dpe.find_dpe(s, "posh", rules, ctx)
    return clock() - t0


def time_engine(sents, cons, engine: str) -> float:
    t0 = clock()
    for s in sents:
        for c in cons:
            match.match(c, "posh", s, engine=engine)
    return clock() - t0


def same_matches(sents, cons) -> dict:
    """Every construction and mode: the rules as the filter runs them (``find_dpe``: all constructions in
    one compiled plan) and the DependencyMatcher path give the same (pattern, tokens) or None."""
    n, hits, diffs = 0, 0, []
    names = [c.name for c in cons]
    for s in sents:
        for m in dpe.MODES:
            got = {x.phenomenon: (x.rule, x.tokens) for x in dpe.find_dpe(s, m, names)}
            for c in cons:
                ref = match.match(c, m, s, engine="spacy")
                ref = (f"{c.name}:{ref[0]}", ref[1]) if ref is not None else None
                n += 1
                hits += ref is not None
                if got.get(c.name) != ref:
                    diffs.append((s.sent_id, c.name, m))
    return {"comparisons": n, "matches": hits, "differences": len(diffs), "first_differences": diffs[:10]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data", help="the shared data folder")
    ap.add_argument("--n", type=int, default=20000, help="utterances in the seeded sample (0 = all)")
    ap.add_argument("--seed", type=int, default=44)
    ap.add_argument("--parses", type=Path, help="CoNLL-U of the sample's parses: read if it exists, else written")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, help="also write the results as JSON here")
    ap.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                    help="wall time, or this process's CPU time (steadier on a shared machine)")
    args = ap.parse_args()
    global clock
    clock = CLOCKS[args.clock]
    res = {"machine": platform.processor() or platform.machine(), "python": platform.python_version(),
           "load_average": [round(x, 1) for x in os.getloadavg()], "clock": args.clock}
    sents = sample_parses(args)
    added = library.use({"constructions": USER}, where="speed_constructions.USER")
    lib = [c for n, c in library.CONSTRUCTIONS.items() if n not in added]
    python = [n for n, ph in dpe.PHENOMENA.items() if ph.origin == "python"]
    twenty = [c.name for c in lib] + python + added
    twenty = twenty[:20]
    res["count"] = {"library": len([n for n in twenty if n in library.CONSTRUCTIONS and n not in added]),
                    "posh_python": [n for n in python if n in twenty], "user": [n for n in added if n in twenty],
                    "total": len(twenty), "names": twenty}
    res["sentences"] = len(sents)
    res["tokens_per_sentence"] = round(sum(len(s.tokens) for s in sents) / len(sents), 2)
    ctx = dpe.Context()
    names = tuple(c.name for c in lib)
    nineteen = tuple(n for n in twenty if n not in added)  # without the padding: the library and POSH's
    best = {k: float("inf") for k in ("two", "twenty", "twenty_warm", "nineteen", "library_compiled",
                                      "library_warm")}
    for _ in range(args.repeats):
        best["two"] = min(best["two"], time_rules(sents, TWO, ctx))
        library.clear_caches()
        best["nineteen"] = min(best["nineteen"], time_rules(sents, nineteen, ctx))
        # cold: the compiled plans and token-row caches start empty, as in one filter run over these sentences
        library.clear_caches()
        best["twenty"] = min(best["twenty"], time_rules(sents, twenty, ctx))
        best["twenty_warm"] = min(best["twenty_warm"], time_rules(sents, twenty, ctx))
        library.clear_caches()
        best["library_compiled"] = min(best["library_compiled"], time_rules(sents, names, ctx))
        best["library_warm"] = min(best["library_warm"], time_rules(sents, names, ctx))
    best["library_spacy"] = time_engine(sents, lib, "spacy")  # once: ~20x slower
    n = len(sents)
    res["seconds"] = {k: round(v, 3) for k, v in best.items()}
    res["sentences_per_s"] = {k: round(n / v, 1) for k, v in best.items()}
    res["ratio_twenty_vs_two"] = round(best["twenty"] / best["two"], 3)
    res["ratio_nineteen_vs_two"] = round(best["nineteen"] / best["two"], 3)
    res["ratio_twenty_warm_vs_two"] = round(best["twenty_warm"] / best["two"], 3)
    res["ratio_library_vs_two"] = round(best["library_compiled"] / best["two"], 3)
    res["speedup_compiled_vs_spacy"] = round(best["library_spacy"] / best["library_compiled"], 1)
    res["us_per_construction_sentence"] = {
        "compiled": round(best["library_compiled"] / n / len(lib) * 1e6, 2),
        "spacy": round(best["library_spacy"] / n / len(lib) * 1e6, 2)}
    res["same_matches"] = same_matches(sents, lib + [library.CONSTRUCTIONS[a] for a in added])
    print(json.dumps(res, indent=1))
    k = res["count"]
    print(f"\n{len(twenty)} constructions ({k['library']} library + {len(k['posh_python'])} POSH Python + "
          f"{len(k['user'])} user) vs "
          f"App. C's two on {n} parsed AO-CHILDES utterances: ratio {res['ratio_twenty_vs_two']}x; library "
          f"compiled {res['sentences_per_s']['library_compiled']} vs DependencyMatcher "
          f"{res['sentences_per_s']['library_spacy']} sentences/s ({res['speedup_compiled_vs_spacy']}x); "
          f"{res['same_matches']['differences']} differences in {res['same_matches']['comparisons']} comparisons")
    if args.out:
        args.out.write_text(json.dumps(res, indent=2, sort_keys=True) + "\n")
    return 1 if res["same_matches"]["differences"] else 0


if __name__ == "__main__":
    sys.exit(main())
