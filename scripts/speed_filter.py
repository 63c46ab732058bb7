#!/usr/bin/env python
"""Benchmark the DPE filter on real CHILDES text and the synthetic gold corpus.

Reports sentences/s for the surface prefilter, the spaCy parser, stanza (when
--stanza-model-dir points at downloaded models; on a GPU when one is free) and
each mode's rules, how many sentences the prefilter spared from parsing, and how
many sentences each mode (posh, strict, conservative) removes, per phenomenon
and per rule, with the removal rate over all utterances.

    .venv/bin/python scripts/speed_filter.py [--spacy-n 0 = all] [--stanza-model-dir DIR] [--out bench.json]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow"))

from povstim import dpe  # noqa: E402
from povstim.filter.settings import filter_settings  # noqa: E402
from povstim.parse import backends  # noqa: E402
from povstim.parse.conllu import read_file  # noqa: E402

RULES = ("question_formation", "binding")
SETTINGS = {m: filter_settings({"mode": m, "rules": list(RULES)}) for m in dpe.MODES}


def childes_adult_utterances(data: Path) -> list[str]:
    """Adult utterances of the AO-CHILDES CSVs in orthographic form (capital, final ? or .)."""
    out = []
    for path in sorted((data / "aochildes" / "original_transcripts_csv").glob("*.csv")):
        with open(path, newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                if row["speaker_role"] in ("Target_Child", "Child"):
                    continue
                gloss = " ".join(row["gloss"].split())
                if not gloss or any(x in gloss for x in ("xxx", "yyy", "www")):
                    continue
                out.append(gloss[0].upper() + gloss[1:] + ("?" if "question" in row["type"] else "."))
    return out


def rate(n: int, seconds: float) -> float:
    return round(n / seconds, 1) if seconds > 0 else float("inf")


def bench_prefilter(texts: list[str]) -> tuple[dict, list[str]]:
    t0, c0 = time.perf_counter(), time.process_time()
    keep = [t for t in texts if dpe.needs_parse(t, RULES)]
    dt, dc = time.perf_counter() - t0, time.process_time() - c0
    return {"n": len(texts), "n_parse": len(keep), "n_spared": len(texts) - len(keep),
            "spared_fraction": round(1 - len(keep) / len(texts), 4), "seconds": round(dt, 2),
            "sentences_per_s": rate(len(texts), dt), "sentences_per_cpu_s": rate(len(texts), dc)}, keep


def apply_modes(sents, n_total: int) -> dict:
    """Per mode: sentences removed (per phenomenon, per rule), the removal rate over ``n_total`` utterances,
    and the rules' speed."""
    out = {}
    for mode, st in SETTINGS.items():
        t0 = time.perf_counter()
        per_phen, per_rule, removed = Counter(), Counter(), 0
        for s in sents:
            ms = st.find(s)
            removed += bool(ms)
            for m in ms:
                per_phen[m.phenomenon] += 1
                per_rule[m.rule] += 1
        dt = time.perf_counter() - t0
        out[mode] = {"removed": removed, "removed_rate": round(removed / n_total, 6) if n_total else None,
                     "per_phenomenon": dict(per_phen), "per_rule": dict(sorted(per_rule.items())),
                     "rules_seconds": round(dt, 3), "rules_sentences_per_s": rate(len(sents), dt)}
    return out


def bench_parser(name: str, texts: list[str], parse, n_total: int) -> dict:
    t0, c0 = time.perf_counter(), time.process_time()
    sents = parse(texts)
    dt, dc = time.perf_counter() - t0, time.process_time() - c0
    for t, s in zip(texts, sents):
        s.meta["text"] = t
    return {"parser": name, "n": len(texts), "seconds": round(dt, 2), "sentences_per_s": rate(len(texts), dt),
            "sentences_per_cpu_s": rate(len(texts), dc), "modes": apply_modes(sents, n_total)}


def bench_gold(n: int) -> dict:
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        subprocess.run([sys.executable, "-m", "povstim", "synth", "--register", "child", "--sentences", str(n),
                        "--seed", "7", "--dpe-rate", '{"question_formation": 0.01, "binding": 0.005}',
                        "--out-text", d / "c.txt", "--out-conllu", d / "c.conllu"], check=True, capture_output=True,
                       env={**os.environ, "PYTHONPATH": str(REPO / "workflow")})
        sents = read_file(d / "c.conllu")
    out = {"n": len(sents), "modes": apply_modes(sents, len(sents))}
    t0 = time.perf_counter()
    spared = sum(not dpe.needs_parse(s.text, RULES) for s in sents)
    out["prefilter"] = {"spared_fraction": round(spared / len(sents), 4),
                        "sentences_per_s": rate(len(sents), time.perf_counter() - t0)}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data", help="the shared data folder")
    ap.add_argument("--spacy-n", type=int, default=0,
                    help="prefilter-passed sentences to parse with spaCy (0 = all of them)")
    ap.add_argument("--stanza-model-dir", help="stanza models folder (benchmarks stanza when given)")
    ap.add_argument("--stanza-n", type=int, default=3000)
    ap.add_argument("--device", default="auto", help="stanza device")
    ap.add_argument("--gold-n", type=int, default=20000, help="synthetic sentences for the gold-parse rules benchmark")
    ap.add_argument("--out", type=Path, help="also write the results as JSON here")
    args = ap.parse_args()

    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover
        pass
    res = {"machine": platform.processor() or platform.machine(), "python": platform.python_version(),
           "load_average": [round(x, 1) for x in os.getloadavg()]}
    texts = childes_adult_utterances(args.data)
    res["childes_prefilter"], keep = bench_prefilter(texts)
    print("prefilter on CHILDES:", res["childes_prefilter"], flush=True)
    sample = keep[: args.spacy_n] if args.spacy_n else keep
    # every utterance the sample stands for: the sampled ones plus the ones the prefilter spared
    n_total = len(texts) if not args.spacy_n else round(len(sample) / max(1, len(keep)) * len(texts))
    nlp = backends.load_spacy()
    res["spacy"] = bench_parser("spacy en_core_web_sm 3.8.0", sample, lambda t: backends.parse_spacy(t, nlp=nlp),
                                n_total)
    res["spacy"]["utterances_represented"] = n_total
    if not args.spacy_n:  # every utterance: prefilter + parse + the conservative rules
        total = (res["childes_prefilter"]["seconds"] + res["spacy"]["seconds"]
                 + res["spacy"]["modes"]["conservative"]["rules_seconds"])
        res["spacy"]["conservative_end_to_end_utterances_per_s"] = rate(len(texts), total)
    print("spaCy:", json.dumps(res["spacy"], indent=1), flush=True)
    if args.stanza_model_dir:
        snlp = backends.load_stanza(args.stanza_model_dir, args.device)
        stanza_sample = keep[: args.stanza_n]
        n_st = round(len(stanza_sample) / max(1, len(keep)) * len(texts))
        res["stanza"] = bench_parser("stanza", stanza_sample, lambda t: backends.parse_stanza(t, nlp=snlp), n_st)
        res["stanza"]["device"] = str(getattr(snlp, "device", args.device))
        print("stanza:", res["stanza"], flush=True)
    res["gold_synthetic"] = bench_gold(args.gold_n)
    print("gold synthetic:", json.dumps(res["gold_synthetic"], indent=1), flush=True)
    if args.out:
        args.out.write_text(json.dumps(res, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
