"""Loading and validating an experiment config: the schema (povstim.schema), with its defaults
filled in, plus the cross-section checks a JSON schema cannot express, all before any job runs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from . import dpe, families, languages, plan
from .benchmarks import importers
from .benchmarks.suite import POSH_CATEGORIES
from .conditions import operations
from .constructions import library as constructions
from .constructions.targets import SUITE_FILES, check_targets, paradigms_in
from .filter.settings import removal_rules as _removal_rules
from .filter.validate import check_measured_on
from .io import PovstimError, load_yaml, project_path
from .probes.settings import check_probes
from .schema import RESERVED_EXPERIMENTS, describe_errors, load_schema  # noqa: F401 (re-exported)
from .settings import validator
from .train import bias_plan
from .train.params import check_training, merged_training


def validate(config: dict, source: str = "config") -> dict:
    """Validate the config and fill in the schema's defaults (in place); raise PovstimError naming a bad key.

    After this, every section and key that has a default in the schema is present:
    the schema is the only place a default is written (see povstim.settings).
    """
    schema = load_schema()
    errors = list(validator(schema, fill=True).iter_errors(config))
    if errors:
        # `source` names the config file(s) ("a.yaml, b.yaml" from the Snakefile): a bad key's line is found there
        files = [f for f in source.split(", ") if Path(f).is_file()]
        raise PovstimError(describe_errors(errors, schema, source, key_locator(files) if files else None))
    try:
        operations.expand_dose(config)  # a dose series becomes one condition per rate, before every check
        operations.expand_placebo(config)  # so do placebo conditions, one per draw
        check_references(config, source)
    except PovstimError as exc:
        raise PovstimError(_with_line(str(exc), config, source)) from None
    return config


def _with_line(message: str, config: dict, source: str) -> str:
    """A cross-section error "SOURCE: corpora.baby.mixture names ..." as "FILE:LINE: corpora.baby.mixture names ...":
    the line of the first config key it names (or of its nearest enclosing key in the file)."""
    files = [f for f in source.split(", ") if Path(f).is_file()]
    if not files or not message.startswith(f"{source}: "):
        return message
    rest = message[len(source) + 2:]
    locate = key_locator(files)
    # a key with list items ("filter.constructions[0].patterns[1].nodes.subj") is found to its own line
    for m in re.finditer(r"(?<![\w.-])[A-Za-z_][\w-]*(?:\.[\w-]+|\[\d+\])*", rest):
        path = tuple(int(p[1:-1]) if p.startswith("[") else p
                     for p in re.findall(r"\[\d+\]|[^.\[\]]+", m.group()))
        if path[0] in config and (where := locate(path)):
            return f"{where}: {rest}"
    return message


def known_paradigms(config: dict) -> dict[str, frozenset]:
    """The paradigm names a construction's ``targets`` are checked against: POSH-BENCH's (generated, always
    known) and those of the BLiMP / Zorro folders the config's benchmarks name (a suite whose folder is
    absent is not checked)."""
    known: dict[str, frozenset] = {"posh": frozenset(POSH_CATEGORIES)}
    for bench in config.get("benchmarks", {}).values():
        kind, path = bench.get("kind"), bench.get("path")
        if kind in SUITE_FILES and path:
            folder = project_path(path)
            got = paradigms_in(folder, kind)
            if got:
                known[kind] = known.get(kind, frozenset()) | got
    return known


def check_references(config: dict, source: str = "config") -> None:
    """Cross-section checks a JSON schema cannot express."""
    if config.get("experiment") in RESERVED_EXPERIMENTS:
        raise PovstimError(f"{source}: experiment name {config['experiment']!r} is reserved "
                           f"(results/{config['experiment']} is the index of the last run); choose another")
    sources = config.get("sources", {})
    corpora = config.get("corpora", {})
    for name, corpus in corpora.items():
        for src in corpus.get("mixture", {}):
            if src not in sources:
                raise PovstimError(
                    f"{source}: corpora.{name}.mixture names source '{src}', which is not under sources "
                    f"(known: {', '.join(sorted(sources))})"
                )
    sizes = [str(s) for s in config.get("sizes", [])]
    for name, corpus in corpora.items():
        for src, share in corpus.get("mixture", {}).items():
            if isinstance(share, dict):
                for size in share:
                    if str(size) not in sizes:
                        raise PovstimError(
                            f"{source}: corpora.{name}.mixture.{src} names size '{size}', which is not in sizes"
                        )
    for name in corpora:
        for size in sizes:
            try:
                plan.mixture(config, name, size)
            except PovstimError as exc:
                raise PovstimError(f"{source}: {exc}") from None
    filter_rules = config.get("filter", {}).get("rules")
    try:  # the user's declarative constructions join the registry before any name is checked
        user = constructions.use(config.get("filter"))
        # their targets must be paradigms of their suites (the library's: tests/test_constructions.py)
        check_targets(user, known_paradigms(config))
    except PovstimError as exc:
        raise PovstimError(f"{source}: {exc}") from None
    if filter_rules is not None:
        try:
            dpe.check_rules(filter_rules, "filter.rules")
        except PovstimError as exc:
            raise PovstimError(f"{source}: {exc}") from None
    for name, cond in config.get("conditions", {}).items():
        if isinstance(cond.get("filter"), list):
            try:
                dpe.check_rules(cond["filter"], f"conditions.{name}.filter")
            except PovstimError as exc:
                raise PovstimError(f"{source}: {exc}") from None
            constructions.warn_untargeted(cond["filter"])
        for phen in cond.get("reinsert") or {}:
            if isinstance(cond.get("filter"), list) and phen not in cond["filter"]:
                raise PovstimError(
                    f"{source}: conditions.{name}.reinsert.{phen}: {phen!r} is not in the condition's filter list "
                    f"({', '.join(cond['filter'])}), so there is no removed evidence to put back"
                )
            if isinstance(cond.get("filter"), list):
                continue
            if filter_rules is not None and phen not in filter_rules:
                raise PovstimError(
                    f"{source}: conditions.{name}.reinsert.{phen}: {phen!r} is not filtered (filter.rules is "
                    f"{', '.join(filter_rules)}), so there is no removed evidence to put back"
                )
    try:
        plan.check_shared_tokenizer(config)
    except PovstimError as exc:
        raise PovstimError(f"{source}: {exc}") from None
    try:  # corpus operations: random_remove's condition, replace's variant, known constructions (the filter
        # runs every construction they name: filter.settings.filter_rules)
        operations.check(config.get("conditions", {}), list(_removal_rules(config)))
    except PovstimError as exc:
        raise PovstimError(f"{source}: {exc}") from None
    parser = config.get("parser", {})
    if parser.get("backend") == "childes" and not parser.get("childes_model") and not parser.get("childes_treebank"):
        raise PovstimError(
            f"{source}: parser.backend is 'childes' but neither parser.childes_treebank (gold UD trees to train "
            "it on, e.g. ../shared/data/ud_childes/gold_train) nor parser.childes_model (a folder written by "
            "povstim train-parser) is set"
        )
    if parser.get("backend") == "childes" and config["language"] != "en":  # filled by the schema
        raise PovstimError(f"{source}: parser.backend 'childes' is an English parser (UD_English-CHILDES), but "
                           f"language is {config['language']!r}")
    if config.get("filter_validation"):
        fv = config["filter_validation"]
        check_measured_on(fv.get("treebank"), fv.get("labels"), fv.get("texts"), source)
    if config.get("filter_validation") and config.get("parser", {}).get("backend") == "gold":
        raise PovstimError(
            f"{source}: filter_validation measures the filter on a real parser's output, but parser.backend is "
            "'gold' (the synthetic sources' own trees): set parser.backend to spacy, childes or stanza, or drop "
            "filter_validation"
        )
    for name, cond in config.get("conditions", {}).items():
        if cond["from"] not in corpora:
            raise PovstimError(
                f"{source}: conditions.{name}.from is '{cond['from']}', which is not under corpora "
                f"(known: {', '.join(sorted(corpora))})"
            )
    known_archs = set(config.get("archs", {}))
    if "training" in config:
        check_training(config["training"], "training")
    for name, arch in config.get("archs", {}).items():
        try:  # cross-field checks (n_embd divisible by n_head, ...) before any job runs
            families.resolve_arch(arch, f"archs.{name}")
            check_training(merged_training(config.get("training"), arch), f"archs.{name}.training")
        except PovstimError as exc:
            raise PovstimError(f"{source}: {exc}") from None
        for size in arch.get("sizes", []) or []:
            if str(size) not in [str(s) for s in config.get("sizes", [])]:
                raise PovstimError(f"{source}: archs.{name}.sizes names size '{size}', which is not in sizes")
        for cond in arch.get("conditions", []) or []:
            if cond not in config.get("conditions", {}):
                raise PovstimError(f"{source}: archs.{name}.conditions names condition '{cond}', which is not "
                                   f"under conditions (known: {', '.join(sorted(config.get('conditions', {})))})")
    for suite in config.get("benchmarks", {}):
        try:  # vocabulary: corpus needs a parsed corpus
            plan.benchmark_vocabulary(config, suite)
        except PovstimError as exc:
            raise PovstimError(f"{source}: {exc}") from None
    try:  # a suite in another language than the training corpora measures nothing the models learned
        check_suite_languages(config)
    except PovstimError as exc:
        raise PovstimError(f"{source}: {exc}") from None
    try:  # scoring.metric: region needs a suite kind that gives regions; external models' names and corpora
        plan.check_scoring_metrics(config)
        plan.check_external_models(config)
    except PovstimError as exc:
        raise PovstimError(f"{source}: {exc}") from None
    for name, cond in config.get("conditions", {}).items():
        for size in cond.get("sizes", []) or []:
            if str(size) not in [str(s) for s in config.get("sizes", [])]:
                raise PovstimError(f"{source}: conditions.{name}.sizes names size '{size}', which is not in sizes")
    if not known_archs:
        raise PovstimError(f"{source}: archs is empty: name at least one architecture")
    check_probes(config, source)
    bias_plan.check_config(config, source)  # Exp. 3 bias blocks: unknown bias, r, Dyck k, TPT parses
    check_run_effect(config, source)


def check_run_effect(config: dict, source: str = "config") -> None:
    """``analysis.run_effect: always`` with fewer seeds than ``analysis.min_groups``: no run variance can be
    estimated within a condition's replicates, so the config is refused before any job (analyze says the same)."""
    analysis = config.get("analysis") or {}
    if analysis.get("run_effect") != "always" or "three_level" not in (analysis.get("models") or []):
        return
    seeds, need = len(config.get("seeds") or []), int(analysis["min_groups"])  # filled by the schema
    if seeds < need:
        raise PovstimError(f"{source}: analysis.run_effect: always needs at least {need} seeds (analysis.min_groups) "
                           f"to estimate how much trained models differ; seeds has {seeds}: add seeds, or set "
                           "analysis.run_effect: auto")


