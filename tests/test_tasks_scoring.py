"""BaBIEs task kinds: multiple-choice perplexity against a hand computation, batching, ties,
completion with beam search (deterministic, and the same algorithm as transformers' generate),
masked models, and `povstim score` on the example suites."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import torch

from povstim.benchmarks.tasks import builtin_suite
from povstim.benchmarks.suite import read_suite
from povstim.cli import main
from helpers import tiny_models as tiny
from povstim.scoring.items import COLUMNS
from povstim.scoring.scorer import Scorer, Scores, load
from povstim.scoring.tasks import (
    TASK_COLUMNS, CompletionSettings, MultipleChoiceSettings, beam_search, completion_rows, matches,
    multiple_choice_rows, normalise,
)

torch.set_num_threads(1)

CORPUS = [
    "il cane insegue il gatto.", "il gatto insegue il topo.", "la mamma lava la bambina.",
    "la bambina è lavata dalla mamma.", "il cane corre nel prato.", "i gatti mangiano la pappa.",
    "c'è l'acqua nel bicchiere.", "la nonna ha un cuore d'oro.", "the dog chases the cat.",
    "the cats eat.", "she is very kind.",
] * 4

MC_ITEMS = [
    {"suite": "t", "paradigm": "passiva", "category": "frasi", "item_id": "1", "task": "multiple_choice",
     "stimulus": "il gatto è inseguito dal cane", "connective": "cioè",
     "options": ["il cane insegue il gatto", "il gatto insegue il cane", "il cane guarda il gatto"],
     "answer": "il cane insegue il gatto"},
    {"suite": "t", "paradigm": "lessico", "category": "parole", "item_id": "1", "task": "multiple_choice",
     "stimulus": "l'acqua", "connective": "cioè", "options": ["qualcosa da bere", "un animale", "una sedia", "un fiore"],
     "answer": "un animale"},
    {"suite": "t", "paradigm": "idiomi", "category": "idiomi", "item_id": "1", "task": "multiple_choice",
     "stimulus": "la nonna ha un cuore d'oro", "connective": "", "options": ["cioè è buona", "cioè è d'oro"],
     "answer": "cioè è buona"},
]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("task_models")
    return {
        "causal": tiny.build(root / "gpt2", CORPUS, "causal", vocab_size=320, seed=1, train_steps=15),
        "masked": tiny.build(root / "roberta", CORPUS, "masked", vocab_size=320, seed=2, train_steps=15),
    }


def _hand_causal_token_logps(lm, tok, text):
    """Plain torch: [BOS] + tokens; log p of each token after the first, from the full softmax."""
    ids = [tok.eos_token_id] + tok(text, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logits = lm(torch.tensor([ids])).logits[0].double()
    logp = torch.log_softmax(logits, -1)
    return ids, [float(logp[j - 1, ids[j]]) for j in range(1, len(ids))]


def _hand_pll_token_logps(lm, tok, text):
    """Plain torch PLL: mask each non-special token in turn."""
    ids = tok(text)["input_ids"]
    out = []
    for j in range(1, len(ids) - 1):
        row = list(ids)
        row[j] = tok.mask_token_id
        with torch.no_grad():
            logits = lm(torch.tensor([row])).logits[0, j].double()
        out.append(float(torch.log_softmax(logits, -1)[ids[j]]))
    return ids, out


def test_multiple_choice_perplexity_equals_hand_computation(models):
    lm, tok, kind = load(models["causal"])
    scorer = Scorer(lm, tok, kind, batch_size=4)
    rows = multiple_choice_rows(MC_ITEMS, scorer.score, "sum", MultipleChoiceSettings("sentence"), scorer)
    for it, row in zip(MC_ITEMS, rows):
        ppl = []
        for opt in it["options"]:
            text = " ".join(p for p in (it["stimulus"], it["connective"], opt) if p)
            _, lps = _hand_causal_token_logps(lm, tok, text)
            ppl.append(math.exp(-sum(lps) / len(lps)))
        ours = json.loads(row["option_ppl"])
        np.testing.assert_allclose(ours, ppl, rtol=1e-5)
        best = int(np.argmin(ppl))
        assert row["choice"] == it["options"][best]
        a = it["options"].index(it["answer"])
        assert row["correct"] == (ppl[a] < min(p for j, p in enumerate(ppl) if j != a))
        assert row["n_options"] == len(it["options"])


def test_multiple_choice_option_metric_equals_hand_computation(models):
    lm, tok, kind = load(models["causal"])
    scorer = Scorer(lm, tok, kind, batch_size=3)
    rows = multiple_choice_rows(MC_ITEMS[:1], scorer.score, "sum", MultipleChoiceSettings("option"), scorer)
    it = MC_ITEMS[0]
    prefix = f"{it['stimulus']} {it['connective']}"
    pre_ids, _ = _hand_causal_token_logps(lm, tok, prefix)
    expected = []
    for opt in it["options"]:
        ids, lps = _hand_causal_token_logps(lm, tok, f"{prefix} {opt}")
        assert ids[: len(pre_ids)] == pre_ids  # byte-level BPE: the option's tokens follow the prefix's
        opt_lps = lps[len(pre_ids) - 1:]
        expected.append(math.exp(-sum(opt_lps) / len(opt_lps)))
    np.testing.assert_allclose(json.loads(rows[0]["option_ppl"]), expected, rtol=1e-5)


def test_multiple_choice_masked_pseudo_perplexity(models):
    lm, tok, kind = load(models["masked"])
    assert kind == "masked"
    scorer = Scorer(lm, tok, kind, batch_size=5, method="pll")
    rows = multiple_choice_rows(MC_ITEMS[:2], scorer.score, "sum", MultipleChoiceSettings("sentence"), scorer)
    for it, row in zip(MC_ITEMS[:2], rows):
        expected = []
        for opt in it["options"]:
            _, lps = _hand_pll_token_logps(lm, tok, f"{it['stimulus']} {it['connective']} {opt}")
            expected.append(math.exp(-sum(lps) / len(lps)))
        np.testing.assert_allclose(json.loads(row["option_ppl"]), expected, rtol=1e-5)


def test_batched_options_equal_one_call_per_option(models):
    lm, tok, kind = load(models["causal"])
    batched = Scorer(lm, tok, kind, batch_size=64)
    calls = []

    def counting(sentences):
        calls.append(len(sentences))
        return batched.score(sentences)

    rows = multiple_choice_rows(MC_ITEMS, counting, "sum", MultipleChoiceSettings("sentence"))
    assert calls == [sum(len(it["options"]) for it in MC_ITEMS)]  # every option of every item in one call
    single = Scorer(lm, tok, kind, batch_size=1)
    one_by_one = multiple_choice_rows(
        MC_ITEMS, lambda ss: Scores(*map(np.concatenate, zip(*[(single.score([s]).logp, single.score([s]).ntok)
                                                               for s in ss]))),
        "sum", MultipleChoiceSettings("sentence"))
    for a, b in zip(rows, one_by_one):
        np.testing.assert_allclose(json.loads(a["option_ppl"]), json.loads(b["option_ppl"]), rtol=1e-4)
        assert a["correct"] == b["correct"]


def test_a_tie_for_the_lowest_perplexity_is_wrong():
    item = dict(MC_ITEMS[1])

    def flat(sentences):  # every option equally likely
        return Scores(logp=np.full(len(sentences), -12.0), ntok=np.full(len(sentences), 4))

    (row,) = multiple_choice_rows([item], flat, "sum", MultipleChoiceSettings("sentence"))
    assert row["correct"] is False and row["logp_good"] == row["logp_bad"]


def test_mean_reduction_gives_the_same_perplexity(models):
    lm, tok, kind = load(models["causal"])
    s_sum = Scorer(lm, tok, kind, reduction="sum")
    s_mean = Scorer(lm, tok, kind, reduction="mean")
    a = multiple_choice_rows(MC_ITEMS, s_sum.score, "sum", MultipleChoiceSettings("sentence"))
    b = multiple_choice_rows(MC_ITEMS, s_mean.score, "mean", MultipleChoiceSettings("sentence"))
    for x, y in zip(a, b):
        np.testing.assert_allclose(json.loads(x["option_ppl"]), json.loads(y["option_ppl"]), rtol=1e-9)


# --------------------------------------------------------------------------- completion

COMP = [
    {"suite": "t", "paradigm": "accordo", "category": "completamento", "item_id": "1", "task": "completion",
     "prompt": "il cane insegue", "answers": ["il gatto"]},
    {"suite": "t", "paradigm": "accordo", "category": "completamento", "item_id": "2", "task": "completion",
     "prompt": "i gatti mangiano", "answers": ["la pappa"]},
]
PAPER = CompletionSettings(num_beams=3, do_sample=True, top_k=50, top_p=0.95, max_new_tokens=3,
                           num_return_sequences=3, match="contains", judge="best", seed=7)


def test_completion_with_beam_sampling_is_deterministic_for_a_seed(models):
    lm, tok, kind = load(models["causal"])
    a = completion_rows(COMP, lm, tok, kind, PAPER, bos_prefix=tok.eos_token_id)
    torch.manual_seed(12345)  # the global RNG state must not matter
    b = completion_rows(list(reversed(COMP)), lm, tok, kind, PAPER, bos_prefix=tok.eos_token_id)[::-1]
    assert [r["generations"] for r in a] == [r["generations"] for r in b]
    assert all(len(json.loads(r["generations"])) == 3 for r in a)
    # Different seeds explore differently somewhere (sampling is really on).
    others = set()
    for seed in range(1, 9):
        s = CompletionSettings(**{**PAPER.__dict__, "seed": seed})
        others.add(tuple(r["generations"] for r in completion_rows(COMP, lm, tok, kind, s,
                                                                   bos_prefix=tok.eos_token_id)))
    assert len(others) > 1


def _causal_step(lm, prompt):
    def step(running):
        ids = torch.tensor([prompt + r for r in running])
        with torch.no_grad():
            return torch.log_softmax(lm(ids).logits[:, -1].float(), -1)
    return step


def _strip(seq, eos):
    out = []
    for t in seq:
        out.append(t)
        if t == eos:
            break
    return out


@pytest.mark.parametrize("do_sample", [False, True])
def test_our_beam_search_is_transformers_beam_search(models, do_sample):
    """The masked-model path's beam search, driven by a causal model, returns what generate() does."""
    from transformers import GenerationConfig

    lm, tok, kind = load(models["causal"])
    eos = tok.eos_token_id
    s = CompletionSettings(num_beams=3, do_sample=do_sample, top_k=50, top_p=0.95, max_new_tokens=4,
                           num_return_sequences=3, match="contains", judge="best", seed=1)
    for text in ("il cane", "la mamma lava", "the dog"):
        prompt = [eos] + tok(text, add_special_tokens=False)["input_ids"]
        torch.manual_seed(3)
        ours = [_strip(x, eos) for x, _ in beam_search(_causal_step(lm, prompt), s, {eos})]
        gc = GenerationConfig(num_beams=3, do_sample=do_sample, max_new_tokens=4, num_return_sequences=3,
                              pad_token_id=eos, eos_token_id=eos, early_stopping=False,
                              **({"top_k": 50, "top_p": 0.95} if do_sample else {"top_k": None, "top_p": None}))
        torch.manual_seed(3)
        out = lm.generate(input_ids=torch.tensor([prompt]), attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
                          generation_config=gc)
        theirs = [_strip(row[len(prompt):], eos) for row in out.tolist()]
        assert ours == theirs, text


