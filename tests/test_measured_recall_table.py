"""filter/measured_recall.yaml's spaCy rows are a measurement, not a typed copy: regenerated from gold_train by
scripts/measured_recall_table.py (in its own process: it registers FiCT's constructions) and compared row by row."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import measured_recall_table as mrt  # noqa: E402


@pytest.mark.slow
def test_the_tables_spacy_rows_are_what_gold_train_gives(shared_data):
    if not (shared_data / "ud_childes" / "gold_train").is_dir():
        pytest.skip("gold_train is absent")
    if shared_data.resolve() != mrt.SHARED.resolve():
        pytest.skip(f"the script reads {mrt.SHARED}, the tests {shared_data}")
    got = subprocess.run([sys.executable, str(ROOT / "scripts" / "measured_recall_table.py"), "--check"],
                         capture_output=True, text=True, timeout=900)
    assert got.returncode == 0, got.stdout + got.stderr[-2000:]
    assert "the table's spacy rows are what the measurement gives" in got.stdout


def test_sample_labels_follow_the_one_list_of_definitions_written_on_gold_train():
    table = yaml.safe_load(mrt.TABLE.read_text(encoding="utf-8"))
    for mode in mrt.MODES:
        for phen, row in table["spacy"][mode].items():
            if (mode, phen) not in mrt.KEPT:
                assert row["sample"] == ("in" if phen in mrt.IN_SAMPLE else "out"), (mode, phen)
    assert "also occur in the dev split" in table["spacy"]["provenance"]
