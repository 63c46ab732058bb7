"""``scoring.matmul: 3xtf32`` (scoring/matmul.py): fp32-accurate linear layers from TF32 products.

The operands the method feeds the tensor cores are exact TF32 values, so a CPU computes the very same
products (only the order of the fp32 sums differs); its accuracy is checked here against float64 -- numpy
for the rounding and the products, a float64 copy of the model for the scores -- and against what plain
TF32 (each operand cut to TF32, as tensor cores read fp32) would do. Its speed needs a GPU: the last test
runs only on a CUDA machine."""

from __future__ import annotations

import copy
import logging

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from helpers import tiny_models as tiny
from povstim.benchmarks import posh, words
from povstim.io import PovstimError
from povstim.scoring import matmul
from povstim.scoring.fast import FastScorer
from povstim.scoring.run import ScoringSettings
from povstim.scoring.scorer import Scorer, load
from povstim.scoring.tree import TreeScorer
from povstim.settings import build

torch.set_num_threads(1)

PAIRS = posh.generate(words.default_lexicon(), 30, seed=5)
SENTS = sorted({s for p in PAIRS for s in (p.good, p.bad)})


def _tf32_cut_reference(x: np.ndarray) -> np.ndarray:
    """fp32 values cut to TF32 (11 significant bits, toward zero), in float64 with numpy only."""
    m, e = np.frexp(x.astype(np.float64))  # x = m * 2**e, 0.5 <= |m| < 1
    return np.ldexp(np.trunc(m * 2.0**11) / 2.0**11, e)


def _cut(t):
    """Plain TF32: the 13 low mantissa bits dropped, as tensor cores read an fp32 operand."""
    return (t.view(torch.int32) & ~0x1FFF).view(torch.float32)