def test_masked_completion_runs_and_is_deterministic(models):
    lm, tok, kind = load(models["masked"])
    a = completion_rows(COMP, lm, tok, kind, PAPER)
    b = completion_rows(COMP, lm, tok, kind, PAPER)
    assert [r["generations"] for r in a] == [r["generations"] for r in b]
    assert all(r["generation"] == json.loads(r["generations"])[0] for r in a)
    # Greedy (one beam, no sampling) = the argmax chain of mask filling, computed by hand.
    greedy = CompletionSettings(**{**PAPER.__dict__, "num_beams": 1, "do_sample": False,
                                   "num_return_sequences": 1, "max_new_tokens": 2})
    (row,) = completion_rows(COMP[:1], lm, tok, kind, greedy)
    ids = tok(COMP[0]["prompt"])["input_ids"]
    gen = []
    for _ in range(2):
        x = torch.tensor([ids[:-1] + gen + [tok.mask_token_id] + ids[-1:]])
        with torch.no_grad():
            nxt = int(lm(x).logits[0, len(ids) - 1 + len(gen)].argmax())
        gen.append(nxt)
        if nxt == tok.eos_token_id:
            break
    assert row["generation"] == tok.decode(gen, skip_special_tokens=True).strip()


def test_matching_modes():
    assert matches("cucinano per", ["cucinano"]) == {"exact": False, "normalised": False, "contains": True}
    assert matches("Cucinano.", ["cucinano"]) == {"exact": False, "normalised": True, "contains": True}
    assert matches("cucinano", ["cucinano"])["exact"]
    assert not matches("cucinanoo", ["cucinano"])["contains"]  # whole words only
    assert matches("è partito .", ["è partito", "partiva"])["contains"]
    assert normalise("L’acqua, c'è!") == "l'acqua c'è"
    assert normalise("e\u0300 vero") == "è vero"


