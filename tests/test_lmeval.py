"""povstim suites as lm-evaluation-harness tasks, and lm-eval minimal-pair task folders as povstim suites.

The export is run by the harness itself (lm-eval 0.4.13, offline, ``--model hf`` in float64) on a model trained by
``povstim train``: its per-sentence log-probabilities must equal ``povstim score``'s (same BOS prefix, same tokens,
summed) within 1e-5 and its ``acc`` must be povstim's verdict, a tie counted wrong. The import reads task folders in
the harness's MultiBLiMP and BLiMP-NL layouts, written here by hand from the harness's own task YAMLs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import torch

from helpers.tiny_models import tiny_corpus
from povstim import cli
from povstim.benchmarks.importers import import_suite, load_pairs
from povstim.io import PovstimError

torch.set_num_threads(1)

ARCH = {"family": "gpt2", "n_layer": 2, "n_embd": 32, "n_head": 2, "n_inner": 64}
TRAINING = {"lr": 3e-3, "batch_size": 8, "context": 32, "warmup": 4, "max_steps": 20, "patience": 1000,
            "eval_every": 10, "save_every": 10, "log_every": 5, "dropout": 0.1, "device": "cpu"}
# 10 pairs in two paradigms; the last is a tie (the same sentence twice), a quote, an apostrophe and a non-ASCII
# letter test the harness's choice template
PAIRS = [
    ("agreement", "The dog runs.", "The dog run."),
    ("agreement", "The happy girls smile.", "The happy girls smiles."),
    ("agreement", "Mary sees the cats.", "Mary see the cats."),
    ("agreement", "Tom's horse jumps.", "Tom's horse jump."),
    ("agreement", 'The boy says "hi".', 'The boy say "hi".'),
    ("questions", "Is the dog that runs happy?", "Is the dog that happy runs?"),
    ("questions", "Who does Anna like?", "Who does Anna like Tom?"),
    ("questions", "Does the café girl smile?", "Does the café girl smiles?"),
    ("questions", "What does Max find?", "What Max does find?"),
    ("questions", "The baby sleeps.", "The baby sleeps."),
]


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("lmeval")
    # no prefix space: " The" and "The" are other tokens, so a target delimiter other than "" would show
    corpus = tiny_corpus(root, {"add_prefix_space": False})
    out = root / "gpt2"
    assert cli.main(["train", "--train", corpus["train"], "--dev", corpus["dev"], "--tokenizer", corpus["tokenizer"],
                     "--arch", json.dumps(ARCH), "--params", json.dumps(TRAINING), "--seed", "1", "--out-dir",
                     str(out), "--threads", "1", "--no-progress"]) == 0
    return out


def write_suite(folder: Path, pairs=PAIRS, suite: str = "mini") -> Path:
    folder.mkdir(parents=True)
    for paradigm in sorted({p for p, _, _ in pairs}):
        rows = [{"suite": suite, "paradigm": p, "category": f"cat-{p}", "item_id": str(i), "good": g, "bad": b}
                for i, (p, g, b) in enumerate(pairs) if p == paradigm]
        (folder / f"{paradigm}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


def score(model: Path, suite: Path, out: Path, *extra: str) -> pd.DataFrame:
    assert cli.main(["score", "--model", str(model), "--suite", str(suite), "--out", str(out), "--device", "cpu",
                     "--no-checkpoints", "--no-sensitivity", "--threads", "1", *extra]) == 0
    return pd.read_parquet(out)


def harness(model: Path, tasks: Path, task: str, monkeypatch) -> dict:
    """lm_eval.simple_evaluate on the exported folder, offline, the model in float64 (--log_samples)."""
    for var in ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.setenv(var, "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tasks.parent / "hf-datasets"))
    import datasets
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tasks.parent / "hf-datasets")
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)
    return simple_evaluate(model="hf", model_args=f"pretrained={model},dtype=float64", tasks=[task],
                           task_manager=TaskManager(include_path=str(tasks), include_defaults=False), device="cpu",
                           batch_size=4, log_samples=True, bootstrap_iters=0)


def test_export_runs_under_lm_eval_with_povstims_scores_and_verdicts(model, tmp_path, monkeypatch):
    suite = write_suite(tmp_path / "mini")
    ours = score(model, suite, tmp_path / "ours.parquet").set_index(["paradigm", "item_id"])
    assert cli.main(["export-lm-eval", str(suite), "--out", str(tmp_path / "tasks")]) == 0
    folder = tmp_path / "tasks" / "mini"
    assert sorted(p.name for p in folder.glob("*.yaml")) == [
        "_povstim_mini.yaml", "povstim_mini_agreement.yaml", "povstim_mini_questions.yaml"]

    res = harness(model, tmp_path / "tasks", "povstim_mini", monkeypatch)
    samples = [s for task in ("povstim_mini_agreement", "povstim_mini_questions") for s in res["samples"][task]]
    assert len(samples) == len(PAIRS)
    seen = set()
    for s in samples:
        doc = s["doc"]
        row = ours.loc[(doc["paradigm"], doc["item_id"])]
        (ll_bad, _), (ll_good, _) = s["filtered_resps"]  # the choices are listed bad first
        assert ll_good == pytest.approx(row["logp_good"], abs=1e-5, rel=0), doc
        assert ll_bad == pytest.approx(row["logp_bad"], abs=1e-5, rel=0), doc
        assert bool(s["acc"]) == bool(row["correct"]), doc
        seen.add((doc["paradigm"], doc["item_id"]))
    assert seen == set(ours.index)
    tie = ours.loc[("questions", "9")]
    assert tie["logp_good"] == tie["logp_bad"] and not tie["correct"]  # the tie: wrong in both
    assert 0 < ours["correct"].sum() < len(PAIRS)  # the verdicts compared are not all one way
    assert res["results"]["povstim_mini"]["acc,none"] == pytest.approx(ours["correct"].mean(), abs=1e-12)


def test_exported_folder_reads_back_as_the_same_suite(model, tmp_path):
    suite = write_suite(tmp_path / "mini")
    assert cli.main(["export-lm-eval", str(suite), "--out", str(tmp_path / "tasks")]) == 0
    back = {(p["paradigm"], p["item_id"]): p for p in load_pairs(tmp_path / "tasks" / "mini")}  # format sniffed
    orig = {(p["paradigm"], p["item_id"]): p for p in load_pairs(suite)}
    assert set(back) == set(orig)
    for key, p in orig.items():
        assert (back[key]["good"], back[key]["bad"], back[key]["category"]) == (p["good"], p["bad"], p["category"])
    a = score(model, suite, tmp_path / "a.parquet").sort_values(["paradigm", "item_id"]).reset_index(drop=True)
    b = score(model, tmp_path / "tasks" / "mini", tmp_path / "b.parquet", "--format", "lm_eval", "--suite-name",
              "mini").sort_values(["paradigm", "item_id"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(a[["paradigm", "item_id", "logp_good", "logp_bad", "correct"]],
                                  b[["paradigm", "item_id", "logp_good", "logp_bad", "correct"]])


# The harness's lm_eval/tasks/multiblimp/_template_yaml (0.4.13), dataset_path pointing at a local copy of the hub
# dataset (jumelet/multiblimp: one <lang>/data.tsv per language)
MULTIBLIMP_TEMPLATE = """dataset_path: mb_data
tag: multiblimp
output_type: multiple_choice
test_split: train
doc_to_text: ""
target_delimiter: ""
doc_to_target: 0
doc_to_choice: "{{[sen,wrong_sen]}}"
num_fewshot: 0
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
  - metric: acc_norm
    aggregation: mean
    higher_is_better: true
