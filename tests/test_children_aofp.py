"""Children's age of first production: hand counts on a small CHAT + childes-db fixture, the
notes for a target child without an age and for an export without the child's speech, the real data when
present."""

from __future__ import annotations

from pathlib import Path

import pytest
from povstim.analysis.timing import children
from povstim.io import PovstimError

FIX = Path(__file__).parent / "fixtures" / "children"
EVE_1_06 = 365.25 + 6 * 30.4375          # 1;06.00 in days (sources/chat.age_in_days)
EVE_1_09 = 365.25 + 9 * 30.4375 + 15     # 1;09.15


def test_hand_counts():
    table, notes = children.first_productions([FIX / "chat", FIX / "csv"])
    t = table.set_index("word")
    # Eve: 'doggie' x2 at 1;06 ('xxx doggie' is untranscribed: dropped), x1 at 1;09; Tom (CSV): x1 at 700.5 days
    assert t.loc["doggie", "age_first_days"] == pytest.approx(EVE_1_06)
    assert t.loc["doggie", "n_tokens"] == 4 and t.loc["doggie", "n_children"] == 2
    assert t.loc["doggie", "age_median_days"] == pytest.approx((EVE_1_06 + 700.5) / 2)
    assert t.loc["doggie", "age_first"] == "1;06"
    assert t.loc["doggie", "first_at"].endswith("eve01.cha:8")
    # '<more juice> [/] more juice': the retraced copy does not count; Tom's 'more juice' has no age
    assert t.loc["juice", "n_tokens"] == 2 and t.loc["juice", "n_children"] == 2
    assert t.loc["juice", "age_median_days"] == pytest.approx((EVE_1_06 + 640) / 2)
    assert t.loc["more", "n_tokens"] == 2 and t.loc["more", "n_children"] == 1
    assert t.loc["where", "age_first_days"] == pytest.approx(EVE_1_09)
    assert t.loc["please", "age_first_days"] == 640
    assert sorted(t.index) == ["doggie", "go", "i", "juice", "more", "please", "want", "where"]
    assert len(notes) == 3
    assert any("noage.cha: the target child CHI has no age in @ID" in n and "1 utterance(s) skipped" in n
               for n in notes)
    assert any("ao_style.csv: no Target_Child utterances" in n for n in notes)
    assert any("kids.csv: 1 of 3 Target_Child utterance(s) without target_child_age: skipped" in n for n in notes)


def test_word_list_and_words_never_said():
    table, notes = children.first_productions([FIX / "chat"], words=["Doggie", "ball"])
    assert table["word"].tolist() == ["doggie"]
    assert "1 word(s) of the list never produced by a target child: ball" in notes


def test_export_without_needed_columns_is_an_error(tmp_path):
    bad = tmp_path / "x.csv"
    bad.write_text("id,speaker_role,gloss\n1,Target_Child,hi\n")
    with pytest.raises(PovstimError, match="x.csv: childes-db export without column.s. target_child_age"):
        children.first_productions([bad])


def test_real_aochildes_exports_hold_no_child_speech(shared_data):
    csvs = sorted((shared_data / "aochildes" / "original_transcripts_csv").glob("*.csv"))[:2]
    if not csvs:
        pytest.skip("no AO-CHILDES exports")
    table, notes = children.first_productions(csvs)
    assert table.empty and all("no Target_Child utterances" in n for n in notes)


def test_real_chat_ages(shared_data):
    eve = shared_data / "chat" / "pylangacq" / "eve.cha"
    if not eve.exists():
        pytest.skip("no eve.cha")
    table, _ = children.first_productions([eve])
    assert len(table) > 50 and (table["age_first_months"].round() == 18).all()  # Eve 1;06.00