def test_judge_any_accepts_a_later_beam(models):
    lm, tok, kind = load(models["causal"])
    rows = completion_rows(COMP, lm, tok, kind, PAPER, bos_prefix=tok.eos_token_id)
    gens = json.loads(rows[0]["generations"])
    item = dict(COMP[0], answers=[gens[-1]])  # accept exactly the last returned generation
    best = completion_rows([item], lm, tok, kind, CompletionSettings(**{**PAPER.__dict__, "match": "exact"}),
                           bos_prefix=tok.eos_token_id)[0]
    anyb = completion_rows([item], lm, tok, kind, CompletionSettings(**{**PAPER.__dict__, "match": "exact",
                                                                         "judge": "any"}),
                           bos_prefix=tok.eos_token_id)[0]
    assert anyb["correct"]
    assert best["correct"] == (gens[0] == gens[-1])


# --------------------------------------------------------------------------- povstim score

@pytest.mark.parametrize("kind", ["causal", "masked"])
def test_score_cli_runs_every_task_kind(models, tmp_path, kind):
    out = tmp_path / "s.parquet"
    rc = main(["score", "--model", str(models[kind]), "--suite", "builtin:en", "--out", str(out),
               "--params", json.dumps({"completion": {"seed": 3}, "batch_size": 8})])
    assert rc == 0
    df = pd.read_parquet(out)
    assert list(df.columns) == COLUMNS + TASK_COLUMNS
    items = read_suite(builtin_suite("en"))
    assert len(df) == len(items)
    assert set(df["task"]) == {"minimal_pair", "multiple_choice", "completion"}
    mp = df[df["task"] == "minimal_pair"]
    assert (mp["correct"] == (mp["logp_good"] > mp["logp_bad"])).all()
    mc = df[df["task"] == "multiple_choice"]
    assert (mc["correct"] == (mc["logp_good"] > mc["logp_bad"])).all()
    comp = df[df["task"] == "completion"]
    assert comp["generation"].notna().all() and comp["logp_good"].isna().all()
    # Same config, same bytes.
    out2 = tmp_path / "s2.parquet"
    main(["score", "--model", str(models[kind]), "--suite", "builtin:en", "--out", str(out2),
          "--params", json.dumps({"completion": {"seed": 3}, "batch_size": 8})])
    assert out.read_bytes() == out2.read_bytes()


