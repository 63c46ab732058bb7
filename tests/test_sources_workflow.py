"""The download/clean rules inside Snakemake, and the paper-scale DAG of configs/posh.yaml."""

from __future__ import annotations

import functools
import http.server
import json
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
FIXTURES = Path(__file__).parent / "fixtures" / "sources"


def _job_counts(output: str) -> dict[str, int]:
    table = output.split("Job stats:", 1)[1]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.M)}


@pytest.mark.slow
def _dry_run(tmp_path, config: str) -> subprocess.CompletedProcess:
    r = subprocess.run(
        SNAKEMAKE + ["-n", "-p", "-s", str(REPO / "Snakefile"), "-d", str(tmp_path), "results/figures",
                     "--configfile", str(REPO / "configs" / config)],
        capture_output=True, text=True, cwd=REPO,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return r


def test_posh_config_plans_the_full_paper_dag(tmp_path):
    r = _dry_run(tmp_path, "posh.yaml")
    out = r.stdout + r.stderr
    counts = _job_counts(out)
    # 8 downloads (7 Table 2 sources without the local BNC, + Wikipedia, + the BabyLM 2025 corpus), 9 cleans,
    # 4 sizes x 2 corpora; 51 models = gpt2-mini 3 conditions x 3 seeds at 10M
    # + gpt2-small (baby-f, baby at 30/50M; baby-base at 100M; wiki at 30/50/100M) x 3 seeds
    # + the Table 5 pilot: gpt2-xs and gpt2-xxs x 3 conditions x 3 seeds at 10M.
    assert counts["download"] == 8 and counts["clean"] == 9 and counts["assemble"] == 8
    assert counts["train"] == 51 and counts["figures"] == 1
    # every suite the paper reports: POSH-BENCH, BLiMP, Zorro, SCaMP plausible and implausible
    assert counts["benchmark"] == 5 and counts["score"] == 51 * 5
    assert "resources/downloads/childes/manifest.json" in out and "resources/downloads/babylm_2025/manifest.json" in out
    assert "gpt2-mini/baby-f/10M/seed3" in out and "gpt2-small/baby-base/100M/seed1" in out
    assert "gpt2-xxs/wiki/10M/seed2" in out and "gpt2-xs/baby/10M/seed1" in out
    assert "gpt2-mini/wiki/30M" not in out and "baby-f/100M" not in out and "gpt2-xs/baby/30M" not in out
    # the real-corpus vocabulary: POSH-BENCH words confirmed in the largest parsed BABY corpus
    assert counts["word_stats"] == 1 and "--word-stats results/posh/parse/baby/50M/words.tsv" in out
    assert '"vocabulary": "corpus"' in out
    # Table 10 phenomena only
    assert '"paradigms": ["island-effects-adjunct_island", "binding-principle_a"]' in out
    # the 100M BABY takes BNC, Gutenberg, OpenSubtitles, Simple Wikipedia, Switchboard from BabyLM 2025
    cfg = yaml.safe_load((REPO / "configs" / "posh.yaml").read_text())
    at_100m = {s: sh["100M"] for s, sh in cfg["corpora"]["baby"]["mixture"].items() if sh["100M"]}
    assert at_100m == {"childes": 9, "tinystories": 22, "babylm_2025": 69}


def test_babyberta_config_plans_the_papers_comparisons(tmp_path):
    r = _dry_run(tmp_path, "babyberta.yaml")
    out = r.stdout + r.stderr
    counts = _job_counts(out)
    # AO-CHILDES vs AO-Newsela vs Wikipedia at 5M (the licensed Newsela is a local source: no download)
    assert counts["download"] == 2 and counts["clean"] == 3 and counts["condition"] == 3
    # 10 replications: babyberta on 3 corpora, unmasking-yes and age-ordered variants on AO-CHILDES
    assert counts["train"] == 10 * 3 + 10 + 10
    for model in ("babyberta/aonewsela/5M/seed10", "babyberta-unmask/aochildes/5M/seed1",
                  "babyberta-ordered/aochildes/5M/seed7"):
        assert model in out, model
    assert "babyberta-unmask/wikipedia" not in out and "babyberta-ordered/aonewsela" not in out
    # holistic and MLM (PLL) scoring of every model (Table 2), the word-frequency baseline per corpus (Figure 2)
    assert counts["score"] == 50 * 2 and counts["score_baseline"] == 3
    pll = [line for line in out.splitlines() if "povstim score-group" in line and "zorro_mlm" in line]
    holistic = [line for line in out.splitlines() if "povstim score-group" in line and "/zorro.parquet" in line]
    assert len(pll) == 50 and all('"mlm": "pll"' in line and '"checkpoints": false' in line for line in pll)
    assert len(holistic) == 50 and all('"mlm": "holistic"' in line and '"checkpoints": true' in line
                                       for line in holistic)
    assert "--baseline unigram" in out and "scores/unigram/aonewsela/5M/seed0/zorro.parquet" in out
    # training variants: unmasking yes (0.1) and ordered training, one key each
    train = {m: line for line in out.splitlines() if "povstim train" in line
             for m in ("babyberta-unmask", "babyberta-ordered") if f"models/{m}/" in line}
    assert '"leave_unmasked_prob": 0.1' in train["babyberta-unmask"]
    assert '"ordered": true' in train["babyberta-ordered"]


@pytest.fixture()
def file_server():
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(FIXTURES))
    handler.log_message = lambda *a: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.slow
def test_download_and_clean_rules_run(file_server, tmp_path):
    config = yaml.safe_load((REPO / "tests" / "configs" / "tiny.yaml").read_text())
    config["sources"]["gut"] = {"kind": "text_url", "format": "gutenberg", "url": f"{file_server}/gutenberg.txt",
                                "license": "public domain"}
    config["sources"]["kids"] = {"kind": "local", "format": "chat", "path": "tests/fixtures/sources/mini.cha"}
    cfg = tmp_path / "config.yaml"
    cfg.write_text(yaml.safe_dump(config))
    work = tmp_path / "work"
    r = subprocess.run(
        SNAKEMAKE + ["-s", str(REPO / "Snakefile"), "-d", str(work), "--cores", "1",
                     "results/tiny/corpus/clean/gut.txt", "results/tiny/corpus/clean/kids.txt", "--configfile", str(cfg)],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    manifest = json.loads((work / "resources/downloads/gut/manifest.json").read_text())
    assert manifest["files"][0]["name"] == "gutenberg.txt" and manifest["license"] == "public domain"
    assert (work / "results/tiny/corpus/clean/gut.txt").read_text().splitlines()[0] == "Mr. Brown walked to the old mill."
    # The local path is relative to the repository, not to the working directory.
    kids = (work / "results/tiny/corpus/clean/kids.txt").read_text().splitlines()
    assert kids[0] == "Do you want another cookie?"
    stats = json.loads((work / "results/tiny/corpus/clean/kids.stats.json").read_text())
    assert stats["malformed_lines"] == 3
    assert (work / "logs/tiny/clean/kids.log").exists() and (work / "benchmarks/tiny/download/gut.tsv").exists()
