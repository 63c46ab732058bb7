"""The experiment plan: which corpora, conditions, models and scores a config asks for.

The Snakefile stays thin by asking this module for every list of targets.
"""

from __future__ import annotations

from dataclasses import dataclass

from .io import PovstimError


@dataclass(frozen=True)
class Model:
    arch: str
    condition: str
    size: str
    seed: int

    @property
    def path(self) -> str:
        return f"{self.arch}/{self.condition}/{self.size}/seed{self.seed}"


def sizes(config: dict) -> list[str]:
    return [str(s) for s in config["sizes"]]


def condition_sizes(config: dict, condition: str) -> list[str]:
    allowed = config["conditions"][condition].get("sizes")
    return [s for s in sizes(config) if not allowed or s in [str(a) for a in allowed]]


def mixture(config: dict, corpus: str, size: str) -> dict[str, float]:
    """Source shares of ``corpus`` at ``size``.

    A share is either one number for every size or a mapping size -> number
    (POSH Table 2 mixes its sources differently at each size); sources whose
    share at this size is 0 are left out.
    """
    out = {}
    for source, share in config["corpora"][corpus]["mixture"].items():
        if isinstance(share, dict):
            by_size = {str(k): v for k, v in share.items()}
            if str(size) not in by_size:
                raise PovstimError(
                    f"corpora.{corpus}.mixture.{source} gives shares per size but none for size {size} "
                    f"(it has {', '.join(by_size)})"
                )
            share = by_size[str(size)]
        if share > 0:
            out[source] = share
    if not out:
        raise PovstimError(f"corpora.{corpus}.mixture has no source with a share above 0 at size {size}")
    return out


def models(config: dict) -> list[Model]:
    out = []
    for arch, spec in config["archs"].items():
        arch_sizes = [str(s) for s in spec.get("sizes") or []]
        for condition in config["conditions"]:
            for size in condition_sizes(config, condition):
                if arch_sizes and size not in arch_sizes:
                    continue
                for seed in config["seeds"]:
                    out.append(Model(arch, condition, size, int(seed)))
    return out


def filtered_corpora(config: dict) -> list[tuple[str, str]]:
    """(corpus, size) pairs that some condition filters, so they need parsing."""
    pairs = []
    for condition, spec in config["conditions"].items():
        if spec.get("filter"):
            for size in condition_sizes(config, condition):
                pair = (spec["from"], size)
                if pair not in pairs:
                    pairs.append(pair)
    return pairs


def condition_meta(config: dict) -> dict[str, dict]:
    """What the analysis needs to know about each condition (POSH Table 12 predictors).

    ``filtered`` is true only when DPE is removed and not put back (BABY-F);
    ``source`` is the corpus the condition is built from (baby vs wiki).
    """
    meta = {}
    for name, spec in config["conditions"].items():
        meta[name] = {
            "source": spec["from"],
            "filtered": bool(spec.get("filter")) and not spec.get("reinsert"),
        }
    return meta


def suites(config: dict) -> list[str]:
    return list(config.get("benchmarks", {}))


def training_for(config: dict, arch: str) -> dict:
    """The training section with the arch's own ``training:`` overrides applied."""
    return {**config.get("training", {}), **(config["archs"][arch].get("training") or {})}


def train_gpus(config: dict, arch: str, env=None, dev_dir: str = "/dev") -> int:
    """``gpu`` resource units of one training job of this arch (see povstim.devices.job_gpus)."""
    from .devices import job_gpus

    return job_gpus(training_for(config, arch).get("device"), env, dev_dir)


def train_threads(config: dict, arch: str) -> int:
    return int(training_for(config, arch)["threads"])


def parse_gpus(config: dict, env=None, dev_dir: str = "/dev") -> int:
    """Only stanza parses on a GPU."""
    from .devices import job_gpus

    parser = config.get("parser", {})
    return job_gpus(parser.get("device"), env, dev_dir) if parser.get("backend") == "stanza" else 0


def score_gpus(config: dict, env=None, dev_dir: str = "/dev") -> int:
    from .devices import job_gpus

    return job_gpus(config.get("scoring", {}).get("device"), env, dev_dir)
