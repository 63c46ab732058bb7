"""training.checkpoint_words: checkpoints by words seen, named by their budget (chck_1M), words
seen in the train summary and in the item scores; nothing changes without the option."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from povstim.io import PovstimError
from povstim.settings import section
from povstim.train import budgets, data
from povstim.train.params import check_training
from test_train_checkpoints import GPT2, TRAINING, corpus  # noqa: F401 (fixture)


# ----------------------------------------------------------------- budgets
def test_labels_follow_babylm():
    assert budgets.label(1_000_000) == "1M"
    assert budgets.label(10_000_000) == "10M"
    assert budgets.label(140_000) == "140k"
    assert budgets.label(1_500_000) == "1.5M"
    assert budgets.label(500) == "500"


def test_explicit_and_log_spaced_budgets():
    assert budgets.budgets(["1M", "10M"]) == [("1M", 1_000_000), ("10M", 10_000_000)]
    assert budgets.budgets([500, 2000]) == [("500", 500), ("2k", 2000)]
    spaced = budgets.budgets({"from": "10k", "to": "1M", "n": 8})
    assert [w for _, w in spaced] == [10000, 19000, 37000, 72000, 140000, 270000, 520000, 1000000]
    assert budgets.budgets(None) == []


@pytest.mark.parametrize("spec, needle", [
    (["10M", "1M"], "training.checkpoint_words: budgets must increase"),
    (["1M", "lots"], "training.checkpoint_words[1]: cannot read 'lots'"),
    ({"from": "1M", "to": "10k", "n": 4}, "'to' (10k) must be larger than 'from' (1M)"),
    ({"from": "100", "to": "110", "n": 30}, "repeat once rounded"),
    ({"from": "1k", "to": "1M"}, "needs from, to and n (missing n)"),
])
def test_bad_budgets_name_the_key(spec, needle):
    with pytest.raises(PovstimError, match=None) as err:
        check_training({"checkpoint_words": spec}, "training")
    assert needle in str(err.value)


def test_schema_default_and_types():
    assert section("training", {})["checkpoint_words"] is None
    with pytest.raises(PovstimError, match="checkpoint_words"):
        section("training", {"checkpoint_words": {"from": "1k", "to": "1M", "n": 1}})
    with pytest.raises(PovstimError, match="checkpoint_words"):
        section("training", {"checkpoint_words": "1M"})


# ------------------------------------------------------------ words -> steps
def _dataset(sentence_tokens, context, packed):
    lengths = np.asarray(sentence_tokens)
    enc = data.Encoded(tokens=np.arange(lengths.sum(), dtype=np.int32) % 7 + 4, lengths=lengths)
    return data.Dataset.build(enc, context, packed, 1, 1, "x"), lengths


def test_packed_words_count_where_a_sentence_ends():
    # sentences of 5, 6, 7, 4 tokens in 8-token blocks: ends at 4, 10, 17, 21 -> blocks 0, 1, 2, (2: 21 // 8 = 2)
    ds, lengths = _dataset([5, 6, 7, 4], 8, True)
    assert ds.blocks.shape == (2, 8)  # 22 tokens -> 2 blocks; sentences ending at 17 and 21 are in the tail
    assert data.item_words(ds, np.array([3, 4, 5, 2]), lengths).tolist() == [3, 4]


def test_unpacked_words_are_the_kept_sentences():
    ds, lengths = _dataset([5, 12, 7], 8, False)  # the 12-token sentence is left out
    assert data.item_words(ds, np.array([3, 9, 5]), lengths).tolist() == [3, 5]


def test_words_by_step_is_the_schedule_summed():
    words = np.arange(1, 11)  # 10 items
    sched = data.Schedule(10, 3, seed=4, ordered=False)
    seen = data.words_by_step(sched, words, 1, 9)
    expect = [0]
    for s in range(9):
        expect.append(expect[-1] + int(words[sched.batch(s)].sum()))
    assert seen.tolist() == expect
    assert seen[4] == 55 and seen[8] == 110  # 4 batches (the last short) = an epoch = every word once


# --------------------------------------------------------------- a real run
@pytest.fixture(scope="module")
def word_run(corpus, tmp_path_factory):  # noqa: F811
    from povstim.train.loop import Trainer
    from povstim.train.params import resolve

    out = tmp_path_factory.mktemp("words") / "m"
    a, t = resolve(GPT2, {**TRAINING, "checkpoint_words": ["500", "1k", "2k", "1M"]})
    Trainer(arch=a, training=t, seed=1, out_dir=str(out), threads=1, progress=False, **corpus).run()
    return out


def test_word_checkpoints_are_saved_and_named(word_run):
    ck = word_run / "checkpoints"
    names = sorted(p.name for p in ck.iterdir() if p.name.startswith("chck_"))
    assert names == ["chck_1k", "chck_2k", "chck_500"]
    summary = json.loads((word_run / "train_summary.json").read_text())
    assert summary["checkpoint_words_unreached"] == ["1M"]
    for name in names:
        manifest = json.loads((ck / name / "manifest.json").read_text())
        budget = summary["checkpoint_words"][name[5:]]
        assert manifest["step"] == budget["step"] and manifest["words"] == budget["words"]
        assert manifest["words"] >= budget["budget"]
        assert (ck / name / "model.safetensors").exists() and not (ck / name / "trainer_state.pt").exists()
    steps = [summary["checkpoint_words"][n]["step"] for n in ("500", "1k", "2k")]
    assert steps == sorted(steps) and summary["words_seen"] >= summary["best_words"] > 0


def test_without_the_option_nothing_changes(corpus, tmp_path):  # noqa: F811
    """No chck_ folder, and train_summary.json has no word fields."""
    from povstim.train.loop import Trainer
    from povstim.train.params import resolve

    a, t = resolve(GPT2, TRAINING)
    out = tmp_path / "m"
    Trainer(arch=a, training=t, seed=1, out_dir=str(out), threads=1, progress=False, **corpus).run()
    assert not [p for p in (out / "checkpoints").iterdir() if p.name.startswith("chck_")]
    summary = json.loads((out / "train_summary.json").read_text())
    assert not {"words_seen", "checkpoint_words", "best_words"} & set(summary)


def test_resume_keeps_word_checkpoints_identical(corpus, word_run, tmp_path):  # noqa: F811
    """A run killed mid-way and resumed writes the same chck_ weights as an uninterrupted one."""
    from povstim.train.loop import Trainer
    from povstim.train.params import resolve

    a, t = resolve(GPT2, {**TRAINING, "checkpoint_words": ["500", "1k", "2k", "1M"]})
    out = tmp_path / "m"
    tr = Trainer(arch=a, training=t, seed=1, out_dir=str(out), threads=1, progress=False, **corpus)
    real = tr.train_step

    def train_step(s):
        if s == 25:
            raise KeyboardInterrupt
        return real(s)

    tr.train_step = train_step
    with pytest.raises(KeyboardInterrupt):
        tr.run()
    Trainer(arch=a, training=t, seed=1, out_dir=str(out), threads=1, progress=False, **corpus).run()
    for name in ("chck_500", "chck_1k", "chck_2k"):
        assert (out / "checkpoints" / name / "model.safetensors").read_bytes() == \
            (word_run / "checkpoints" / name / "model.safetensors").read_bytes()
    assert json.loads((out / "train_summary.json").read_text())["checkpoint_words"] == \
        json.loads((word_run / "train_summary.json").read_text())["checkpoint_words"]


# ------------------------------------------------------- scoring and curves
def test_scoring_scores_the_word_checkpoints_with_their_words(word_run):
    """The scorer's targets are the chck_ folders (by their manifests' steps) and every row gets words_seen."""
    import pandas as pd
    from povstim.scoring import items

    summary = json.loads((word_run / "train_summary.json").read_text())
    found = items.checkpoints(word_run)
    assert [s for s, _ in found] == sorted(v["step"] for v in summary["checkpoint_words"].values())
    assert all(p.name.startswith("chck_") for _, p in found)
    steps = [s for s, _ in found] + [summary["best_step"]]
    frame = pd.DataFrame({"step": steps, "correct": [True] * len(steps)})
    seen = items.with_words_seen(frame, word_run)["words_seen"].tolist()
    assert seen[:-1] == [summary["checkpoint_words"][n]["words"] for n in ("500", "1k", "2k")]
    assert seen[-1] == summary["best_words"]
    with pytest.raises(PovstimError, match="no words seen recorded for step"):
        items.with_words_seen(pd.DataFrame({"step": [3]}), word_run)


def test_curves_carry_words_seen():
    import pandas as pd
    from povstim.analysis.timing.curves import curve_table

    rows = []
    for step, words in ((10, 500), (20, 1000)):
        for i in range(4):
            rows.append({"suite": "s", "arch": "gpt2", "condition": "baby", "size": "10k", "seed": 1, "step": step,
                         "final": step == 20, "category": "c", "paradigm": "p", "item_id": str(i),
                         "correct": i < step // 10 + 1, "words_seen": words})
    out = curve_table(pd.DataFrame(rows))
    assert out["words_seen"].tolist() == [500, 1000] and out.columns[-1] == "words_seen"


def test_learning_curve_figure_uses_words_seen():
    import pandas as pd
    from povstim.figures import plots, style

    style.apply()
    rows = []
    for seed, offset in ((1, 0), (2, 7)):
        for rank, words in enumerate((500, 1000, 2000), 1):
            rows.append({"suite": "s", "arch": "gpt2", "condition": "baby", "size": "10k", "seed": seed,
                         "step": 10 * rank + seed, "category": "c", "paradigm": "p", "accuracy": 0.5 + 0.1 * rank,
                         "words_seen": words + offset})
    fig = plots.learning_curves(pd.DataFrame(rows), "s")
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_xlabel() == "words seen"
    assert list(ax.lines[0].get_xdata()) == [503.5, 1003.5, 2003.5]  # each checkpoint averaged over seeds


def test_the_acquisition_stage_runs_when_an_arch_trains_word_checkpoints():
    from povstim.train.params import word_checkpoints_wanted

    archs = {"a": {"family": "gpt2"}, "b": {"family": "gpt2", "training": {"checkpoint_words": ["1M"]}}}
    assert word_checkpoints_wanted({"training": {"checkpoint_words": None}, "archs": archs})
    assert not word_checkpoints_wanted({"training": {"checkpoint_words": None}, "archs": {"a": archs["a"]}})
    assert word_checkpoints_wanted({"training": {"checkpoint_words": {"from": "1k", "to": "1M", "n": 3}},
                                    "archs": {"a": archs["a"]}})


def test_the_demo_config_plans_the_acquisition_stage(tmp_path):
    """configs/acquisition-demo.yaml validates and asks for >= 6 word checkpoints per model."""
    import yaml
    from povstim import config as C
    from povstim.train.params import word_checkpoints_wanted

    path = Path(__file__).resolve().parents[1] / "configs" / "acquisition-demo.yaml"
    cfg = yaml.safe_load(path.read_text())
    C.validate(cfg)
    assert word_checkpoints_wanted(cfg)
    assert len(budgets.budgets(cfg["training"]["checkpoint_words"])) >= 6
