"""The bias blocks of a config (Experiment 3): their cross-field checks and the Dyck pre-pretraining plan.

These read the family registry (which family an arch with a bias trains, its default sizes, whether it is
causal), the training settings (an arch's own ``training:`` overrides) and the DAG plan (which conditions
an arch trains on), so they live above all three; the bias facts they read are :mod:`povstim.biases`.
``povstim.config`` runs :func:`check_config` at config load (before any job), and the Snakefile's
``rules/biases.smk`` takes the Dyck nodes from :func:`dyck_plan`.
"""

from __future__ import annotations

import hashlib
import json

from .. import biases, families, plan
from ..io import PovstimError
from .params import effective_arch, merged_training


def check_config(config: dict, source: str = "config") -> None:
    """Cross-field checks of every arch's bias block; raise PovstimError naming the key."""
    archs = config.get("archs", {})
    vocab = int((config.get("tokenizer") or {}).get("vocab_size", 0) or 0)
    for name, arch in archs.items():
        bias = biases.of(arch)
        where = f"archs.{name}"
        family = families.FAMILIES.get(arch.get("family"))
        if not bias and not (family and family.base):
            continue
        unknown = sorted(set(bias) - set(biases.BIASES))
        if unknown:
            raise PovstimError(f"{source}: {where}.bias.{unknown[0]}: unknown bias (known: {', '.join(biases.BIASES)})")
        try:
            eff = effective_arch(arch, where)
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
            _check_tpt(config, name, arch, bias["tpt"] or {}, full, training, f"{where}.bias.tpt", source)


def _check_dyck(spec: dict, arch: dict, training: dict, vocab: int, where: str, source: str) -> None:
    k = spec.get("k")
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise PovstimError(f"{source}: {where}.k must be an integer >= 1 (bracket types), got {k!r}")
    if vocab and 2 * k + biases.N_SPECIAL > vocab:
        raise PovstimError(
            f"{source}: {where}.k = {k} needs {2 * k} bracket tokens plus {biases.N_SPECIAL} special tokens, more than "
            f"tokenizer.vocab_size ({vocab}): the Dyck symbols share the natural-language vocabulary (Hu et al.)"
        )
    length = spec.get("length") or training.get("context")
    n_pos = arch.get("n_positions") or training.get("context")
    if length and n_pos and length > n_pos:
        raise PovstimError(f"{source}: {where}.length ({length}) exceeds the model's {n_pos} positions")
    if spec.get("complete") and length and length % 2:
        raise PovstimError(f"{source}: {where}.complete needs an even sequence length, got {length}")


def _check_tpt(config, name, arch, spec, full, training, where, source) -> None:
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
    parser = biases.tpt_parser(config, arch)
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
    seen = []
    for m in plan.models(config):
        if m.arch == name and (m.condition, m.size) not in seen:
            seen.append((m.condition, m.size))
    return seen


# --------------------------------------------------------------------------- Dyck plan

def _hash(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:12]


def dyck_setup(config: dict, name: str) -> dict:
    """The Dyck corpus and checkpoint an arch with ``bias.dyck`` needs, with their ids.

    The checkpoint depends on the model body (the plain family: the Dyck phase trains
    no other bias), the vocabulary size, the Dyck corpus, the training settings and
    the Dyck seed, and nothing else: every seed, condition and arch that asks for the
    same thing shares one checkpoint (e.g. the ``dyck`` and ``dyck+recency`` archs).
    """
    arch = config["archs"][name]
    spec = biases.of(arch)["dyck"]
    training = {k: v for k, v in merged_training(config.get("training"), arch).items() if k != "threads"}
    corpus = biases.dyck_corpus_spec(spec, training)
    corpus_id = f"k{corpus['k']}-{_hash(corpus)}"
    body = {k: v for k, v in arch.items() if k not in ("bias", "sizes", "training")}
    body["family"] = families.get(body["family"]).base or body["family"]
    model = {
        "arch": body, "training": training, "steps": int(spec["steps"]), "seed": int(spec["seed"]),
        "vocab_size": int(config["tokenizer"]["vocab_size"]), "corpus": corpus_id,
    }
    return {"corpus": corpus, "corpus_id": corpus_id, "model": model, "model_id": f"{corpus_id}-{_hash(model)}"}


def dyck_plan(config: dict) -> dict:
    """{'corpora': {corpus_id: spec}, 'models': {model_id: setup}, 'archs': {arch: model_id}}."""
    out = {"corpora": {}, "models": {}, "archs": {}}
    for name, arch in config.get("archs", {}).items():
        if "dyck" in biases.of(arch):
            s = dyck_setup(config, name)
            out["corpora"][s["corpus_id"]] = s["corpus"]
            out["models"][s["model_id"]] = s["model"]
            out["archs"][name] = s["model_id"]
    return out
