"""`povstim plan`'s word-pool advice agrees with what the benchmark job needs: the top_k_words it names is the
generator's own, at the suite's pairs_per_paradigm (the benchmark job fails below it and succeeds at it), an empty
class the templates can do without does not stop the run, and a thin pool's warning names the K that gives each
thin class five words. The gold answers come from the POSH-BENCH generator itself (posh.generate, the function the
benchmark job runs), not from the report."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

from povstim.benchmarks import posh, words
from povstim.io import PovstimError
from povstim.preflight.plan import render, stops_the_run

LEX = words.build_lexicon("lexicon")


def ranked_counts(skip=()) -> Counter:
    """Every form of every open-class word, ranked round-robin over the classes (each class's first word, then
    each one's second, ...), so that a small top-K keeps one or two words of each class."""
    order: list[str] = []
    classes = LEX.open_classes()
    for r in range(max(len(v) for v in classes.values())):
        for cls, entries in classes.items():
            if cls in skip or r >= len(entries):
                continue
            order += [f.lower() for f in entries[r][1] if f.lower() not in order]
    return Counter({w: 100_000 - i for i, w in enumerate(order)})


def generates(counts: Counter, k: int, pairs: int) -> bool:
    try:
        posh.generate(dataclasses.replace(LEX, allowed=posh._allowed([words.word_ranks(counts)], k)), pairs, 1)
    except PovstimError:
        return False
    return True


def _result(rep: dict) -> dict:
    return {"experiment": "t", "models": 1, "sources": {}, "sizes": [], "suites": {"posh": rep}}


def test_the_advised_top_k_is_what_the_suite_needs_at_its_own_pairs():
    """At K=45 every template finds a word (one pair each: the old check said it generates, and plan said nothing),
    but 100 pairs a paradigm run out of distinct pairs: the benchmark job would fail. The advice is the smallest K at
    which the generator makes all of them."""
    counts = ranked_counts()
    assert generates(counts, 45, 4) and not generates(counts, 45, 100)
    rep = posh.generator_report(LEX, [counts], 45, 100, 1)
    assert not rep["generates"] and "distinct pairs" in rep["why"]
    k = rep["k_needed"]
    assert k > 45 and generates(counts, k, 100) and not generates(counts, k - 1, 100)
    text = render(_result(rep))
    assert f"set benchmarks.posh.top_k_words to at least {k:,}" in text and rep["why"] in text
    assert stops_the_run(_result(rep))


def test_an_empty_class_the_templates_do_without_does_not_stop_the_run():
    """noun.human_n is only ever drawn together with the other people (posh.HUMAN): with none of its words the suite
    still generates, so plan neither exits 3 nor asks for a top_k_words below the one configured (it once said "set
    top_k_words to at least 2,824" at 3,000)."""
    counts = ranked_counts(skip=("noun.human_n",))
    assert generates(counts, 10_000, 40)
    rep = posh.generator_report(LEX, [counts], 10_000, 40, 1)
    assert rep["empty"] == ["noun.human_n"] and rep["generates"] and rep["k_needed"] is None
    text = render(_result(rep))
    assert "at least" not in text and not stops_the_run(_result(rep))
    assert "-> note: noun.human_n has no word in every form at top_k_words 10,000, but the generator makes every " \
           "pair of the suite there" in text


def test_a_verb_class_empty_in_all_its_forms_but_usable_form_by_form():
    """verb.trans_animate's templates need its base, its past or its gerund, one slot at a time: a corpus holding
    each verb in one form only leaves the class empty in the pool report (no verb in every form) while the suite
    generates (an English CSV experiment's case)."""
    counts = ranked_counts()
    for i, v in enumerate(LEX.verbs["trans_animate"]):
        for form in ("base", "past", "ger"):
            if form != ("base", "past", "ger")[i % 3]:
                counts.pop(getattr(v, form).lower(), None)
    rep = posh.generator_report(LEX, [counts], 10_000, 20, 1)
    assert "verb.trans_animate" in rep["empty"]
    assert rep["generates"] and generates(counts, 10_000, 20)
    assert not stops_the_run(_result(rep)) and "at least" not in render(_result(rep))


def test_the_thin_pool_warning_names_the_k_for_five_words_of_each_class():
    rep = {"corpora": "baby, wiki at 10k", "top_k": 3000, "frequent_words": 261, "generates": True, "empty": [],
           "classes": {
               "name.f": {"available": 2, "candidates": 35, "in_corpora": 2,
                          "k_for": {"1": 259, "2": 900, "5": None, "10": None}, "k_all": None},
               "verb.percep": {"available": 2, "candidates": 5, "in_corpora": 5,
                               "k_for": {"1": 169, "2": 2000, "5": 4200, "10": None}, "k_all": 4200},
               "noun.object": {"available": 20, "candidates": 105, "in_corpora": 40,
                               "k_for": {"1": 111, "2": 120, "5": 300, "10": 900}, "k_all": None}}}
    text = render(_result(rep))
    # once: "...; larger corpora give more", naming no K at all when one thin class could not reach five
    assert "five words: name.f never (the corpora hold 2 of its words); verb.percep at K=4,200" in text
    assert "top_k_words 4,200 gives those it can at least 5; larger corpora give the others more" in text


@pytest.mark.parametrize("reach", [True, False])
def test_thin_pool_warning_when_every_class_or_none_can_reach_five(reach):
    k5 = 5100 if reach else None
    rep = {"top_k": 3000, "generates": True, "empty": [], "classes": {
        "verb.bridge": {"available": 2, "candidates": 5, "in_corpora": 5 if reach else 2,
                        "k_for": {"1": 50, "2": 900, "5": k5, "10": None}, "k_all": None}}}
    text = render(_result(rep))
    if reach:
        assert "top_k_words 5,100 gives each at least 5" in text and "larger corpora" not in text
    else:
        assert "verb.bridge never (the corpora hold 2 of its words); larger corpora give them more" in text
