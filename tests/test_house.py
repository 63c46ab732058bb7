"""House rules that a reader of the code relies on: no code nothing calls, and comments that say why.

* ``vulture workflow/povstim vulture_whitelist.py --min-confidence 60`` prints nothing: every function,
  variable or attribute vulture finds unused is either deleted or named in ``vulture_whitelist.py`` with the
  reason it is kept (the Snakefile, rules, scripts, tests or a library read it).
* No file under workflow/, rules/, scripts/, tests/ or the Snakefile cites an issue number: the history
  belongs to git, a comment says why.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ISSUE_REF = re.compile(r"issue \d+", re.IGNORECASE)
SEARCHED = ["workflow", "rules", "scripts", "tests", "Snakefile"]


def test_vulture_finds_no_unused_code():
    pytest.importorskip("vulture")
    run = subprocess.run([sys.executable, "-m", "vulture", "workflow/povstim", "vulture_whitelist.py",
                          "--min-confidence", "60"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert run.stdout == "" and run.returncode == 0, (
        "code nothing calls: delete it, or name it in vulture_whitelist.py with the reason it is kept\n"
        + run.stdout + run.stderr)


def _files():
    for top in SEARCHED:
        path = REPO / top
        if path.is_file():
            yield path
            continue
        for root, dirs, files in os.walk(path):
            # the project's own files: not caches, hidden folders or the egg-info pip writes beside the package
            dirs[:] = [d for d in dirs if d != "__pycache__" and not d.startswith(".") and not d.endswith(".egg-info")]
            for name in files:
                yield Path(root) / name


def test_no_comment_cites_an_issue_number():
    hits = []
    for path in _files():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary files (models, parquet, pickles)
        for n, line in enumerate(text.splitlines(), 1):
            if ISSUE_REF.search(line):
                hits.append(f"{path.relative_to(REPO)}:{n}: {line.strip()[:100]}")
    assert not hits, "say why, not which issue:\n" + "\n".join(hits)


def test_the_issue_pattern_catches_what_it_should():
    # the check above is only as good as its pattern: the forms the references took (numbers in braces, so
    # that this file does not hold what it forbids)
    for ref in (f"(issue {53})", f"Issue {54}: an empty file", f"[ISSUE {16}]", f"issue {46} §3"):
        assert ISSUE_REF.search(ref), ref
    assert not ISSUE_REF.search("the issue's researcher") and not ISSUE_REF.search("issues")