def check_suite_languages(config: dict) -> None:
    """Every suite whose language is known (importers.suite_language) is in a language the models train on."""
    trained = sorted({lang for cond in config.get("conditions", {}).values() if cond.get("from") in
                      config.get("corpora", {}) for lang in plan.corpus_languages(config, cond["from"])})
    for suite, spec in config.get("benchmarks", {}).items():
        if spec.get("kind") == "suite" and not spec.get("language"):
            continue  # benchmark-schema items in the experiment's language (plan.benchmark_spec)
        lang = importers.suite_language(spec, f"benchmarks.{suite}")
        if lang is not None and trained and lang not in trained:
            key = "language" if spec.get("language") or spec.get("kind") not in importers.FORMAT_LANGUAGE else "kind"
            names = ", ".join(f"{languages.get(x).name} ({x})" for x in trained)
            raise PovstimError(
                f"benchmarks.{suite}.{key}: the suite is in {languages.get(lang).name} ({lang}), but the models "
                f"train on {names} corpora: score a suite in the training data's language")


def key_lines(path: str | Path) -> dict[tuple, int]:
    """The line (1-based) of every key and list item of a YAML file, by its path ('sources', 'eve', 'kind');
    empty when the file cannot be read as YAML (its own error names the line)."""
    try:
        root = yaml.compose(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}
    lines: dict[tuple, int] = {}

    def walk(node, at: tuple) -> None:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    here = (*at, yaml.safe_load(key.value) if key.tag.endswith(":int") else key.value)
                    lines.setdefault(here, key.start_mark.line + 1)
                    walk(value, here)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                lines.setdefault((*at, i), item.start_mark.line + 1)
                walk(item, (*at, i))

    walk(root, ())
    return lines


def key_locator(files: list[str]):
    """``locate(path) -> "file:line"`` of a config key: the last file that sets it (later --configfile files win),
    else the nearest enclosing key that a file sets (a missing required key: its section); None at the top level."""
    tables = [(f, key_lines(f)) for f in files]

    def locate(path: tuple) -> str | None:
        path = tuple(path)
        while path:
            for f, lines in reversed(tables):
                if path in lines:
                    return f"{f}:{lines[path]}"
            path = path[:-1]
        return None

    return locate


def load(path: str | Path) -> dict[str, Any]:
    """Load, validate and default-fill a config file; every error names the file (and line or key)."""
    return validate(load_yaml(path), source=str(path))
