"""The CHAT transcripts this project ships (the Italian demo's cds.cha and the test fixtures) are text written
for povstim, not CHILDES/TalkBank transcripts: none of their utterances longer than a stock phrase occurs in
the real transcripts and treebank given beside the checkout (../shared/data, which is never shipped)."""

from __future__ import annotations

import re
import subprocess

import pytest

from conftest import REPO

UTTERANCE = re.compile(r"^\*[A-Z0-9]+:\t(.*)$")
# "no !", "guarda !", "ciao mamma ." occur in any child-directed speech; longer lines would be copied text
STOCK = 12


def norm(text: str) -> str:
    """Words and punctuation only: media time bullets (\\x15start_end\\x15) dropped, spaces collapsed."""
    return " ".join(re.sub("\x15[^\x15]*\x15", " ", text).split()).lower()


def utterances(text: str) -> set[str]:
    return {norm(m.group(1)) for line in text.splitlines() if (m := UTTERANCE.match(line))}


def shipped_transcripts() -> list:
    files = subprocess.run(["git", "ls-files", "*.cha"], cwd=REPO, capture_output=True, text=True).stdout.split()
    return [REPO / f for f in files]


def test_shipped_transcripts_share_no_utterance_with_the_real_data(shared_data):
    shipped = shipped_transcripts()
    assert any(p.name == "cds.cha" for p in shipped)  # the Italian demo's transcript is among them
    real: set[str] = set()
    for path in shared_data.rglob("*.cha"):
        real |= utterances(path.read_text(errors="replace"))
    for path in shared_data.rglob("*.conllu"):
        real |= {norm(line[len("# text = "):]) for line in path.read_text(errors="replace").splitlines()
                 if line.startswith("# text = ")}
    assert len(real) > 10_000  # the real transcripts were read
    for path in shipped:
        ours = {u for u in utterances(path.read_text()) if len(u) > STOCK}
        assert ours, path
        shared = sorted(ours & real)
        assert not shared, f"{path.relative_to(REPO)} shares utterances with {shared_data}: {shared[:5]}"