class PlainTF32(TorchFunctionMode):
    """What TF32 tensor cores do to fp32 linear layers without the split (the accuracy 3xtf32 restores)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is F.linear:
            return F.linear(_cut(args[0]), _cut(args[1]), args[2] if len(args) > 2 else kwargs.get("bias"))
        if func is torch.addmm and not kwargs:
            return torch.addmm(args[0], _cut(args[1]), _cut(args[2]))
        return func(*args, **kwargs)


# ----------------------------------------------------------------------------- the split

def test_split_by_hand_and_against_numpy():
    one = 1.0
    cases = {  # TF32 keeps 10 bits after the point; the rest goes to lo, cut to 10 bits after ITS point
        one + 2.0**-12: (one, 2.0**-12),
        one + 2.0**-10 + 2.0**-11: (one + 2.0**-10, 2.0**-11),
        # lo = 2^-11 + 2^-21 + 2^-23 keeps 11 significant bits, down to 2^-21: its 2^-23 is cut
        one + 2.0**-11 + 2.0**-21 + 2.0**-23: (one, 2.0**-11 + 2.0**-21),
        -(one + 2.0**-12): (-one, -(2.0**-12)),  # toward zero, the sign kept
        3.0: (3.0, 0.0),
    }
    x = torch.tensor(list(cases), dtype=torch.float32)
    hi, lo = matmul.split(x)
    assert list(zip(hi.tolist(), lo.tolist())) == list(cases.values())
    g = torch.Generator().manual_seed(0)
    r = torch.randn(100_000, generator=g) * torch.exp(torch.randn(100_000, generator=g) * 8)
    hi, lo = matmul.split(r)
    exact = r.double().numpy()
    assert np.array_equal(hi.double().numpy(), _tf32_cut_reference(r.numpy()))
    assert np.array_equal(lo.double().numpy(), _tf32_cut_reference((exact - hi.double().numpy()).astype(np.float32)))
    for part in (hi, lo):
        assert ((part.view(torch.int32) & 0x1FFF) == 0).all()  # exactly representable in TF32
    assert (np.abs(exact - hi.double().numpy() - lo.double().numpy()) <= np.abs(exact) * 2.0**-20).all()


def test_split_into_a_strided_buffer():
    # the mode writes [x_hi | x_lo] into one buffer: the same values as the plain split
    x = torch.randn(5, 7, generator=torch.Generator().manual_seed(4))
    both = torch.empty(5, 14)
    matmul.split(x, both[:, :7], both[:, 7:])
    hi, lo = matmul.split(x)
    assert torch.equal(both, torch.cat([hi, lo], 1))


@pytest.mark.parametrize("op", ["linear", "addmm"])
def test_products_have_fp32_accuracy_and_plain_tf32_does_not(op):
    g = torch.Generator().manual_seed(2)
    x = torch.randn(64, 768, generator=g)
    w = torch.randn(768, 3072, generator=g) / 28
    b = torch.randn(3072, generator=g)
    exact = x.double().numpy() @ w.double().numpy() + b.double().numpy()

    def run(mode=None):
        with mode if mode is not None else torch.no_grad():
            out = F.linear(x, w.t().contiguous(), b) if op == "linear" else torch.addmm(b, x, w)
        return np.abs(out.double().numpy() - exact).max()

    fp32, three, plain = run(), run(matmul.TF32x3()), run(PlainTF32())
    assert three <= 4 * fp32  # as good as fp32, give or take its own rounding
    assert plain >= 100 * fp32  # what the split is for


def test_other_products_pass_through():
    g = torch.Generator().manual_seed(3)
    x, w = torch.randn(8, 16, generator=g), torch.randn(16, 4, generator=g)
    b = torch.randn(4, generator=g)
    with matmul.TF32x3():
        half = F.linear(x.bfloat16(), w.t().bfloat16())  # not fp32: left alone
        scaled = torch.addmm(b, x, w, beta=0.5)  # addmm with its own scaling: left alone
        plain_mm = x @ w  # only linear layers are taken over
    assert torch.equal(half, F.linear(x.bfloat16(), w.t().bfloat16()))
    assert torch.equal(scaled, torch.addmm(b, x, w, beta=0.5))
    assert torch.equal(plain_mm, x @ w)


def test_tf32_switch_is_set_inside_and_restored_after():
    flags = torch.backends.cuda.matmul
    name = "fp32_precision" if hasattr(flags, "fp32_precision") else "allow_tf32"
    before = getattr(flags, name)
    with matmul.tf32_products():
        assert getattr(flags, name) in ("tf32", True)
    assert getattr(flags, name) == before
    with pytest.raises(ValueError), matmul.tf32_products():
        raise ValueError  # restored on the way out of an error too
    assert getattr(flags, name) == before


def test_a_weights_split_is_shared_redone_after_a_change_and_freed_with_it():
    import gc

    lin = torch.nn.Linear(16, 8)
    x = torch.randn(4, 16, generator=torch.Generator().manual_seed(6))
    with torch.no_grad():
        with matmul.TF32x3():
            first = lin(x)
        kept = matmul.split_weight(lin.weight, 1)
        with matmul.TF32x3():  # another mode (a second scoring pass): the same split, not a new one
            assert torch.equal(lin(x), first)
        assert all(a is b for a, b in zip(matmul.split_weight(lin.weight, 1), kept))
        lin.weight.mul_(2)  # changed in place (training between two scorings): split again
        with matmul.TF32x3():
            again = lin(x)
        assert not torch.equal(again, first)
        assert torch.allclose(again, F.linear(x, lin.weight, lin.bias), atol=1e-5)
    key = (id(lin.weight), 1)
    assert key in matmul._SPLITS
    del lin
    gc.collect()
    assert key not in matmul._SPLITS  # freed with its weight


# ----------------------------------------------------------------------------- scores

@pytest.fixture(scope="module")
def models(tmp_path_factory):
    return tiny.causal_and_masked(tmp_path_factory.mktemp("models"), SENTS * 2, train_steps=40, vocab_size=400,
                                  hidden=128, heads=4)


def _float64_causal_sums(lm, tok, sentences):
    """Each sentence's log p with BOS, from a float64 copy of the model, one sentence at a time."""
    ref = copy.deepcopy(lm).double()
    out = []
    with torch.no_grad():
        for s in sentences:
            ids = torch.tensor([[tok.bos_token_id] + tok(s)["input_ids"]])
            lp = torch.log_softmax(ref(ids).logits[0, :-1], -1).gather(1, ids[0, 1:, None])
            out.append(lp.sum().item())
    return np.array(out)


