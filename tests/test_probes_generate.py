"""The MSGS-style generator: feature values read off the text agree with the design.

Gold: the feature definitions of MSGS Table 1, implemented independently in
tests/helpers/probes.py (word lists and string tests), never the generator's own labels.
"""

from __future__ import annotations

import collections
import math

import pytest

from helpers.probes import TEXT_FEATURES, lower_words, words
from povstim.probes.msgs.features import ALL_TASKS, LINGUISTIC, parse_task, resolve_tasks
from povstim.probes.msgs.generate import Counts, generate_task, inoculation_count, threshold, training_set, write_data

COUNTS = Counts(train=200, test=120, control_train=120, control_test=100)
RATES = [0.0, 0.005, 0.01, 0.05]  # 0, 1, 2 and 10 of 200 training examples
AMBIGUOUS = [t for t in resolve_tasks("all") if t.kind == "ambiguous"]
CONTROLS = [t for t in resolve_tasks("all") if t.kind == "control"]


@pytest.fixture(scope="module")
def data():
    return {t.name: generate_task(t, COUNTS, RATES, seed=7) for t in resolve_tasks("all")}


def _mcc(a, b):
    tp = sum(x and y for x, y in zip(a, b))
    tn = sum((not x) and (not y) for x, y in zip(a, b))
    fp = sum((not x) and y for x, y in zip(a, b))
    fn = sum(x and (not y) for x, y in zip(a, b))
    d = math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return (tp * tn - fp * fn) / d if d else 0.0


def test_task_inventory_is_msgs():
    assert len(ALL_TASKS) == 29
    assert len(AMBIGUOUS) == 20 and len(CONTROLS) == 9
    assert {(t.linguistic, t.surface) for t in AMBIGUOUS} == {(ling, s) for ling in LINGUISTIC for s in (
        "absolute_token_position", "length", "lexical_content_the", "relative_token_position", "title_case")}


def test_split_sizes(data):
    for t in AMBIGUOUS:
        d = data[t.name]
        assert len(d["train"]) == COUNTS.train and len(d["test"]) == COUNTS.test and len(d["aux"]) == COUNTS.test
        assert len(d["inoculating"]) == 10  # the largest inoculation count
    for t in CONTROLS:
        assert len(data[t.name]["train"]) == COUNTS.control_train and len(data[t.name]["test"]) == COUNTS.control_test


@pytest.mark.parametrize("task", [t.name for t in AMBIGUOUS])
def test_ambiguous_features_agree_in_training_and_disagree_in_test(data, task):
    t = parse_task(task)
    d = data[task]
    ling_fn, surf_fn = TEXT_FEATURES.get(t.linguistic), TEXT_FEATURES.get(t.surface)
    for split, agree, domain in (("train", True, "in"), ("aux", True, "out"), ("inoculating", False, "in"),
                                 ("test", False, "out")):
        for rec in d[split]:
            s = rec["sentence"]
            assert rec["domain"] == domain
            assert rec["label"] == rec["linguistic"]  # labels always follow the linguistic feature
            ling = ling_fn(s) if ling_fn else rec["linguistic"]
            surf = surf_fn(s) if surf_fn else rec["surface"]
            assert ling == rec["linguistic"], (split, s)
            assert surf == rec["surface"], (split, s)
            assert (ling == surf) is agree, (split, s)
        assert {r["label"] for r in d[split]} == {0, 1}
    # the out-of-domain data share no sentence with the in-domain data
    assert not {r["sentence"] for r in d["train"] + d["inoculating"]} & {r["sentence"] for r in d["test"] + d["aux"]}


@pytest.mark.parametrize("ling", LINGUISTIC)
def test_length_feature_is_a_word_count_threshold(data, ling):
    t = parse_task(f"{ling}_length")
    n = threshold(t)
    for split in ("train", "test", "aux", "inoculating"):
        for rec in data[t.name][split]:
            assert (len(words(rec["sentence"])) > n) == bool(rec["surface"]), rec["sentence"]