def test_minimal_pair_suites_keep_the_original_score_schema(models, tmp_path):
    suite = tmp_path / "mp.jsonl"
    suite.write_text(json.dumps({"suite": "x", "paradigm": "p", "category": "c", "item_id": "1",
                                 "good": "the cats eat.", "bad": "the cats eats."}) + "\n")
    out = tmp_path / "mp.parquet"
    main(["score", "--model", str(models["causal"]), "--suite", str(suite), "--out", str(out)])
    # the item-score schema, plus the metric-sensitivity columns (scoring.sensitivity, default on): no task columns
    from povstim.scoring.items import SENSITIVITY_COLUMNS

    assert list(pd.read_parquet(out).columns) == COLUMNS + SENSITIVITY_COLUMNS
    main(["score", "--model", str(models["causal"]), "--suite", str(suite), "--no-sensitivity", "--out", str(out)])
    assert list(pd.read_parquet(out).columns) == COLUMNS


def test_completion_needs_a_model_not_a_baseline(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cats eat.\nthe dog runs.\n")
    rc = main(["score", "--baseline", "unigram", "--corpus", str(corpus), "--suite", "builtin:en",
               "--out", str(tmp_path / "b.parquet")])
    assert rc != 0 and "completion items need a language model" in capsys.readouterr().err
    assert not (tmp_path / "b.parquet").exists()