@pytest.mark.parametrize("cls", [TreeScorer, FastScorer])
def test_causal_scores_keep_fp32_accuracy(models, cls):
    lm, tok, kind = load(models["causal"], "cpu")
    exact = _float64_causal_sums(lm, tok, SENTS)

    def error(mode):
        scorer = cls(lm, tok, kind, batch_size=16)
        scorer.matmul_mode = mode
        return np.abs(scorer.score(SENTS).total - exact).max()

    fp32, three, plain = error(None), error(matmul.TF32x3()), error(PlainTF32())
    # observed: fp32 6.3e-6, 3xtf32 1.1e-5, plain TF32 1.3e-2 (sentence sums of ~15 tokens)
    assert three <= 3e-5 and three <= 6 * fp32
    assert plain >= 1e-3


def test_masked_pll_scores_stay_within_fp32_rounding(models):
    lm, tok, kind = load(models["masked"], "cpu")

    def scores(mode):
        scorer = FastScorer(lm, tok, kind, batch_size=64, method="pll")
        scorer.matmul_mode = mode
        return scorer.score(SENTS[:60]).total

    fp32 = scores(None)
    assert np.abs(scores(matmul.TF32x3()) - fp32).max() <= 2e-5
    assert np.abs(scores(PlainTF32()) - fp32).max() >= 5e-4


# ----------------------------------------------------------------------------- the setting

def test_setting_is_checked_and_leaves_fp32_on_a_cpu(models, caplog):
    assert build(ScoringSettings, "scoring", {}).matmul == "fp32"
    with pytest.raises(PovstimError, match="matmul"):
        build(ScoringSettings, "scoring", {"matmul": "tf32"})
    with pytest.raises(PovstimError, match="scoring.matmul must be one of fp32, 3xtf32"):
        matmul.mode_for("bf16", "cpu")
    lm, tok, kind = load(models["causal"], "cpu")
    matmul._SAID.discard("cpu")
    with caplog.at_level(logging.INFO, logger="povstim.score"):
        scorer = Scorer(lm, tok, kind, batch_size=16, matmul="3xtf32")
        Scorer(lm, tok, kind, batch_size=16, matmul="3xtf32")  # a second pass's scorer: said once
    assert scorer.matmul_mode is None  # no TF32 here: 3x the work for nothing
    assert caplog.text.count("on cpu the products stay plain fp32") == 1
    same = Scorer(lm, tok, kind, batch_size=16).score(SENTS[:20]).total
    assert np.array_equal(scorer.score(SENTS[:20]).total, same)


@pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] < 8,
                    reason="needs a CUDA GPU with TF32 tensor cores")
def test_on_a_gpu_3xtf32_is_fp32_accurate_and_plain_tf32_is_not(models):
    lm, tok, kind = load(models["causal"], "cuda")
    exact = _float64_causal_sums(load(models["causal"], "cpu")[0], tok, SENTS)
    flags = torch.backends.cuda.matmul
    switch = "fp32_precision" if hasattr(flags, "fp32_precision") else "allow_tf32"
    before = getattr(flags, switch)

    def error(setting, tf32=False):
        with matmul.tf32_products(tf32):  # plain TF32 for every fp32 product
            got = TreeScorer(lm, tok, kind, device="cuda", batch_size=16, matmul=setting).score(SENTS).total
        return np.abs(got - exact).max()

    assert TreeScorer(lm, tok, kind, device="cuda", matmul="3xtf32").matmul_mode is not None
    fp32, three = error("fp32"), error("3xtf32")
    assert three <= 3e-5 and three <= 6 * max(fp32, 1e-6)
    assert getattr(flags, switch) == before  # the mode switched TF32 back off after each product
    assert error("fp32", tf32=True) >= 1e-3  # TF32 really is in use when switched on: plain, it is far off
