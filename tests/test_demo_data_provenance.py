"""The text this project ships as speech -- the Italian demo's child-directed utterances
(data/demo/it/cds.txt) and the CHAT test fixtures -- is written for povstim, not taken from CHILDES or
TalkBank: none of its utterances longer than a stock phrase occurs in the real transcripts and treebank
given beside the checkout (../shared/data, which is never shipped). The demo ships no CHAT transcript.

A stock phrase is short ("no !", "ciao mamma .") or said independently by several children: "i want more ."
is in two children's gold trees (Laura's and Lily's, ud_childes/gold_train). Text copied from a transcript
would occur in that one transcript only, so a longer shared utterance passes only when at least two real
transcripts of different files hold it; the dev split is not counted there, since it repeats gold_train's
texts."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from conftest import REPO

UTTERANCE = re.compile(r"^\*[A-Z0-9]+:\t(.*)$")
# "no !", "guarda !", "ciao mamma ." occur in any child-directed speech; longer lines would be copied text
STOCK = 12
DEMO_CDS = REPO / "data" / "demo" / "it" / "cds.txt"


def norm(text: str) -> str:
    """Words and punctuation marks, space-separated and lower-cased, so a CHAT line ("dov'è il gatto ?") and
    a cleaned sentence ("Dov'è il gatto?") compare equal; media time bullets (\\x15start_end\\x15) dropped."""
    return " ".join(re.findall(r"[\w']+|[^\w\s]", re.sub("\x15[^\x15]*\x15", " ", text))).lower()


def utterances(text: str) -> set[str]:
    return {norm(m.group(1)) for line in text.splitlines() if (m := UTTERANCE.match(line))}


def tracked(pattern: str) -> list:
    files = subprocess.run(["git", "ls-files", pattern], cwd=REPO, capture_output=True, text=True).stdout.split()
    return [REPO / f for f in files]


# the hand-written CHAT fixtures: the sources' reader tests, and the children's-ages tests (a folder per child)
FIXTURES = (REPO / "tests" / "fixtures" / "sources", REPO / "tests" / "fixtures" / "children" / "chat")


def test_no_chat_transcript_is_shipped_outside_the_test_fixtures():
    assert all(any(p.parent == f or f in p.parents for f in FIXTURES[1:]) or p.parent == FIXTURES[0]
               for p in tracked("*.cha"))


def test_shipped_speech_shares_no_utterance_with_the_real_data(shared_data):
    shipped = {p: utterances(p.read_text()) for p in tracked("*.cha")}
    shipped[DEMO_CDS] = {norm(line) for line in DEMO_CDS.read_text(encoding="utf-8").splitlines()}
    assert len(shipped[DEMO_CDS]) > 400
    real: set[str] = set()
    said_in: dict[str, set[Path]] = {}  # utterance -> the real transcripts that hold it, the dev split aside
    for path in shared_data.rglob("*.cha"):
        found = utterances(path.read_text(errors="replace"))
        real |= found
        for u in found:
            said_in.setdefault(u, set()).add(path)
    for path in shared_data.rglob("*.conllu"):
        found = {norm(line[len("# text = "):]) for line in path.read_text(errors="replace").splitlines()
                 if line.startswith("# text = ")}
        real |= found
        if "dev" not in path.name:
            for u in found:
                said_in.setdefault(u, set()).add(path)
    assert len(real) > 10_000  # the real transcripts were read
    assert len(said_in[norm("I want more.")]) >= 2  # a stock phrase of several children
    assert norm("dov'è il gatto ?") == norm("Dov'è il gatto?")  # CHAT and cleaned text compare alike
    for path, lines in shipped.items():
        ours = {u for u in lines if len(u) > STOCK}
        assert ours, path
        shared = sorted(u for u in ours & real if len(said_in.get(u, ())) < 2)
        assert not shared, f"{path.relative_to(REPO)} shares utterances with {shared_data}: {shared[:5]}"
