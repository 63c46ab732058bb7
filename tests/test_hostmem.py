"""povstim/hostmem.py: a scoring or training job's freed blocks are reused, not returned to the OS and faulted in
again.

The scoring check runs in a fresh interpreter (malloc's thresholds are per process, and pytest's own would change) and
scores real sentences with the prefix-tree scorer on a CPU, the way a `povstim score` job does, with a GPT-2 of a
32k vocabulary: each chunk of its vocabulary head is 16 MB of logits and 16 MB of log-softmax
(scoring/scorer.py). It counts the minor page faults of the scoring from getrusage, once after a CLI stage that
leaves glibc's thresholds alone and once after `score`; each call fails on a missing file, after the CLI's own
set-up, so what differs is what ``cli.main`` set up. The training check does the same around training steps."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import tiny_models as tiny
from povstim.benchmarks import posh, words

REPO = Path(__file__).resolve().parents[1]

SCRIPT = r"""
import json, resource, sys
import torch
torch.set_num_threads(1)
from povstim import cli
from povstim.scoring.scorer import load
from povstim.scoring.tree import TreeScorer
sentences = json.loads(open(sys.argv[2]).read())
lm, tok, kind = load(sys.argv[1])
scorer = TreeScorer(lm, tok, kind, batch_size=256)
scorer.score(sentences[:50])  # the allocator's first blocks
got = {}
for stage in json.loads(sys.argv[3]):  # each fails on its missing file, after the CLI's own set-up
    assert cli.main(stage) != 0
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    scores = scorer.score(sentences)
    got[stage[0]] = {"faults": resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before,
                     "total": scores.total.tolist()}
print(json.dumps(got))
"""
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc (Linux) only")


def faults_after(script: str, stages: list[list[str]], *args: str) -> dict:
    """What ``script`` prints, run in a fresh interpreter with the CLI calls ``stages`` (its last argument)."""
    env = {"PYTHONPATH": f"{REPO / 'workflow'}", "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1",
           "HF_HUB_OFFLINE": "1"}
    run = subprocess.run([sys.executable, "-c", script, *args, json.dumps(stages)], check=False,
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def big_vocabulary(tmp_path_factory):
    """A 1-layer GPT-2 whose head has 32,768 outputs (the tokenizer uses the first few hundred), and the
    sentences of POSH pairs."""
    from transformers import GPT2Config, GPT2LMHeadModel

    root = tmp_path_factory.mktemp("hostmem")
    pairs = posh.generate(words.default_lexicon(), 150, seed=3)
    sentences = sorted({s for p in pairs for s in (p.good, p.bad)})
    tok = tiny.train_tokenizer(sentences, "causal", 400)
    import torch

    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=32768, n_positions=64, n_embd=32, n_layer=1, n_head=1,
                                       bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id))
    model.save_pretrained(root / "model")
    tok.save_pretrained(root / "model")
    (root / "sentences.json").write_text(json.dumps(sentences))
    return root


def test_a_score_job_reuses_its_freed_chunks_and_other_stages_keep_glibcs_thresholds(big_vocabulary, tmp_path):
    missing = str(tmp_path / "missing")
    # in one interpreter: after `check` (not in hostmem.STAGES) glibc's own thresholds gave the chunks' memory
    # back to the OS at every chunk (measured: 460,925 faults for 2,000 sentences, 12,041 with the fix); after
    # `score` (a CLI call that fails on its missing files) the thresholds are fixed and the chunks reuse it
    stages = [["check", missing], ["score", "--model", missing, "--suite", missing, "--out", missing + ".parquet"]]
    got = faults_after(SCRIPT, stages, str(big_vocabulary / "model"), str(big_vocabulary / "sentences.json"))
    assert got["score"]["faults"] * 5 < got["check"]["faults"], got
    assert got["score"]["total"] == got["check"]["total"]  # the same numbers, bit for bit: only the memory differs


def test_another_c_library_is_left_alone(monkeypatch):
    from povstim import hostmem

    monkeypatch.setattr(hostmem.sys, "platform", "darwin")
    assert hostmem.keep_freed_memory() is False


def test_povstim_hostmem_glibc_leaves_the_thresholds_to_glibc(monkeypatch, tmp_path, caplog):
    from povstim import cli, hostmem

    calls = []
    monkeypatch.setattr(hostmem, "keep_freed_memory", lambda *thresholds: calls.append(thresholds) or True)
    missing = str(tmp_path / "missing")
    score = ["score", "--model", missing, "--suite", missing, "--out", missing + ".parquet"]
    for value, fixed in (("glibc", 0), ("", 1), ("keep", 1), ("GLIBC ", 0), ("off", 0)):
        monkeypatch.setenv(hostmem.ENV, value)
        calls.clear()
        assert cli.main(score) == 1  # the missing suite, after the CLI's set-up
        assert len(calls) == fixed, value
    assert "POVSTIM_HOSTMEM='off' is not one of keep, glibc" in caplog.text
    calls.clear()
    monkeypatch.delenv(hostmem.ENV)
    assert cli.main(["check", missing]) == 1 and calls == []  # not a scoring stage


TRAIN_SCRIPT = r"""
import json, resource, sys
import torch
torch.set_num_threads(1)
from transformers import GPT2Config, GPT2LMHeadModel
from povstim import cli
torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config(vocab_size=32768, n_positions=64, n_embd=32, n_layer=1, n_head=1,
                                   bos_token_id=0, eos_token_id=0))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
batch = torch.randint(0, 32768, (16, 64))  # a demo-sized batch (16 x 64 tokens) of a 32k vocabulary

def steps(n):
    for _ in range(n):
        opt.zero_grad()
        model(input_ids=batch, labels=batch).loss.backward()
        opt.step()

got = {}
for stage in json.loads(sys.argv[1]):
    assert cli.main(stage) != 0
    steps(2)  # the heap grows to hold what was mmapped before
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    steps(4)
    got[stage[0]] = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
print(json.dumps(got))
"""


def test_a_train_job_reuses_its_freed_logits(tmp_path):
    # a step's vocabulary logits and their gradients (134 MB each here) are over the scoring thresholds' 32 MB:
    # `train` raises the mmap threshold (hostmem.STAGES), so they come from the heap and are reused
    missing = str(tmp_path / "missing")
    stages = [["check", missing], ["train", "--train", missing, "--dev", missing, "--tokenizer", missing,
                                   "--arch", "{}", "--seed", "1", "--out-dir", str(tmp_path / "out")]]
    got = faults_after(TRAIN_SCRIPT, stages)
    assert got["train"] * 5 < got["check"], got
