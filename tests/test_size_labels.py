"""Size labels are nominal; the report states each condition's actual words beside them and says
plainly when a condition differs from its label by more than guardrails.size_label."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from povstim.analysis.guardrails import checks as G
from povstim.analysis.tables.conditions_page import size_gaps, size_sentence, write_page
from povstim.cli import main
from povstim.settings import build

SETTINGS = build(G.GuardrailSettings, "guardrails", {})  # the schema's defaults (size_label 0.02)


def _condition(root: Path, condition: str, size: str, stats: dict) -> Path:
    d = root / condition / size
    d.mkdir(parents=True)
    (d / "condition.json").write_text(json.dumps(stats))
    return d / "condition.json"


@pytest.fixture
def planted(tmp_path):
    """BABY-F "290k" holds 273,000 words (the filter took 17,000 out: 273/290 - 1 = -5.86%, planted beyond 2%);
    BABY "290k" 289,130 (-0.3%); WIKI "50k" 50,000 exactly."""
    paths = [_condition(tmp_path, "baby-f", "290k", {"n_words": 273_000, "n_sentences": 30_500}),
             _condition(tmp_path, "baby", "290k", {"n_words": 289_130, "n_sentences": 30_500}),
             _condition(tmp_path, "wiki", "50k", {"n_words": 50_000, "n_sentences": 2_100})]
    return paths


def test_size_gaps_flag_only_the_planted_mismatch(planted):
    rows = size_gaps([G.read_condition(p) for p in planted], 0.02)
    got = {(r["condition"], r["size"]): (r["label_words"], r["words"], round(r["gap"], 5), r["off"]) for r in rows}
    assert got == {("baby", "290k"): (290_000, 289_130, -0.003, False),
                   ("baby-f", "290k"): (290_000, 273_000, -0.05862, True),
                   ("wiki", "50k"): (50_000, 50_000, 0.0, False)}
    assert not any(r["off"] for r in size_gaps([G.read_condition(p) for p in planted], 0.06))


def test_guardrail_fires_on_the_planted_mismatch(planted):
    conds = [G.read_condition(p) for p in planted]
    (f,) = G.check_size_label(conds, SETTINGS)
    assert f.scope == "baby-f/290k"
    assert "holds 273,000 words (30,500 sentences), -5.9% against the label's 290,000 (beyond 2%)" in f.detail
    assert G.check_size_label(conds, build(G.GuardrailSettings, "guardrails", {"size_label": 0.1})) == []
    # a hand-made condition.json without counts has no gap (the reinsert tests write such files)
    bare = _condition(planted[0].parents[2], "baby", "10k", {"reinsert_config": {}})
    assert G.check_size_label([G.read_condition(bare)], SETTINGS) == []


def test_conditions_page_and_caption_state_actual_words(planted, tmp_path):
    conds = [G.read_condition(p) for p in planted]
    write_page(conds, tmp_path / "c.html", 0.02)
    page = (tmp_path / "c.html").read_text()
    assert "<td>273,000</td><td class='short'>-5.9%</td>" in page  # flagged cell beside the words
    assert "<td>289,130</td><td>-0.3%</td>" in page
    assert "SIZE LABELS: baby-f 290k holds 273,000 words, -5.9% against its label&#x27;s 290,000" in page
    assert "wiki 50k holds" not in page
    text = size_sentence(conds, 0.02)
    assert "baby-f 290k = 273,000 words, 30,500 sentences (-5.9%)" in text
    assert "wiki 50k = 50,000 words, 2,100 sentences (+0.0%)" in text
    assert "baby-f 290k (-5.9%) differs from the label by more than 2%" in text
    assert "differ" not in size_sentence(conds, 0.1)


def test_analyze_captions_tables_3_and_8_with_actual_words(tmp_path):
    from helpers.simulate import simulate_scores, write_score_files

    paths = write_score_files(simulate_scores(items=5, sizes=("50k",), seeds=(1,), steps=(100,)), tmp_path)
    stats = [_condition(tmp_path / "corpus", "baby-f", "50k", {"n_words": 46_000, "n_sentences": 5_000}),
             tmp_path / "corpus" / "wiki" / "50k" / "condition.json"]  # missing: skipped
    out = tmp_path / "analysis"
    assert main(["analyze", "--scores", *map(str, paths), "--out-dir", str(out), "--no-model",
                 "--size-label", "0.02", "--condition-stats", *map(str, stats)]) == 0
    for kind in ("table3", "table8"):
        html = (out / "tables" / f"{kind}_posh.html").read_text()
        # 46,000 / 50,000 - 1 = -8%
        assert "baby-f 50k = 46,000 words, 5,000 sentences (-8.0%)" in html
        assert "baby-f 50k (-8.0%) differs from the label by more than 2%" in html
        assert "46,000 words" in (out / "tables" / f"{kind}_posh.md").read_text()
    with pytest.raises(SystemExit):  # argparse: --size-label needs a number
        main(["analyze", "--scores", *map(str, paths), "--out-dir", str(out), "--size-label", "x"])