metadata:
  version: 0
"""
MB_ROWS = [("SV-#", "Le chien court.", "Le chien courent."), ("SV-#", "Les chats dorment.", "Les chats dort."),
           ("SV-P", "Je mange.", "Je mangeons.")]


def multiblimp_folder(root: Path) -> Path:
    folder = root / "multiblimp"
    (folder / "mb_data" / "fra").mkdir(parents=True)
    (folder / "_template_yaml").write_text(MULTIBLIMP_TEMPLATE)
    (folder / "multiblimp_fra.yaml").write_text("include: _template_yaml\ndataset_name: fra\ntask: multiblimp_fra\n")
    lines = ["\tsen\twrong_sen\tphenomenon\tlang"] + [f"{i}\t{g}\t{b}\t{ph}\tfra" for i, (ph, g, b) in
                                                       enumerate(MB_ROWS)]
    (folder / "mb_data" / "fra" / "data.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_multiblimp_layout_scores_through_povstim_score(model, tmp_path):
    folder = multiblimp_folder(tmp_path)
    got = score(model, folder, tmp_path / "mb.parquet", "--format", "lm_eval", "--suite-name", "mb")
    assert sorted(got["paradigm"]) == ["SV-#", "SV-#", "SV-P"]
    # the same sentences as a plain suite: sen is the good one (doc_to_target 0)
    plain = write_suite(tmp_path / "plain", [(ph.replace("#", "n"), g, b) for ph, g, b in MB_ROWS], "plain")
    ref = score(model, plain, tmp_path / "plain.parquet")
    assert sorted(got["logp_good"]) == pytest.approx(sorted(ref["logp_good"]), abs=1e-9)
    assert sorted(got["logp_bad"]) == pytest.approx(sorted(ref["logp_bad"]), abs=1e-9)
    pairs = import_suite("lm_eval", folder, "mb")
    assert [(p.good, p.bad, p.extra["lang"], p.extra["lm_eval_task"]) for p in pairs] == [
        (g, b, "fra", "multiblimp_fra") for _, g, b in MB_ROWS]


# The harness's lm_eval/tasks/blimp_nl layout (a _template_yaml and one task per paradigm), the data as local JSON
# lines; doc_to_target 1 with the bad sentence listed first reads the same pairs
BLIMP_NL_TEMPLATE = """dataset_path: json
output_type: multiple_choice
test_split: test
doc_to_text: ""
target_delimiter: ""
doc_to_target: {target}
doc_to_choice: "{choice}"
num_fewshot: 0
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
metadata:
  version: 0
