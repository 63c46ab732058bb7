"""The compute forecast of ``povstim plan --forecast``: seconds per training and scoring job on this machine,
the steps and epochs each size gets, and the DAG's wall time at ``--cores N``.

1. **Calibration** (:func:`calibrate`): for each configured arch, a real :class:`povstim.train.loop.Trainer`
   trains a few steps at the config's shapes (batch, context, packing, the vocabulary the corpora's BPE
   reaches, threads, device) on a
   generated corpus of pseudo-words, with two dev evaluations and one checkpoint. Its train log gives the
   training tokens/s (the log windows after the first: no warm-up), its timings the seconds per evaluated
   dev token (a forward pass: the scorer's cost per item token too), per checkpoint, and a job's fixed cost
   (data, model, final save). Cached in ``resources/forecast/`` under a key of everything the speed depends
   on: the arch, the training shapes, the vocabulary, the device (and GPU name), the CPU's model, torch's
   version, the threads and the training code; each cached measurement records the machine's load when it was
   made, and is reused only under a comparable load (:func:`comparable_load`); ``--recalibrate`` measures
   again. Before measuring, :func:`calibration_estimate` says what the calibration will cost.
2. **Jobs** (:func:`job_forecast`): per model, the training tokens (the size's words x (1 - dev_fraction) x
   the tokens per word of a BPE tokenizer trained on the sources' cleaned lines at the config's vocabulary
   size, + one end-of-sentence token per sentence), the batches per epoch, the steps the config gives it
   (``epochs`` / ``max_steps``) and the steps the plateau rule expects (:data:`PLATEAU_EPOCHS`): seconds =
   steps x tokens per step / tokens/s + evaluations + checkpoints + the fixed cost. A score job scores the
   final model and, with ``scoring.checkpoints``, every step checkpoint, on every suite.
3. **Wall time** (:func:`list_schedule`): Snakemake starts ready jobs while cores are free; the estimate
   starts the ready job with the longest remaining path first (train before its score jobs), each holding
   its threads (capped at the cores), and reports when the last ends. The other stages (corpus, parse,
   filter, benchmarks, analysis) are not forecast: the estimate covers the training and scoring jobs.
"""

from __future__ import annotations

import heapq
import json
import logging
import math
import os
import platform
import random
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .. import plan as dag_plan
from ..io import PovstimError, code_hash, parse_size, write_json, write_lines

log = logging.getLogger("povstim.plan")

CALIBRATION_STEPS = 40  # steps per calibration run: the first log window is warm-up, the rest are measured
CALIBRATION_LOG = 5
CACHE_VERSION = 4
# A cached calibration is reused only when the machine's 1-minute load average per core differs from the one it was
# measured under by at most this much: even on the CPU clock a busy machine slows the work (shared caches, memory
# bandwidth, hyperthreads; a 2 x 128 calibration at load 11 on 2 cores gave 2,355 tokens/s against 9,618 idle).
LOAD_TOLERANCE = 0.5

# The plateau rule (docs/own-data.md, "Compute forecast"): the epochs after which a size's dev loss stops
# improving (its best evaluation before early stopping's patience runs out), as PLATEAU_EPOCHS at
# PLATEAU_WORDS words x (words / PLATEAU_WORDS) ** PLATEAU_EXPONENT. Fitted on the embedded default's runs
# under schedule wsd (gpt2-tiny, lr 4e-3, batch 8 x 64 tokens; 10k and 30k words): in-sample, and an
# extrapolation beyond 30k words.
PLATEAU_WORDS = 10_000
PLATEAU_EPOCHS = 4.75
PLATEAU_EXPONENT = 0.35
# What the rule was fitted on (its range: a config outside it gets the rule as an extrapolation, and plan says so)
PLATEAU_FIT = {"family": "gpt2", "n_layer": 2, "n_embd": 128, "lr": 4.0e-3, "batch_size": 8, "context": 64,
               "schedule": "wsd", "language": "en", "text": "the embedded default's generated registers",
               "words": (10_000, 30_000)}


# Out of sample (scripts/forecast_benchmark.py, 2026-12-07; docs/own-data.md, "Compute forecast"): the epoch of the
# best dev loss of 10 models of configs unlike the fit (the 2 x 64 default, the French demo, an English CSV, lr 1e-3;
# one seed at 10k words) that found one, as a multiple of the rule's (low, high); the rest found none by their cap.
PLATEAU_SPREAD: tuple[float, float] | None = (0.66, 2.43)
PLATEAU_UNREACHED = "an LSTM (3 of 3 models) and lr 1e-3 (2 of 3) found no best by 16 epochs (3.4x the rule)"


def plateau_fit_text() -> str:
    f = PLATEAU_FIT
    return (f"{f['family']} {f['n_layer']} x {f['n_embd']}, lr {f['lr']:g}, batch {f['batch_size']} x {f['context']}, "
            f"schedule {f['schedule']}, language {f['language']} ({f['text']}), {f['words'][0] // 1000}k-"
            f"{f['words'][1] // 1000}k words")


