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
facts about bias blocks that the rest of povstim reads: labels for the analysis, the TPT parser,
the Dyck corpus settings. It imports nothing heavy and nothing above it, so the Snakefile can use
it at DAG-build time. Which family an arch with a bias trains is the family registry's
(``povstim.families``: ``Family.variants``), read by :func:`povstim.train.params.effective_arch`;
the config checks of bias blocks and the Dyck pre-pretraining plan, which need the registry,
the training settings and the DAG plan, are :mod:`povstim.train.bias_plan`.
"""

from __future__ import annotations

BIASES = ("dyck", "tpt", "recency")  # label order
# the plain model; sorts after every bias name, so it is the last level (the reference of
# treatment contrasts, the implicit level of sum contrasts) of the analysis factor
NONE = "vanilla"
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
    """What the analysis needs to know about each arch: the ``bias`` predictor of Exp. 3, and ``ordered: true``
    for an arch that trains in corpus order (``training.ordered``, its own block or the section's; absent when
    false, so a config without ordered training passes what it always did; povstim.analysis.archs)."""
    out = {}
    for name, spec in config.get("archs", {}).items():
        out[name] = {"bias": label(spec)}
        if {**(config.get("training") or {}), **((spec or {}).get("training") or {})}.get("ordered"):
            out[name]["ordered"] = True
    return out


# --------------------------------------------------------------------------- TPT parses

def tpt_parser(config: dict, arch: dict) -> dict:
    """The parser: section the TPT parse uses (``bias.tpt.parser`` overrides the backend)."""
    parser = dict(config.get("parser") or {})
    backend = ((of(arch).get("tpt") or {}).get("parser"))
    if backend:
        parser["backend"] = backend
    return parser


# --------------------------------------------------------------------------- Dyck corpus

def dyck_corpus_spec(spec: dict, training: dict) -> dict:
    """Every setting that decides the Dyck corpus, resolved (length, number of sequences)."""
    length = spec.get("length") or training["context"]
    sequences = spec.get("sequences") or int(spec["steps"]) * int(training["batch_size"])
    return {
        "k": spec["k"], "length": int(length), "p_open": spec["p_open"], "max_depth": spec["max_depth"],
        "complete": bool(spec["complete"]), "sequences": int(sequences),
        "dev_sequences": int(spec["dev_sequences"]), "seed": int(spec["seed"]),
    }
