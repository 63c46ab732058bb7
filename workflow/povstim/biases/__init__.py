"""Cognitively motivated inductive biases (POSH-BENCH §7, Experiment 3) as properties of an arch.

An ``archs:`` entry may carry a ``bias:`` block with any of

* ``dyck``    weak hierarchical bias: pre-pretrain on a shuffled k-Dyck language
              (Hu et al. 2025) for ``steps`` steps, then train on the condition with the
              same model (:mod:`povstim.formal`);
* ``tpt``     strong structural bias: Tree-Planted Transformer (Yoshida et al. 2024), attention
              heads supervised towards dependency-tree distances (:mod:`povstim.biases.tpt`);
* ``recency`` dynamic recency bias ``r^t · b_i`` in every attention head (Mita et al. 2025),
              trained as the ``gpt2-recency`` family (:mod:`povstim.biases.recency`).

Biases compose (``dyck`` + ``recency`` is POSH's fourth condition). This module holds the
config-level logic: labels for the analysis, the effective model family, cross-field checks
run at config load (before any job), and the DAG plan of the Dyck pre-pretraining nodes.
It imports nothing heavy, so the Snakefile can use it at DAG-build time.
"""

from __future__ import annotations

import hashlib
import json

from ..io import PovstimError

BIASES = ("dyck", "tpt", "recency")  # label order
# the plain model; sorts after every bias name, so it is the last level (the reference of
# treatment contrasts, the implicit level of sum contrasts) of the analysis factor
NONE = "vanilla"
# family -> its recency variant (an arch with bias.recency trains the variant)
RECENCY_VARIANT = {"gpt2": "gpt2-recency", "gpt2-recency": "gpt2-recency"}
# family -> the plain family whose weights it shares (the Dyck phase trains the plain body)
BASE_FAMILY = {"gpt2-recency": "gpt2"}
# BPE special tokens come first in every povstim tokenizer (<s> <pad> </s> <unk> <mask>): Dyck
# symbol s is token id s + N_SPECIAL, so it never collides with a special token.
N_SPECIAL = 5


def of(arch: dict) -> dict:
    """The arch's bias block ({} when it has none)."""
    return dict(arch.get("bias") or {})


def label(arch: dict) -> str:
    """The analysis predictor: 'vanilla', 'dyck', 'tpt', 'recency', 'dyck+recency', …"""
    bias = of(arch)
    return "+".join(b for b in BIASES if b in bias) or NONE


def arch_meta(config: dict) -> dict[str, dict]:
    """What the analysis needs to know about each arch (the ``bias`` predictor of Exp. 3)."""
    return {name: {"bias": label(spec)} for name, spec in config.get("archs", {}).items()}


def resolve(arch: dict, where: str = "arch") -> dict:
    """The arch with its effective family: ``gpt2`` + ``bias.recency`` trains ``gpt2-recency``."""
    bias = of(arch)
    if "recency" in bias:
        fam = arch.get("family")
        if fam not in RECENCY_VARIANT:
            raise PovstimError(
                f"{where}.bias.recency: family {fam!r} has no recency variant "
                f"(the dynamic recency bias is implemented for {', '.join(sorted(RECENCY_VARIANT))})"
            )
        return {**arch, "family": RECENCY_VARIANT[fam]}
    if arch.get("family") in BASE_FAMILY:
        raise PovstimError(f"{where}: family {arch['family']} needs a bias.recency block (the decay rate r)")
    return dict(arch)


def needs_inputs(arch: dict) -> bool:
    """Whether training this arch needs more than the condition (a Dyck checkpoint, parses)."""
    return bool({"dyck", "tpt"} & set(of(arch)))


# --------------------------------------------------------------------------- config checks

def check_config(config: dict, source: str = "config") -> None:
    """Cross-field checks of every arch's bias block; raise PovstimError naming the key."""
    from .. import families, plan
    from ..train.params import merged_training

    archs = config.get("archs", {})
    vocab = int((config.get("tokenizer") or {}).get("vocab_size", 0) or 0)
    for name, arch in archs.items():
        bias = of(arch)
        where = f"archs.{name}"
        if not bias and arch.get("family") not in BASE_FAMILY:
            continue
        unknown = sorted(set(bias) - set(BIASES))
        if unknown:
            raise PovstimError(f"{source}: {where}.bias.{unknown[0]}: unknown bias (known: {', '.join(BIASES)})")
        try:
            eff = resolve(arch, where)
            fam = families.get(eff["family"], f"{where}.family")
        except PovstimError as exc:
            raise PovstimError(f"{source}: {exc}") from None
        if not fam.causal:
            raise PovstimError(f"{source}: {where}.bias: inductive biases need a causal (GPT-2) family; "
                               f"{arch['family']} is a masked LM")
        full = families.resolve_arch(eff, where)
        training = merged_training(config.get("training"), arch)
        if "recency" in bias:
            r = (bias["recency"] or {}).get("r")
            if not isinstance(r, (int, float)) or isinstance(r, bool) or not 0 < r < 1:
                raise PovstimError(f"{source}: {where}.bias.recency.r must be in (0, 1) (the decay rate), got {r!r}")
        if "dyck" in bias:
            _check_dyck(bias["dyck"] or {}, full, training, vocab, f"{where}.bias.dyck", source)
        if "tpt" in bias:
            _check_tpt(config, name, arch, bias["tpt"] or {}, full, training, f"{where}.bias.tpt", source, plan)