def plateau_coverage(config: dict, models: list) -> list[str]:
    """How the forecast models of ``config`` fall outside what the plateau rule was fitted on (:data:`PLATEAU_FIT`),
    one phrase each; empty when every model is inside it."""
    f, out = PLATEAU_FIT, []
    for arch_name in sorted({m.arch for m in models}):
        spec = config["archs"][arch_name]
        if spec.get("family") != f["family"]:
            out.append(f"arch {arch_name} is family {spec.get('family')}")
        elif (spec.get("n_layer"), spec.get("n_embd")) != (f["n_layer"], f["n_embd"]):
            out.append(f"arch {arch_name} is {spec.get('n_layer')} x {spec.get('n_embd')}")
        from ..train.params import resolve

        # the training settings with the schema's defaults, as the train job gets them
        _, training = resolve(spec, dict(dag_plan.training_for(config, arch_name)))
        if not math.isclose(float(training.lr), f["lr"], rel_tol=1e-6):
            out.append(f"{arch_name}'s training.lr is {float(training.lr):g}")
        if (training.batch_size, training.context) != (f["batch_size"], f["context"]):
            out.append(f"{arch_name}'s batch is {training.batch_size} x {training.context}")
        if training.schedule != f["schedule"]:
            out.append(f"{arch_name}'s training.schedule is {training.schedule}")
    langs = sorted({dag_plan.source_language(config, s) for c in config["corpora"] for z in dag_plan.sizes(config)
                    for s in dag_plan.mixture(config, c, z)})
    if langs != [f["language"]]:
        out.append(f"language {', '.join(langs)}")
    kinds = sorted({dag_plan.source_spec(config, s).get("kind") for c in config["corpora"]
                    for z in dag_plan.sizes(config) for s in dag_plan.mixture(config, c, z)})
    if kinds != ["synthetic"]:
        out.append("text from " + ", ".join(k for k in kinds if k != "synthetic") + " sources")
    words = sorted({parse_size(m.size) for m in models})
    outside = [w for w in words if not f["words"][0] <= w <= f["words"][1]]
    if outside:
        out.append("sizes " + ", ".join(f"{w:,}" for w in outside) + " words")
    return out


def plateau_epochs(words: float) -> float:
    return PLATEAU_EPOCHS * (max(words, 1.0) / PLATEAU_WORDS) ** PLATEAU_EXPONENT


@dataclass(frozen=True)
class Job:
    """One job of the schedule: ``seconds`` on ``threads`` cores once every job in ``after`` has ended."""

    name: str
    seconds: float
    threads: int
    after: tuple[str, ...] = ()


def list_schedule(jobs: list[Job], cores: int) -> dict:
    """Greedy list scheduling on ``cores``: whenever cores are free, start the ready jobs (dependencies ended)
    in order of their longest remaining path (the job's seconds plus its longest chain of dependants; ties: the
    given order) while their threads fit; a job asking for more threads than ``cores`` gets ``cores``, as in
    Snakemake. Returns {"wall", "core_s" (sum of seconds x the cores each job holds), "start": {name: t},
    "end": {name: t}}."""
    if cores < 1:
        raise PovstimError(f"--cores {cores}: at least 1")
    by_name = {j.name: j for j in jobs}
    for j in jobs:
        for d in j.after:
            if d not in by_name:
                raise PovstimError(f"forecast: job {j.name} waits for an unknown job {d}")
    children: dict[str, list[str]] = {j.name: [] for j in jobs}
    for j in jobs:
        for d in j.after:
            children[d].append(j.name)
    tail: dict[str, float] = {}

    def path(name: str) -> float:
        if name not in tail:
            tail[name] = by_name[name].seconds + max((path(c) for c in children[name]), default=0.0)
        return tail[name]

    order = {j.name: i for i, j in enumerate(jobs)}
    waiting = {j.name: set(j.after) for j in jobs}
    ready = [j.name for j in jobs if not j.after]
    running: list[tuple[float, int, str]] = []  # (end time, order, name)
    start, end, free, now = {}, {}, cores, 0.0
    while ready or running:
        ready.sort(key=lambda n: (-path(n), order[n]))
        for name in list(ready):
            need = min(by_name[name].threads, cores)
            if need <= free:
                free -= need
                ready.remove(name)
                start[name] = now
                heapq.heappush(running, (now + by_name[name].seconds, order[name], name))
        if not running:
            break
        now, _, name = heapq.heappop(running)
        finished = [name]
        while running and running[0][0] <= now:  # jobs ending at the same moment free their cores together
            finished.append(heapq.heappop(running)[2])
        for name in finished:
            end[name] = now
            free += min(by_name[name].threads, cores)
            for c in children[name]:
                waiting[c].discard(name)
                if not waiting[c]:
                    ready.append(c)
    return {"wall": max(end.values(), default=0.0), "core_s": sum(j.seconds * min(j.threads, cores) for j in jobs),
            "start": start, "end": end}


# ---- calibration ----------------------------------------------------------------------------------------------

SHAPE_KEYS = ("batch_size", "context", "packing", "micro_batch", "precision", "compile", "tf32", "dropout",
              "repeats", "mask_prob", "pad_to_multiple_of", "device")


def device_name(training) -> str:
    """The device a training job of these settings gets here, with the GPU's name (a calibration key part)."""
    # deferred: torch, only when the plan forecasts
    import torch

    want = str(training.device)
    if want == "cpu" or not torch.cuda.is_available():
        return "cpu"
    index = int(want.split(":")[1]) if ":" in want else 0
    return f"cuda:{torch.cuda.get_device_name(index)}"


def cpu_model() -> str:
    """The CPU's model name (a calibration key part): /proc/cpuinfo's, else the platform's."""
    try:
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if line.lower().startswith("model name") and ":" in line:
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_load() -> dict:
    """The 1-minute load average and the cores it is shared by (None where the OS has no load average)."""
    try:
        load = round(os.getloadavg()[0], 2)
    except (OSError, AttributeError):
        load = None
    return {"load_1min": load, "cores": os.cpu_count() or 1}


