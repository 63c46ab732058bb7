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
def test_posh_config_plans_the_full_paper_dag(tmp_path):
    r = subprocess.run(
        SNAKEMAKE + ["-n", "-s", str(REPO / "Snakefile"), "-d", str(tmp_path), "results/figures",
                     "--configfile", str(REPO / "configs" / "posh.yaml")],
        capture_output=True, text=True, cwd=REPO,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    counts = _job_counts(r.stdout + r.stderr)
    # 7 downloads (the BNC is local), 8 cleans (7 BABY sources + Wikipedia),
    # 4 sizes x 2 corpora, 33 models = gpt2-mini 3 conditions x 3 seeds at 10M
    # + gpt2-small (baby-f, baby at 30/50M; baby-base at 100M; wiki at 30/50/100M) x 3 seeds.
    assert counts["download"] == 7 and counts["clean"] == 8 and counts["assemble"] == 8
    assert counts["train"] == 33 and counts["score"] == 33 and counts["figures"] == 1
    assert "resources/downloads/childes/manifest.json" in r.stdout
    assert "gpt2-mini/baby-f/10M/seed3" in r.stdout and "gpt2-small/baby-base/100M/seed1" in r.stdout
    assert "gpt2-mini/wiki/30M" not in r.stdout and "baby-f/100M" not in r.stdout


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