def test_inoculation_rates_are_exact(data):
    task = "main_verb_title_case"
    d = data[task]
    base = d["train"]
    previous = set()
    for rate in RATES:
        mixed = training_set(base, d["inoculating"], rate)
        k = inoculation_count(rate, len(base))
        assert k == round(rate * 200)
        assert len(mixed) == len(base) == 200
        inoc = [r for r in mixed if r["split"] == "inoculating"]
        assert len(inoc) == k and sum(r["split"] == "train" for r in mixed) == 200 - k
        assert all(r["linguistic"] != r["surface"] for r in inoc)  # disambiguating
        # the label balance of the training set is unchanged
        assert collections.Counter(r["label"] for r in mixed) == collections.Counter(r["label"] for r in base)
        # a larger rate adds to the inoculating examples of a smaller one
        ids = {r["sentence"] for r in inoc}
        assert previous <= ids
        previous = ids
    with pytest.raises(ValueError, match="not a whole number"):
        inoculation_count(0.003, 200)
    # an odd largest count (1 of 200) still finds an inoculating example of the label it needs
    small = generate_task(parse_task(task), COUNTS, [0.005], seed=7)
    assert sorted(r["label"] for r in small["inoculating"]) == [0, 1]
    assert sum(r["split"] == "inoculating" for r in training_set(small["train"], small["inoculating"], 0.005)) == 1


@pytest.mark.parametrize("task", [t.name for t in CONTROLS])
def test_control_tasks_vary_one_feature(data, task):
    t = parse_task(task)
    feature = t.feature
    for split, domain in (("train", "in"), ("test", "out")):
        recs = data[task][split]
        assert {r["domain"] for r in recs} == {domain}
        labels = [r["label"] for r in recs]
        fn = TEXT_FEATURES.get(feature)
        if fn is not None:
            assert [fn(r["sentence"]) for r in recs] == labels
        # the two sentences of a paradigm share their template: only the feature is varied
        by_pid = collections.defaultdict(set)
        for r in recs:
            by_pid[r["paradigm"]].add(r["template"])
        assert all(len(v) == 1 for v in by_pid.values())
        if feature == "length":
            continue
        # no other surface feature predicts the label, except where one implies the other: a first
        # "the" is present, and precedes any "a"
        implied = {frozenset(("absolute_token_position", "lexical_content_the")),
                   frozenset(("absolute_token_position", "relative_token_position"))}
        for other in ("absolute_token_position", "lexical_content_the", "title_case"):
            if other == feature or frozenset((feature, other)) in implied:
                continue
            values = [TEXT_FEATURES[other](r["sentence"]) for r in recs]
            assert abs(_mcc(labels, values)) < 0.35, (other, _mcc(labels, values))
        if t.linguistic:
            # paired sentences have the same number of words: length never gives the label away
            pairs = collections.defaultdict(dict)
            for r in recs:
                pairs[r["paradigm"]][r["label"]] = len(words(r["sentence"]))
            assert all(p[0] == p[1] for p in pairs.values() if len(p) == 2)


def test_main_verb_ing_is_present_in_both_classes(data):
    """Syntactic position: an -ing verb is in every sentence, so its presence does not give the label away."""
    for rec in data["main_verb_control"]["train"] + data["main_verb_control"]["test"]:
        ing = [w for w in lower_words(rec["sentence"]) if w.endswith("ing") and w not in ("king", "sing", "bring")]
        assert len(ing) == 1, rec["sentence"]


def test_lexical_splits_between_domains(data):
    """Crucial words are split: the adjectives of the syntactic-category test never occur in training."""
    recs = data["syntactic_category_control"]
    train_adj = {w for r in recs["train"] for w in lower_words(r["sentence"])} & TEXT_FEATURES_ADJ
    test_adj = {w for r in recs["test"] for w in lower_words(r["sentence"])} & TEXT_FEATURES_ADJ
    assert train_adj and test_adj and not train_adj & test_adj


from helpers.probes import ADJECTIVES as TEXT_FEATURES_ADJ  # noqa: E402


def test_deterministic_for_a_seed(tmp_path):
    tasks = resolve_tasks(["main_verb_length"])
    a = write_data(tmp_path / "a", tasks, COUNTS, RATES, seed=3)
    b = write_data(tmp_path / "b", tasks, COUNTS, RATES, seed=3)
    write_data(tmp_path / "c", tasks, COUNTS, RATES, seed=4)
    assert a == b
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert len(files) == 1 + 2 * 4  # manifest + two controls (train, test) + the task's four splits
    for f in files:
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()
    assert (tmp_path / "a" / "main_verb_length" / "train.jsonl").read_bytes() != \
        (tmp_path / "c" / "main_verb_length" / "train.jsonl").read_bytes()
    # one task's sentences do not depend on which other tasks are generated
    alone = generate_task(parse_task("main_verb_control"), COUNTS, RATES, seed=3)
    assert (tmp_path / "a" / "main_verb_control" / "train.jsonl").read_text().count("\n") == len(alone["train"])