"""


def blimp_nl_folder(root: Path, choice="{{[sentence_good, sentence_bad]}}", target=0, rows=None) -> Path:
    folder = root / "blimp_nl"
    (folder / "data").mkdir(parents=True)
    (folder / "_template_yaml").write_text(BLIMP_NL_TEMPLATE.format(choice=choice, target=target))
    rows = rows or [{"sentence_good": "De hond loopt.", "sentence_bad": "De hond lopen."},
                    {"sentence_good": "Wij lopen.", "sentence_bad": "Wij loopt."}]
    (folder / "data" / "number.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "anaphor_agreement__number.yaml").write_text(
        "dataset_name: anaphor_agreement__number\ninclude: _template_yaml\ntask: blimp_nl__anaphor_agreement__number\n"
        "dataset_kwargs:\n  data_files:\n    test: data/number.jsonl\n")
    return folder


@pytest.mark.parametrize("choice,target", [("{{[sentence_good, sentence_bad]}}", 0),
                                           ("{{[sentence_bad,sentence_good]}}", 1)])
def test_blimp_nl_layout_reads_good_and_bad_by_doc_to_target(tmp_path, choice, target):
    pairs = import_suite("lm_eval", blimp_nl_folder(tmp_path, choice, target), "nl")
    assert [(p.paradigm, p.item_id, p.good, p.bad) for p in pairs] == [
        ("blimp_nl__anaphor_agreement__number", "blimp_nl__anaphor_agreement__number:0", "De hond loopt.",
         "De hond lopen."),
        ("blimp_nl__anaphor_agreement__number", "blimp_nl__anaphor_agreement__number:1", "Wij lopen.", "Wij loopt.")]


def test_unmappable_choice_is_one_line_naming_the_file_and_the_fields(tmp_path, capsys):
    folder = blimp_nl_folder(tmp_path, choice="{{choices}}")
    assert cli.main(["score", "--model", str(tmp_path), "--suite", str(folder), "--format", "lm_eval", "--out",
                     str(tmp_path / "x.parquet")]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert str(folder / "anaphor_agreement__number.yaml") in err
    assert "doc_to_choice '{{choices}}'" in err and "{{[sentence_good, sentence_bad]}}" in err
    assert "{{[sen, wrong_sen]}}" in err
    assert not (tmp_path / "x.parquet").exists()


def test_items_without_the_choice_fields_name_the_data_file_row_and_fields(tmp_path):
    folder = blimp_nl_folder(tmp_path, rows=[{"good": "De hond loopt.", "bad": "De hond lopen."}])
    with pytest.raises(PovstimError, match=r"number\.jsonl, row 1: no sentence_good or sentence_bad field.*"
                       r"expected fields sentence_good, sentence_bad \(found: good, bad\)"):
        import_suite("lm_eval", folder, "nl")


def test_hub_dataset_and_non_pair_tasks_are_refused_with_what_is_expected(tmp_path):
    folder = blimp_nl_folder(tmp_path)
    (folder / "_template_yaml").write_text(BLIMP_NL_TEMPLATE.format(choice="{{[sentence_good, sentence_bad]}}",
                                                                    target=0).replace("dataset_path: json",
                                                                                      "dataset_path: jmichaelov/blimp_nl"))
    with pytest.raises(PovstimError, match="dataset_path 'jmichaelov/blimp_nl' is not local data"):
        import_suite("lm_eval", folder, "nl")
    (folder / "_template_yaml").write_text("dataset_path: json\noutput_type: generate_until\ndoc_to_text: '{{q}}'\n")
    with pytest.raises(PovstimError, match="output_type 'generate_until'.*doc_to_text '{{q}}'.*expected output_type"):
        import_suite("lm_eval", folder, "nl")
    with pytest.raises(PovstimError, match="no lm-eval task YAML"):
        import_suite("lm_eval", tmp_path / "blimp_nl" / "data", "nl")


def test_a_config_suite_of_kind_lm_eval_says_its_language_and_builds(tmp_path):
    import copy

    import yaml

    from povstim import config as povstim_config
    from povstim.benchmarks.build import imported_pairs

    assert cli.main(["export-lm-eval", str(write_suite(tmp_path / "mini")), "--out", str(tmp_path / "tasks")]) == 0
    raw = yaml.safe_load((Path(__file__).parents[1] / "configs" / "posh.yaml").read_text(encoding="utf-8"))
    spec = {"kind": "lm_eval", "path": str(tmp_path / "tasks" / "mini")}
    bad = copy.deepcopy(raw)
    bad["benchmarks"] = {"mini": dict(spec)}
    with pytest.raises(PovstimError, match=r"benchmarks\.mini\.language: say which language the lm_eval suite"):
        povstim_config.validate(bad)
    ok = copy.deepcopy(raw)
    ok["benchmarks"] = {"mini": {**spec, "language": "en"}}
    povstim_config.validate(ok)
    pairs = imported_pairs("mini", ok["benchmarks"]["mini"])
    assert sorted((p.paradigm, p.item_id, p.good, p.bad) for p in pairs) == sorted(
        (par, str(i), g, b) for i, (par, g, b) in enumerate(PAIRS))


@pytest.mark.parametrize("folder,fields", [("multiblimp", ("sen", "wrong_sen")),
                                           ("blimp_nl", ("sentence_good", "sentence_bad")),
                                           ("zhoblimp", ("sentence_good", "sentence_bad")),
                                           ("turblimp", ("sentence_good", "sentence_bad")),
                                           ("blimp", ("sentence_good", "sentence_bad"))])
def test_the_harness_own_minimal_pair_tasks_map_and_their_hub_data_is_named(folder, fields):
    """Every task YAML the installed harness ships for these benchmarks maps to good/bad fields; their data is on
    the hub, which povstim refuses with what it reads instead."""
    import lm_eval

    from povstim.benchmarks.lmeval import choice_fields, task_configs

    configs = task_configs(Path(lm_eval.__file__).parent / "tasks" / folder)
    assert len(configs) > 10
    assert {choice_fields(cfg, where) for where, cfg in configs} == {fields}
    with pytest.raises(PovstimError, match="is not local data; povstim reads dataset_path: json"):
        import_suite("lm_eval", configs[0][0], "x")