def _check_dyck(spec: dict, arch: dict, training: dict, vocab: int, where: str, source: str) -> None:
    k = spec.get("k")
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise PovstimError(f"{source}: {where}.k must be an integer >= 1 (bracket types), got {k!r}")
    if vocab and 2 * k + N_SPECIAL > vocab:
        raise PovstimError(
            f"{source}: {where}.k = {k} needs {2 * k} bracket tokens plus {N_SPECIAL} special tokens, more than "
            f"tokenizer.vocab_size ({vocab}): the Dyck symbols share the natural-language vocabulary (Hu et al.)"
        )
    length = spec.get("length") or training.get("context")
    n_pos = arch.get("n_positions") or training.get("context")
    if length and n_pos and length > n_pos:
        raise PovstimError(f"{source}: {where}.length ({length}) exceeds the model's {n_pos} positions")
    if spec.get("complete") and length and length % 2:
        raise PovstimError(f"{source}: {where}.complete needs an even sequence length, got {length}")


def _check_tpt(config, name, arch, spec, full, training, where, source, plan) -> None:
    n_layer, n_head = full["n_layer"], full["n_head"]
    for layer in spec.get("layers") or []:
        if not -n_layer <= int(layer) < n_layer:
            raise PovstimError(f"{source}: {where}.layers: layer {layer} does not exist ({n_layer} layers; "
                               f"-1 = the last)")
    for head in spec.get("heads") or []:
        if not 0 <= int(head) < n_head:
            raise PovstimError(f"{source}: {where}.heads: head {head} does not exist ({n_head} heads)")
    if training.get("packing") is not False:
        raise PovstimError(
            f"{source}: {where} supervises attention within one sentence, so it needs sentence-level input: "
            f"set training.packing: false (or archs.{name}.training.packing: false)"
        )
    parser = tpt_parser(config, arch)
    backend = parser["backend"]
    if backend == "stanza" and not parser.get("model_dir"):
        raise PovstimError(f"{source}: {where}.parser is stanza, which needs parser.model_dir (the stanza models)")
    if backend != "gold":
        return
    synthetic = {s for s, v in config.get("sources", {}).items() if v.get("kind") == "synthetic"}
    for cond, size in arch_conditions(config, name):
        corpus = config["conditions"][cond]["from"]
        real = [s for s in plan.mixture(config, corpus, size) if s not in synthetic]
        if real:
            raise PovstimError(
                f"{source}: {where} needs a dependency parse of every training sentence, but the gold parser "
                f"only has parses of synthetic sources and condition {cond!r} at {size} uses {', '.join(real)}; "
                f"set {where}.parser: spacy (POSH §7) or stanza"
            )


def arch_conditions(config: dict, name: str) -> list[tuple[str, str]]:
    """(condition, size) pairs this arch is trained on."""
    from .. import plan

    seen = []
    for m in plan.models(config):
        if m.arch == name and (m.condition, m.size) not in seen:
            seen.append((m.condition, m.size))
    return seen


# --------------------------------------------------------------------------- TPT parses

def tpt_parser(config: dict, arch: dict) -> dict:
    """The parser: section the TPT parse uses (``bias.tpt.parser`` overrides the backend)."""
    parser = dict(config.get("parser") or {})
    backend = ((of(arch).get("tpt") or {}).get("parser"))
    if backend:
        parser["backend"] = backend
    return parser


# --------------------------------------------------------------------------- Dyck plan

def _hash(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:12]


def dyck_corpus_spec(spec: dict, training: dict) -> dict:
    """Every setting that decides the Dyck corpus, resolved (length, number of sequences)."""
    length = spec.get("length") or training["context"]
    sequences = spec.get("sequences") or int(spec["steps"]) * int(training["batch_size"])
    return {
        "k": spec["k"], "length": int(length), "p_open": spec["p_open"], "max_depth": spec["max_depth"],
        "complete": bool(spec["complete"]), "sequences": int(sequences),
        "dev_sequences": int(spec["dev_sequences"]), "seed": int(spec["seed"]),
    }


def dyck_setup(config: dict, name: str) -> dict:
    """The Dyck corpus and checkpoint an arch with ``bias.dyck`` needs, with their ids.

    The checkpoint depends on the model body (the plain family: the Dyck phase trains
    no other bias), the vocabulary size, the Dyck corpus, the training settings and
    the Dyck seed, and nothing else: every seed, condition and arch that asks for the
    same thing shares one checkpoint (e.g. the ``dyck`` and ``dyck+recency`` archs).
    """
    from ..train.params import merged_training

    arch = config["archs"][name]
    spec = of(arch)["dyck"]
    training = {k: v for k, v in merged_training(config.get("training"), arch).items() if k != "threads"}
    corpus = dyck_corpus_spec(spec, training)
    corpus_id = f"k{corpus['k']}-{_hash(corpus)}"
    body = {k: v for k, v in arch.items() if k not in ("bias", "sizes", "training")}
    body["family"] = BASE_FAMILY.get(body["family"], body["family"])
    model = {
        "arch": body, "training": training, "steps": int(spec["steps"]), "seed": int(spec["seed"]),
        "vocab_size": int(config["tokenizer"]["vocab_size"]), "corpus": corpus_id,
    }
    return {"corpus": corpus, "corpus_id": corpus_id, "model": model, "model_id": f"{corpus_id}-{_hash(model)}"}


def dyck_plan(config: dict) -> dict:
    """{'corpora': {corpus_id: spec}, 'models': {model_id: setup}, 'archs': {arch: model_id}}."""
    out = {"corpora": {}, "models": {}, "archs": {}}
    for name, arch in config.get("archs", {}).items():
        if "dyck" in of(arch):
            s = dyck_setup(config, name)
            out["corpora"][s["corpus_id"]] = s["corpus"]
            out["models"][s["model_id"]] = s["model"]
            out["archs"][name] = s["model_id"]
    return out