def comparable_load(then: dict | None, now: dict) -> bool:
    """Whether a calibration measured under load ``then`` stands for ``now``: per core, at most
    :data:`LOAD_TOLERANCE` apart. An entry without a recorded load is not comparable."""
    if not then or then.get("load_1min") is None or now.get("load_1min") is None:
        return bool(then) and then.get("load_1min") is None and now.get("load_1min") is None
    return abs(then["load_1min"] / then["cores"] - now["load_1min"] / now["cores"]) <= LOAD_TOLERANCE


def load_text(load: dict | None) -> str:
    if not load or load.get("load_1min") is None:
        return "load unknown"
    return f"load {load['load_1min']:g} on {load['cores']} core(s)"


def calibration_key(arch: dict, training, vocab_size: int, threads: int, device: str,
                    scoring: dict | None = None) -> str:
    # deferred: torch, only when the plan forecasts
    import torch

    from ..settings import as_dict
    from ..train import loop

    material = {"v": CACHE_VERSION, "arch": arch, "vocab": int(vocab_size), "threads": int(threads),
                "device": device, "torch": torch.__version__, "machine": platform.machine(), "cpu": cpu_model(),
                "training": {k: v for k, v in as_dict(training).items() if k in SHAPE_KEYS},
                "scoring": scoring, "code": code_hash(Path(loop.__file__).parent)}
    import hashlib

    return hashlib.sha256(json.dumps(material, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _pseudo_corpus(n: int, seed: int, vocab_size: int, lengths: tuple[int, int] = (4, 14)) -> list[str]:
    """Sentences of 4-14 pseudo-words drawn Zipf-like from 3 x vocab_size random letter strings: enough distinct
    pairs for the BPE trainer to fill the configured vocabulary, so the model has the run's embedding size."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rng.choice(letters) for _ in range(rng.randint(2, 9))) for _ in range(3 * vocab_size)]
    weights = [1.0 / (r + 1) for r in range(len(words))]
    out = []
    for _ in range(n):
        k = rng.randint(*lengths)
        out.append(" ".join(rng.choices(words, weights, k=k)) + " .")
    return out


def _read_cache(path: Path) -> list[dict]:
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text())
        return [e for e in data.get("entries", []) if isinstance(e, dict)]
    except (ValueError, AttributeError):
        log.warning("%s: unreadable calibration, measuring again", path)
        return []


def cached_calibration(path: Path, now: dict) -> tuple[dict | None, str]:
    """The cached measurement of ``path`` made under the load nearest ``now`` if it is comparable
    (:func:`comparable_load`), else None and why."""
    entries = _read_cache(path)
    if not entries:
        return None, "no calibration of this arch and shapes on this CPU yet"
    usable = [e for e in entries if comparable_load(e.get("load"), now)]
    if not usable:
        then = ", ".join(load_text(e.get("load")) for e in entries)
        return None, (f"the cached calibration(s) were measured under {then}; now {load_text(now)} (more than "
                      f"{LOAD_TOLERANCE:g} a core apart): measuring again")
    per_core = (now["load_1min"] or 0.0) / now["cores"]
    best = min(usable, key=lambda e: abs((e["load"].get("load_1min") or 0.0) / e["load"]["cores"] - per_core))
    return {**best, "cached": True}, ""


def _params(arch: dict, training, vocab_size: int) -> tuple[int, str]:
    """The model's parameters (built on the meta device, no memory), or an estimate from its widths."""
    try:
        import torch

        from ..train.models import build_config, build_model

        with torch.device("meta"):
            model = build_model(arch, build_config(arch, training, vocab_size, {"bos": 0, "eos": 1, "pad": 2}))
        return int(sum(p.numel() for p in model.parameters())), "counted"
    except Exception:  # noqa: BLE001 - a family built otherwise (a learner of its own): estimated from its widths
        d, n = int(arch.get("n_embd", 128)), int(arch.get("n_layer", 2))
        h = int(arch.get("n_hidden") or arch.get("n_inner") or 4 * d)
        return int(2 * vocab_size * d + n * (4 * d * d + 2 * d * h)), "estimated from the arch's widths"


def matmul_rate(threads: int) -> float:
    """FLOP/s of a 256 x 256 float32 matrix product on ``threads`` threads, best of a few (about 0.1 s)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(max(1, threads))
    try:
        a = torch.randn(256, 256)
        best = math.inf
        for _ in range(5):
            t0 = time.process_time()
            for _ in range(20):
                a @ a
            best = min(best, time.process_time() - t0)
        return 20 * 2 * 256 ** 3 / max(best, 1e-6)
    finally:
        torch.set_num_threads(before)


# A calibration's work at its shapes, in FLOPs (6 x parameters a training token, 2 a forward token), runs at this
# fraction of matmul_rate(), plus a fixed part (two trainers' set-up, the tokenizer, the scorer's first use).
# Fitted on 5 calibrations of scripts/forecast_benchmark.py's configs (2026-12-07, a shared 2-core machine at load
# 4.5-5.3; docs/own-data.md, "Compute forecast"): in-sample there, within 2x of each; the first guess (0.1, 10 s)
# had been 2.8-5.7x high.
CAL_EFFICIENCY = 0.3
CAL_FIXED_S = 4.0


def calibration_estimate(arch: dict, training, vocab_size: int, scoring: bool = True) -> dict:
    """CPU seconds a calibration of ``arch`` at ``training``'s shapes will take here, before it starts: its FLOPs at
    :data:`CAL_EFFICIENCY` of this machine's matrix-product rate, + :data:`CAL_FIXED_S`. A GPU calibration is
    estimated as on the CPU (an upper bound)."""
    params, how = _params(arch, training, vocab_size)
    train_tokens = CALIBRATION_STEPS * int(training.batch_size) * int(training.context)
    dev_tokens = 2 * max(4 * int(training.batch_size), 64) * 12  # two evaluations of the pseudo-word dev set
    score_tokens = (8 + 2 * (16 + 128)) * 2 * 12 if scoring else 0
    flops = 6.0 * params * 2 * train_tokens + 2.0 * params * (dev_tokens + score_tokens)  # two trainers' worth
    rate = matmul_rate(int(training.threads))
    return {"params": params, "params_how": how, "flops": flops, "matmul_flops_per_s": round(rate),
            "cpu_s": round(CAL_FIXED_S + flops / (rate * CAL_EFFICIENCY), 1)}


def calibrate(arch_name: str, arch: dict, training, vocab_size: int, cache: Path, recalibrate: bool = False,
              scoring: dict | None = None) -> dict:
    """Tokens/s etc. of ``arch`` at ``training``'s shapes (and, with ``scoring``, the scorer's cost at those
    settings) on this machine, from the cache (a measurement on this CPU under a comparable load) or measured now,
    after a line saying what the measurement will cost."""
    # deferred: the trainer (torch, transformers), only when the plan forecasts
    from ..tokenizer import bpe
    from ..train.loop import Trainer

    threads = int(training.threads)
    device = device_name(training)
    key = calibration_key(arch, training, vocab_size, threads, device, scoring)
    path = cache / f"{key}.json"
    now = machine_load()
    why = "--recalibrate"
    if not recalibrate:
        entry, why = cached_calibration(path, now)
        if entry is not None:
            return entry
    estimate = calibration_estimate(arch, training, vocab_size, scoring is not None)
    busy = max(1.0, ((now["load_1min"] or 0.0) + 1.0) / now["cores"])
    log.warning("forecast: calibrating %s (%s parameters, %d steps of %d x %d tokens%s) on %s, %s: about %.0f CPU-s "
                "(~%.0f s of wall time at this load) before the forecast; %s", arch_name, f"{estimate['params']:,}",
                CALIBRATION_STEPS, training.batch_size, training.context, " + the scorer" if scoring else "", device,
                load_text(now), estimate["cpu_s"], estimate["cpu_s"] * busy, why)
    started_cpu, started_wall = time.process_time(), time.perf_counter()
    cal = {**{k: getattr(training, k) for k in training.__dataclass_fields__}}
    cal.update(max_steps=CALIBRATION_STEPS, epochs=None, warmup=0, schedule="linear", patience=10 ** 9,
               eval_every=CALIBRATION_STEPS // 2, save_every=CALIBRATION_STEPS, log_every=CALIBRATION_LOG,
               checkpoint_words=None, eval_batches=None)
    cal_training = type(training)(**cal)
    with tempfile.TemporaryDirectory(prefix="povstim-calibrate-") as tmp:
        tmp = Path(tmp)
        n_train = max(400, 4 * training.batch_size * CALIBRATION_STEPS * training.context // 40)
        lines = _pseudo_corpus(n_train, 1, vocab_size)
        write_lines(tmp / "train.txt", lines)
        write_lines(tmp / "dev.txt", _pseudo_corpus(max(4 * training.batch_size, 64), 2, vocab_size))
        tok = bpe.train(lines, {"vocab_size": int(vocab_size), "min_frequency": 1})
        bpe.save(tok, tmp / "tokenizer.json")
        kw = dict(train=str(tmp / "train.txt"), dev=str(tmp / "dev.txt"), tokenizer=str(tmp / "tokenizer.json"),
                  arch=arch, training=cal_training, seed=1, threads=threads, progress=False)
        # on the CPU the clock is the process's CPU time, not the wall: a busy shared machine slows the wall
        # clock, not the work (a GPU's time is wall time)
        clock = time.process_time if device == "cpu" else time.perf_counter
        c0, w0 = clock(), time.perf_counter()
        trainer = Trainer(out_dir=str(tmp / "model"), **kw)
        trainer.run()
        cpu_per_wall = (clock() - c0) / max(1e-9, time.perf_counter() - w0)
        # a job's fixed cost without the first-use imports (a pipeline job forks from the warm-start server,
        # which has them): a second trainer's set-up, plus the first one's final save
        c1 = clock()
        again = Trainer(out_dir=str(tmp / "again"), **kw)
        fixed = clock() - c1 + trainer.times["final"] * cpu_per_wall
        del again
        entries = [json.loads(x) for x in (tmp / "model" / "train_log.jsonl").read_text().splitlines()]
        rates = sorted(e["tokens_per_s"] for e in entries[1:] if e.get("dev_loss") is None) or \
            sorted(e["tokens_per_s"] for e in entries[1:])
        times, corpora = trainer.times, trainer.corpora
        evals = sum(1 for e in entries if e.get("dev_loss") is not None)
        dev_tokens = int(corpora.dev.n_tokens)
        saves = max(1, len(trainer.store.steps()) + evals)  # step checkpoints + new bests (each evaluation here)
        entry = {
            "arch": arch_name, "device": device, "threads": threads, "vocab_size": int(corpora.vocab_size),
            "clock": "cpu" if device == "cpu" else "wall", "cpu_per_wall": round(cpu_per_wall, 4),
            # the median log window, in seconds of the clock
            "train_tokens_per_s": rates[len(rates) // 2] / cpu_per_wall,
            "tokens_per_step": float(corpora.train.n_tokens) / max(1, corpora.train.n_items) * training.batch_size
            if not training.packing else float(training.batch_size * training.context),
            "eval_s_per_token": times["evaluation"] * cpu_per_wall / max(1, evals * dev_tokens),
            "checkpoint_s": times["checkpoints"] * cpu_per_wall / saves,
            "fixed_s": fixed, "key": key, "cached": False, "cpu_model": cpu_model(), "load": now,
        }
        if scoring is not None:
            entry.update(score_costs(tmp / "model", scoring, clock, vocab_size, tok))
    entry["cost"] = {"estimated_cpu_s": estimate["cpu_s"], "cpu_s": round(time.process_time() - started_cpu, 1),
                     "wall_s": round(time.perf_counter() - started_wall, 1), "params": estimate["params"],
                     "flops": estimate["flops"], "matmul_flops_per_s": estimate["matmul_flops_per_s"]}
    # kept beside measurements under other loads (the last 4), so that an idle and a busy machine each find theirs
    write_json(path, {"entries": (_read_cache(path) + [entry])[-4:]})
    return entry


def score_costs(model: Path, scoring: dict, clock, vocab_size: int, tokenizer=None) -> dict:
    """The real scorer (``scoring.run.score_model``, the config's scoring settings, final model only) on 16 and
    on 128 pseudo-word pairs: seconds per scored token (the difference) and per pass (a model's load, framing,
    the table; what is left at 16 pairs)."""
    # deferred: the scorer (torch, pandas), only when the plan forecasts
    from ..scoring.run import ScoringSettings, score_model
    from ..settings import build

    settings = build(ScoringSettings, "scoring", {**scoring, "checkpoints": False, "device": "cpu"})
    sents = _pseudo_corpus(256, 3, vocab_size, (4, 8))  # item-like lengths (POSH ~7 words), within any context
    times, tokens = {}, {}
    pairs_of = lambda n: [{"suite": "calibration", "paradigm": "p", "category": "c", "item_id": str(i),  # noqa: E731
                           "good": sents[2 * i], "bad": sents[2 * i + 1]} for i in range(n)]
    # untimed first: the scorer's first use (lazy imports, the first forward's allocations) once cost more than
    # 112 pairs, and the difference below then charged it per word (the French demo's score jobs forecast at 7.8x
    # their CPU time); each size's best of two runs, since one timing on a busy machine is noisy
    score_model(pairs_of(8), str(model), settings, {"arch": "calibration"}, threads=2)
    for n in (16, 128):
        pairs = pairs_of(n)
        best = math.inf
        for _ in range(2):
            c0 = clock()
            score_model(pairs, str(model), settings, {"arch": "calibration"}, threads=2)
            best = min(best, clock() - c0)
        times[n] = best
        # tokens + <s> </s> of each sentence: per token, since the pseudo-words split into more tokens than a
        # real suite's words do (the forecast multiplies by the suite's words x the corpus's tokens per word)
        sentences = [s for p in pairs for s in (p["good"], p["bad"])]
        tokens[n] = (sum(len(e.ids) for e in tokenizer.encode_batch(sentences, add_special_tokens=False))
                     if tokenizer is not None else sum(len(s.split()) for s in sentences)) + 2 * len(sentences)
    per_token = max(0.0, (times[128] - times[16]) / (tokens[128] - tokens[16]))
    return {"score_s_per_token": per_token, "score_pass_s": max(0.0, times[16] - per_token * tokens[16])}


def process_costs(cache: Path, recalibrate: bool = False) -> dict:
    """CPU seconds of a job's own process (``python -m povstim ... --help``: Python and the client that hands the
    job to the warm-start server) and of the server's imports (``warm.PRELOAD``, once per run), measured in
    subprocesses and cached by Python, torch and machine."""
    # deferred: torch (its version is part of the key), only when the plan forecasts
    import resource
    import subprocess
    import sys

    import torch

    import hashlib

    cpu = hashlib.sha256(cpu_model().encode()).hexdigest()[:8]
    key = (f"process{CACHE_VERSION}-{sys.version_info[0]}.{sys.version_info[1]}-{torch.__version__}-"
           f"{platform.machine()}-{cpu}")
    path = cache / f"{key}.json"
    if path.exists() and not recalibrate:
        try:
            return json.loads(path.read_text())
        except ValueError:
            pass
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}

    def cpu(args: list[str]) -> float:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, *args], env=env, capture_output=True, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

    out = {"job_process_s": cpu(["-m", "povstim", "train", "--help"]),
           "warm_server_s": cpu(["-c", "from povstim import warm; warm.preload()"]),
           # warm_start false: every job imports what the train and score stages import, itself
           "cold_job_s": cpu(["-c", "import povstim.cli, povstim.train.loop, povstim.scoring.run, pyarrow.parquet"])}
    write_json(path, out)
    return out


# ---- the jobs -------------------------------------------------------------------------------------------------

def tokenizer_stats(lines: list[str], tokenizer: dict, words: int, cap: int = 200_000) -> tuple[float, int]:
    """Tokens per whitespace word of a BPE tokenizer trained, as the tokenize stage trains one per condition x
    size, on a random sample of ``lines`` holding ``words`` words (at most ``cap``): a 10k-word corpus gets fewer
    merges than the whole source, so its words split into more tokens; and the vocabulary that tokenizer reaches
    (a small corpus does not fill ``tokenizer.vocab_size``, and the model's embedding and output layer are that
    size)."""
    from ..tokenizer import bpe

    rng = random.Random(1)
    order = list(range(len(lines)))
    rng.shuffle(order)
    picked, n = [], 0
    for i in order:
        if n >= min(words, cap):
            break
        picked.append(lines[i])
        n += len(lines[i].split())
    tok = bpe.train(picked, tokenizer)
    toks = sum(len(e.ids) for e in tok.encode_batch(picked))
    return toks / max(1, n), int(tok.get_vocab_size())


def train_estimate(words: int, sentences: int, tpw: float, training, cal: dict, dev_fraction: float) -> dict:
    """Steps, epochs and seconds of one training job (see the module docstring)."""
    train_words = words * (1.0 - dev_fraction)
    n_sent = max(1, int(round(sentences * (1.0 - dev_fraction))))
    tokens = train_words * tpw + n_sent  # + </s> per sentence
    if training.packing:
        items = max(1, int(tokens // training.context))
    else:
        items = n_sent * int(training.repeats)
    per_epoch = max(1, math.ceil(items / training.batch_size))
    budget = training.max_steps if training.epochs is None else min(
        training.max_steps, max(1, math.ceil(training.epochs * per_epoch)))
    # the plateau rule's best step; early stopping sees it `patience` steps later
    plateau = math.ceil(plateau_epochs(words) * per_epoch)
    found = plateau + int(training.patience)
    if training.schedule == "wsd":  # then the decay, unless the budget's own decay starts first
        reaches = found <= math.floor(budget / (1.0 + training.decay_fraction) + 1e-9)
        expected = min(budget, found + math.ceil(training.decay_fraction * found)) if reaches else budget
    else:
        reaches = found <= budget
        expected = found if reaches else budget
    dev_tokens = words * dev_fraction * tpw + sentences * dev_fraction
    if training.eval_batches is not None:
        dev_tokens = min(dev_tokens, training.eval_batches * training.batch_size * training.context)

    def seconds(steps: int) -> float:
        evals = steps // training.eval_every + 1
        saves = steps // training.save_every + evals / 2  # step checkpoints + about every other evaluation a best
        return (steps * cal["tokens_per_step"] / cal["train_tokens_per_s"] + evals * dev_tokens * cal["eval_s_per_token"]
                + saves * cal["checkpoint_s"] + cal["fixed_s"])

    return {"train_tokens": int(tokens), "batches_per_epoch": per_epoch, "budget_steps": int(budget),
            "budget_epochs": round(budget / per_epoch, 2), "plateau_steps": int(plateau),
            "plateau_epochs": round(plateau / per_epoch, 2), "patience": int(training.patience),
            "reaches_plateau": bool(reaches), "expected_steps": int(expected),
            "expected_epochs": round(expected / per_epoch, 2), "seconds": seconds(expected),
            "budget_seconds": seconds(budget)}


def suite_words_of(name: str, spec: dict, base_dir: Path, notes: list[str] | None = None) -> int:
    """Words (+ <s> and </s>) the scorer reads for one suite: both sentences of every pair. Where the pairs the
    benchmarks stage keeps cannot be counted, the whole suite is, and ``notes`` gets a line saying so."""
    notes = [] if notes is None else notes
    from . import casing

    if spec["kind"] == "generated":
        from ..benchmarks import posh

        paradigms = spec.get("paradigms") or posh.PARADIGMS
        return int(2 * len(paradigms) * int(spec["pairs_per_paradigm"]) * (7.0 + 2))  # POSH items: ~7 words
    path = spec.get("path")
    if spec["kind"] != "suite" and path and not str(path).startswith("builtin:"):
        # the pairs the benchmarks stage keeps (paradigms, pairs_per_paradigm), not the whole file: CLAMS-fr has
        # thousands of pairs a paradigm where the French demo scores 100 (its forecast was 236x the run's)
        from ..benchmarks.build import imported_pairs

        where = Path(path) if Path(path).is_absolute() else base_dir / path
        try:
            pairs = imported_pairs(name, {**spec, "path": str(where)})
        except (PovstimError, OSError, KeyError) as exc:
            pairs, why = None, f"{type(exc).__name__}: {exc}"
        if pairs is not None:
            return int(sum(len(s.split()) + 2 for p in pairs for s in (p.good, p.bad)))
    else:
        why = f"kind {spec['kind']}" + (f", path {path}" if path else ", no path")
    sents, where = casing.suite_sentences(name, spec, base_dir)
    words = int(sum(len(s.split()) + 2 for s in sents)) if sents else 0
    if sents and spec["kind"] == "suite":  # a task suite's items, read as its stage reads them
        return words
    if sents:
        notes.append(f"benchmarks.{name}: the pairs the benchmarks stage keeps could not be counted ({why}); its score "
                     f"jobs are forecast at every sentence of the suite ({len(sents):,} sentences, {where}), which "
                     "overstates them when paradigms or pairs_per_paradigm select fewer")
    else:
        notes.append(f"benchmarks.{name}: its sentences cannot be read before the run ({why}; {where}): its score "
                     "jobs are forecast at a model's load alone, without its items")
    return words


DEFAULT_TOKENS_PER_WORD = 1.3  # only where a mixture has no text to train a tokenizer on (said in the notes)


def forecast(config: dict, counts: dict, base_dir: Path, cores: int, cache: Path, recalibrate: bool = False,
             reused: dict | None = None, refused: set | None = None) -> dict:
    """The forecast for ``config`` (``counts``: the plan's cleaned sources) at ``cores``. ``reused``: (condition,
    size) -> the sibling whose models its train jobs link (a void twin with identical text,
    ``evidence.reused_models``): such a job costs a job's start, after the sibling's, not a training. ``refused``:
    (corpus, size) pairs the plan found TOO LARGE: their models are not forecast (nor calibrated for)."""
    reused, refused = reused or {}, refused or set()
    from ..train.params import resolve

    notes: list[str] = []
    every = dag_plan.models(config)
    models = [m for m in every if (config["conditions"][m.condition]["from"], m.size) not in refused]
    if len(models) < len(every):
        left = sorted({(config["conditions"][m.condition]["from"], m.size) for m in every} & refused)
        notes.append(f"{len(every) - len(models)} of {len(every)} models not forecast: "
                     + ", ".join(f"{c} {z}" for c, z in left) + " TOO LARGE for the sources (above)")
    if not models:
        return {"cores": cores, "jobs": [], "wall": 0.0, "cpu": 0.0, "calibrations": {}, "notes": notes,
                "coverage": []}
    dev_fraction = float(config["split"]["dev_fraction"])
    tok_cfg = {k: v for k, v in config["tokenizer"].items()}
    tpw, vocab = {}, {}
    for corpus, size in sorted({(config["conditions"][m.condition]["from"], m.size) for m in models}):
        srcs = dag_plan.mixture(config, corpus, size)
        lines = [line for s in srcs for line in counts[s].lines]
        if lines:
            tpw[corpus, size], vocab[corpus, size] = tokenizer_stats(lines, tok_cfg, parse_size(size))
        else:
            tpw[corpus, size] = DEFAULT_TOKENS_PER_WORD
            notes.append(f"corpus {corpus} {size}: no text to train a tokenizer on; assumed "
                         f"{DEFAULT_TOKENS_PER_WORD:g} tokens per word")
    cals, archs = {}, {}
    for arch_name in sorted({m.arch for m in models}):
        spec = config["archs"][arch_name]
        train_json = {k: v for k, v in dag_plan.training_for(config, arch_name).items()}
        arch, training = resolve(spec, train_json)
        archs[arch_name] = (arch, training)
        # at the largest vocabulary the tokenize stage will reach (a small corpus does not fill tokenizer.vocab_size:
        # an English CSV's 10k words reached ~2,500 of 8,192, and a calibration at 8,192 forecast its training 7x high)
        reached = max(vocab.values(), default=0)
        cal_vocab = min(int(config["tokenizer"]["vocab_size"]), reached) if reached else int(config["tokenizer"]["vocab_size"])
        cals[arch_name] = calibrate(arch_name, arch, training, cal_vocab, cache,
                                    recalibrate, scoring={k: v for k, v in config["scoring"].items() if k != "group"})
    proc = process_costs(cache, recalibrate)
    warm = bool(config["warm_start"])
    per_job = proc["job_process_s"] if warm else proc["cold_job_s"]
    suites = config.get("benchmarks") or {}
    suite_words = {n: suite_words_of(n, s, base_dir, notes) for n, s in suites.items()}
    scoring = config["scoring"]
    rows, jobs = [], []
    for m in models:
        arch, training = archs[m.arch]
        cal = cals[m.arch]
        corpus = config["conditions"][m.condition]["from"]
        mixture = dag_plan.mixture(config, corpus, m.size)
        words = parse_size(m.size)
        have_w = sum(counts[s].words for s in mixture)
        have_s = sum(counts[s].sentences for s in mixture)
        if have_w and have_s:
            sentences = int(round(words * have_s / have_w))
        else:
            sentences = max(1, words // 10)
            note = f"corpus {corpus} {m.size}: its sources hold no counted sentences; assumed 10 words a sentence"
            if note not in notes:
                notes.append(note)
        est = train_estimate(words, sentences, tpw[corpus, m.size], training, cal, dev_fraction)
        name = f"train {m.arch}/{m.condition}/{m.size}/seed{m.seed}"
        est["seconds"] += per_job
        est["budget_seconds"] += per_job
        twin = reused.get((m.condition, m.size))
        if twin is not None:  # train/reuse.py: it waits for the twin's model and links it
            after = (f"train {m.arch}/{twin}/{m.size}/seed{m.seed}",)
            est = {**est, "seconds": per_job, "reuses": twin}
        else:
            after = ("warm-start server",) if warm else ()
        rows.append({"job": name, "kind": "train", "threads": int(training.threads), **est})
        jobs.append(Job(name, est["seconds"], int(training.threads), after))
        passes = 1 + (est["expected_steps"] // training.save_every if scoring["checkpoints"] else 0)
        for suite, words in suite_words.items():
            secs = passes * (words * tpw[corpus, m.size] * cal["score_s_per_token"] + cal["score_pass_s"]) + per_job
            sname = f"score {m.arch}/{m.condition}/{m.size}/seed{m.seed}/{suite}"
            rows.append({"job": sname, "kind": "score", "threads": 2, "passes": passes, "seconds": secs})
            jobs.append(Job(sname, secs, 2, (name,)))
    if warm:  # the run's first jobs wait for its imports (Snakefile onstart; povstim/warm.py)
        rows.append({"job": "warm-start server", "kind": "server", "threads": 1, "seconds": proc["warm_server_s"]})
        jobs.insert(0, Job("warm-start server", proc["warm_server_s"], 1))
    sched = list_schedule(jobs, cores)
    coverage = plateau_coverage(config, models)
    short = [r for r in rows if r["kind"] == "train" and not r["reaches_plateau"] and not r.get("reuses")]
    if short:
        worst = max(short, key=lambda r: r["plateau_steps"] / r["batches_per_epoch"])
        need = math.ceil((worst["plateau_steps"] + worst["patience"]) * 1.1 / worst["batches_per_epoch"]) + 1
        late = ""
        if PLATEAU_SPREAD:  # the rule's measured spread: the epochs that cover a plateau as late as seen out of sample
            hi = PLATEAU_SPREAD[1]
            need_hi = math.ceil((worst["plateau_steps"] * hi + worst["patience"]) * 1.1 / worst["batches_per_epoch"]) + 1
            late = (f" ({need_hi} for a plateau as late as {hi:g}x the rule's, the latest measured out of sample "
                    f"relative to it)") if need_hi > need else ""
        trained = sum(r["kind"] == "train" and not r.get("reuses") for r in rows)
        notes.append(
            f"{len(short)} of {trained} training jobs cannot reach a dev-loss plateau "
            f"in their budget (training.epochs / max_steps give {min(r['budget_epochs'] for r in short):g}-"
            f"{max(r['budget_epochs'] for r in short):g} epochs; the plateau rule expects the best dev loss after "
            f"{min(r['plateau_epochs'] for r in short):g}-{max(r['plateau_epochs'] for r in short):g} epochs, then "
            f"training.patience and the decay): set training.epochs to at least {need}{late} (training.max_steps "
            f"above {max(math.ceil(need * r['batches_per_epoch']) for r in short):,}) with training.schedule: wsd; "
            f"those jobs would then take about {sum(plateau_seconds(r) for r in short):,.0f} s in all, instead of "
            f"{sum(r['seconds'] for r in short):,.0f}"
            + (f" (the plateau rule is an extrapolation here: {'; '.join(coverage)})" if coverage else ""))
    # a job's seconds are CPU-seconds (the CPU clock; a GPU job's are wall): the schedule takes each as the job's
    # duration, i.e. as if its extra threads did not shorten it (tiny models barely use a second thread)
    cpu = sum(j.seconds for j in jobs)
    return {"cores": cores, "jobs": rows, "wall": sched["wall"], "cpu": cpu, "calibrations": cals,
            "process": proc, "tokens_per_word": {f"{c}/{z}": round(v, 4) for (c, z), v in tpw.items()}, "notes": notes,
            "coverage": coverage, "load": machine_load(), "cpu_model": cpu_model()}


def plateau_seconds(row: dict) -> float:
    """A training row's seconds if it ran to its plateau, early stopping's patience and a 10% decay, at the
    seconds per step of its budget."""
    per_step = row["budget_seconds"] / max(1, row["budget_steps"])
    return per_step * (row["plateau_steps"] + row["patience"]) * 1.1


def render(result: dict) -> list[str]:
    if not result:
        return []
    if not result.get("jobs"):
        return ["", "Compute forecast:"] + [f"  -> {n}" for n in result.get("notes", [])] if result.get("notes") else []
    lines = ["", f"Compute forecast (this machine; --cores {result['cores']}):"]
    for name, c in result["calibrations"].items():
        cost = c.get("cost") or {}
        how = (" (cached)" if c.get("cached") else
               f" (measured now: {cost['cpu_s']:,.0f} CPU-s, estimated {cost['estimated_cpu_s']:,.0f})" if cost else "")
        lines.append(f"  calibration {name}: {c['train_tokens_per_s']:,.0f} training tokens/s on {c['device']} "
                     f"({c['threads']} thread(s)) of {c.get('cpu_model', '?')}, under {load_text(c.get('load'))}{how}")
    spread = (f"; out of sample the best epochs were {PLATEAU_SPREAD[0]:g}-{PLATEAU_SPREAD[1]:g}x the rule's, and "
              f"{PLATEAU_UNREACHED}" if PLATEAU_SPREAD else "")
    lines.append("  it covers: this config's shapes on this CPU at a comparable load (the job's seconds); the steps "
                 f"come from the plateau rule, fitted on {plateau_fit_text()} (in-sample there{spread})")
    if result.get("coverage"):
        lines.append("  -> NOTE: this config is outside the plateau rule's fit: " + "; ".join(result["coverage"])
                     + ": its steps and the NO PLATEAU advice are an extrapolation")
    for r in result["jobs"]:
        if r["kind"] == "train" and r.get("reuses"):
            lines.append(f"  {r['job']:<44} not trained: links {r['reuses']}'s model (identical corpus) "
                         f"{r['seconds']:>8.1f} s")
        elif r["kind"] == "train":
            plateau = "" if r["reaches_plateau"] else "   <- NO PLATEAU in budget"
            lines.append(f"  {r['job']:<44} {r['expected_steps']:>6,} steps {r['expected_epochs']:>6.2f} epochs "
                         f"(budget {r['budget_steps']:,}) {r['seconds']:>8.1f} s{plateau}")
    scores = [r for r in result["jobs"] if r["kind"] == "score"]
    if scores:
        lines.append(f"  {len(scores)} score jobs: {sum(r['seconds'] for r in scores):,.1f} s in all "
                     f"({min(r['seconds'] for r in scores):.1f}-{max(r['seconds'] for r in scores):.1f} s each)")
    for r in result["jobs"]:
        if r["kind"] == "server":
            lines.append(f"  warm-start server's imports (once, before the first job): {r['seconds']:.1f} s")
    lines.append(f"  training + scoring: {result['cpu']:,.0f} CPU-s; wall time at --cores {result['cores']}: "
                 f"{result['wall']:,.0f} s ({result['wall'] / 60:.1f} min; the other stages not included)")
    lines += [f"  -> WARNING: {n}" for n in result["notes"]]
    return lines


def cache_dir(repo: Path) -> Path:
    """resources/forecast/ of the repository (the pipeline's shared caches), or POVSTIM_FORECAST_CACHE."""
    return Path(os.environ.get("POVSTIM_FORECAST_CACHE") or repo / "resources" / "forecast")
