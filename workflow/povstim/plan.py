"""The experiment plan: which corpora, conditions, models and scores a config asks for.

The Snakefile stays thin by asking this module for every list of targets.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass

from . import dpe, families
from .conditions import operations as condition_operations
from .filter.settings import removal_rules
from .io import PovstimError
from .languages import default
from .settings import build

# povstim.devices (GPU inventory, sharing, slots; it pulls the schema) is imported inside the functions that ask
# it: `povstim check` and the stages that read the plan do not load it.


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
    """The trained models: every arch x condition x size x seed (an arch's sizes/conditions narrow it), corpus
    models (corpus_models) aside."""
    return [m for m in _grid(config) if not _corpus_model(config, m.arch)]


def corpus_models(config: dict) -> list[Model]:
    """The corpus models (a kneser-ney arch): fitted by their score job on the condition's train split, with no
    training job. Deterministic, so one per arch x condition x size, labelled with the first of ``seeds``: every
    seed would be the same model, and copies would shrink the analysis' seed variance. The rows sit in an existing
    seed group, so the seed random effect keeps the neural models' groups (docs/analysis.md)."""
    first = int(config["seeds"][0])
    seen, out = set(), []
    for m in _grid(config):
        if _corpus_model(config, m.arch) and (m.arch, m.condition, m.size) not in seen:
            seen.add((m.arch, m.condition, m.size))
            out.append(Model(m.arch, m.condition, m.size, first))
    return out


def scored_models(config: dict) -> list[Model]:
    """Every model with item scores: the trained ones, then the corpus models."""
    return models(config) + corpus_models(config)


def corpus_model_order(config: dict, arch: str) -> int:
    """The n-gram order of a corpus-model arch (its family's default filled in)."""
    return int(families.resolve_arch(config["archs"][arch], f"archs.{arch}")["order"])


def _corpus_model(config: dict, arch: str) -> bool:
    return families.get(config["archs"][arch]["family"], f"archs.{arch}.family").corpus_model


def _grid(config: dict) -> list[Model]:
    out = []
    for arch, spec in config["archs"].items():
        arch_sizes = [str(s) for s in spec.get("sizes") or []]
        arch_conditions = spec.get("conditions") or list(config["conditions"])
        for condition in config["conditions"]:
            if condition not in arch_conditions:
                continue
            for size in condition_sizes(config, condition):
                if arch_sizes and size not in arch_sizes:
                    continue
                for seed in config["seeds"]:
                    out.append(Model(arch, condition, size, int(seed)))
    return out


# --- languages -----------------------------------------------------------------------

def language(config: dict) -> str:
    """The experiment's language (filled by the schema's default at load; the same default otherwise)."""
    return str(config.get("language") or default())


def source_language(config: dict, source: str) -> str:
    """A source's language: its own `language`, else the experiment's (synthetic sources are English)."""
    spec = config["sources"][source]
    if spec.get("kind") == "synthetic":
        return "en"
    return str(spec.get("language") or language(config))


def source_spec(config: dict, source: str) -> dict:
    """A source's config as the clean rule passes it: with its language resolved."""
    return {**config["sources"][source], "language": source_language(config, source)}


def size_unit(config: dict) -> str:
    """What the config's sizes count: words, or english_bytes (filled by the schema at load; its default else)."""
    if config.get("size_unit"):
        return str(config["size_unit"])
    # deferred: the schema pulls jsonschema (as languages.default)
    from .schema import load_schema

    return load_schema()["properties"]["size_unit"]["default"]


def assemble_unit_args(config: dict, corpus: str) -> str:
    """The assemble command's --unit (and with english_bytes --languages: each mixture source's language)."""
    unit = size_unit(config)
    if unit == "words":
        return "--unit words"
    langs = {s: source_language(config, s) for s in config["corpora"][corpus]["mixture"]}
    return f"--unit {unit} --languages {shlex.quote(json.dumps(langs, sort_keys=True))}"


def corpus_languages(config: dict, corpus: str) -> list[str]:
    return sorted({source_language(config, s) for s in config["corpora"][corpus]["mixture"]})


def rule_languages(config: dict) -> set[str]:
    """The languages every enabled DPE phenomenon has rules for (the registry in povstim.dpe)."""
    rules = (config.get("filter") or {}).get("rules") or ["question_formation", "binding"]
    return dpe.languages(rules)


def filter_applies(config: dict, condition: str) -> bool:
    """Does the DPE filter run for this condition? Only if it asks (`filter: true`) and the
    enabled phenomena have rules for every language of its corpus (dpe.languages).

    A `filter: true` condition in another language is built unfiltered (no parse or
    filter jobs) and its condition.json, log, tables and report say so (filter_note).
    """
    spec = config["conditions"][condition]
    if not spec.get("filter") and not spec.get("operations"):  # every corpus operation reads dpe.tsv
        return False
    langs = rule_languages(config)
    missing = [lang for lang in corpus_languages(config, spec["from"]) if lang not in langs]
    if missing and spec.get("reinsert"):
        raise PovstimError(
            f"conditions.{condition}.reinsert: the DPE filter has no rules for language {', '.join(missing)}, "
            "so no sentence is removed and there is nothing to put back; drop `reinsert`"
        )
    return not missing


def filter_note(config: dict, condition: str) -> str | None:
    """Why a `filter: true` condition is not filtered, or None."""
    spec = config["conditions"][condition]
    if not spec.get("filter") or filter_applies(config, condition):
        return None
    langs = rule_languages(config)
    missing = [lang for lang in corpus_languages(config, spec["from"]) if lang not in langs]
    return f"not filtered: no DPE rules for language {', '.join(missing)}"


def tokenizer_corpora(config: dict, condition: str, size: str) -> list[str]:
    """The conditions whose train.txt at ``size`` condition's tokenizer is trained on (``tokenizer.shared``):
    itself (false, POSH's per-split tokenizers), every condition at that size (true: one tokenizer for all), or
    the named one."""
    shared = config["tokenizer"]["shared"]
    if shared is False:
        return [condition]
    if shared is True:
        return [c for c in config["conditions"] if size in condition_sizes(config, c)]
    return [shared]


def tokenizer_params(config: dict) -> dict:
    """The tokenizer: section as the tokenize job gets it: ``shared`` chooses the job's inputs, not its settings
    (so the per-condition default's jobs keep their parameters)."""
    return {k: v for k, v in config["tokenizer"].items() if k != "shared"}


def check_shared_tokenizer(config: dict) -> None:
    """``tokenizer.shared`` naming a condition: one that exists at every size a condition is trained at."""
    shared = config["tokenizer"]["shared"]  # filled by the schema before this check
    if isinstance(shared, bool):
        return
    conds = config.get("conditions") or {}
    if shared not in conds:
        raise PovstimError(f"tokenizer.shared: {shared!r} is not a condition (known: {', '.join(sorted(conds))}; or "
                           "true: the union of every condition, false: one per condition)")
    missing = sorted({s for c in conds for s in condition_sizes(config, c)} - set(condition_sizes(config, shared)),
                     key=str)
    if missing:
        raise PovstimError(f"tokenizer.shared: condition {shared!r} has no corpus at size(s) {', '.join(missing)}, "
                           "where other conditions need its tokenizer")


RANDOM_OPS = ("random_remove", "reinsert", "add", "placebo")  # draws seeded by the condition's name


def _definition(config: dict, name: str) -> tuple[tuple, bool]:
    """What condition ``name``'s corpus is by its definition, as a key two conditions of one corpus share exactly
    when they are built alike, and whether it holds random draws (seeded by the condition's name, so two such
    conditions differ in text but not in what was done to them). A rate of 0 and an ``add`` of 0 do nothing; a
    ``filter: true`` in a language without DPE rules is built unfiltered."""
    spec = config["conditions"][name]
    if not filter_applies(config, name):
        return ("unfiltered",), False
    rules = list(removal_rules(config))
    if spec.get("operations"):
        ops = []
        for o in condition_operations.resolve(config["conditions"], name, rules):
            if o["op"] == "reinsert":
                o = {**o, "rates": {c: r for c, r in o["rates"].items() if float(r) > 0}}
                if not o["rates"]:
                    continue
            if o["op"] == "add" and int(o["n"]) == 0:
                continue
            ops.append({k: v for k, v in o.items() if k not in ("series", "match")})
        if all(o["op"] == "remove" for o in ops):
            return ("removes", tuple(sorted({c for o in ops for c in o["constructions"]})), ()), False
        return ("operations", json.dumps(ops, sort_keys=True)), any(o["op"] in RANDOM_OPS for o in ops)
    f = spec.get("filter")
    rates = tuple(sorted((p, float(r)) for p, r in (spec.get("reinsert") or {}).items() if float(r) > 0))
    return ("removes", tuple(sorted(f if isinstance(f, (list, tuple)) else rules)), rates), False


def _meant_to_differ(spec: dict) -> int:
    """How far a condition is meant to differ from its corpus: 2 puts evidence back or changes it (reinsert, even
    at rate 0; operations beyond removals; a placebo), 1 removes (filter, remove operations), 0 neither."""
    ops = spec.get("operations") or []
    if spec.get("reinsert") is not None or any(o["op"] != "remove" for o in ops) or spec.get("placebo_point"):
        return 2
    return 1 if spec.get("filter") or ops else 0


def void_definitions(config: dict) -> list[dict]:
    """Pairs of conditions of one corpus whose definitions give the same corpus (BABY with every reinsert rate 0
    is BABY-F; a ``filter: true`` condition in a language without DPE rules is its corpus unfiltered; two
    conditions with the same operations), found from the config alone, before any job: {kept, duplicate, sizes,
    identical (the same text; else the same operations with other random draws), why}. The duplicate is the
    condition meant to differ (reinsert, operations, filter), else the later one."""
    conds = config["conditions"]
    names = list(conds)
    keys = {n: _definition(config, n) for n in names}
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if conds[a]["from"] != conds[b]["from"] or keys[a][0] != keys[b][0]:
                continue
            sizes_ = [s for s in condition_sizes(config, a) if s in condition_sizes(config, b)]
            if not sizes_:
                continue
            kept, dup = (b, a) if _meant_to_differ(conds[a]) > _meant_to_differ(conds[b]) else (a, b)
            out.append({"kept": kept, "duplicate": dup, "sizes": sizes_, "identical": not keys[a][1],
                        "why": _void_why(config, kept, dup, keys[a][1])})
    return out


def _void_why(config: dict, kept: str, dup: str, random_draws: bool) -> str:
    spec = config["conditions"][dup]
    zero = [o for o in spec.get("operations") or [] if o["op"] == "reinsert" and not any(
        float(r) > 0 for r in o["rates"].values())]
    if (spec.get("reinsert") and not any(float(r) > 0 for r in spec["reinsert"].values())) or zero:
        return f"{dup}'s reinsert rates are all 0: its corpus is {kept}'s"
    for c in (dup, kept):
        note = filter_note(config, c)
        if note:
            return (f"{c} asks for the DPE filter but is built unfiltered ({note}): {dup}'s corpus is {kept}'s")
    if random_draws:
        return (f"{dup} and {kept} have the same operations: their random draws differ, what was done to them does "
                "not (a chance contrast)")
    return f"{dup} and {kept} are built alike (the same removals, nothing put back): {dup}'s corpus is {kept}'s"


def void_definition_lines(config: dict) -> list[str]:
    """The console's and plan's words about :func:`void_definitions`."""
    out = []
    for v in void_definitions(config):
        out.append(f"VOID BY DEFINITION: {v['kept']} vs. {v['duplicate']} at {', '.join(v['sizes'])}: {v['why']}"
                   + (f"; identical training text: {v['duplicate']}'s train jobs link {v['kept']}'s models"
                      if v["identical"] else "")
                   + f". The analysis leaves {v['duplicate']}'s cells out of the Bayesian models and reports the "
                   "contrast as VOID, with no estimate.")
    return out


def void_definition_of(config: dict, condition: str, size: str) -> dict | None:
    """{of, why} when ``condition`` is a duplicate by definition at ``size`` (its condition.json's
    ``void_definition``), else None."""
    for v in void_definitions(config):
        if v["duplicate"] == condition and size in v["sizes"]:
            return {"of": v["kept"], "why": v["why"], "identical": v["identical"]}
    return None


def report_filter(config: dict, sanity_samples: bool) -> dict:
    """What the report's description (workflow/report/workflow.rst) says about the DPE filter.

    ``filtered``: the conditions the filter really runs for (French rules filter a French corpus);
    ``notes``: why a condition that asks for it is not filtered (filter_note); ``section``: whether the
    report has a "DPE filter" category to link to: the filter job's App. C sanity samples
    (``sanity_samples``: the enabled rules draw some) of a filtered corpus, or ``filter_validation``'s
    tables. Without one a link to it is a docutils error in the report (German, Italian).
    """
    conditions = config["conditions"]
    filtered = [c for c, spec in conditions.items() if spec.get("filter") and filter_applies(config, c)]
    notes = {c: note for c in conditions if (note := filter_note(config, c))}
    section = bool(config.get("filter_validation")) or (sanity_samples and bool(filtered_corpora(config)))
    return {"filtered": filtered, "notes": notes, "section": section}


FILTER_MODES = {"posh": "POSH-BENCH App. C's rules as written", "strict": "povstim's strict (targeted) rules",
                "conservative": "App. C's decisions made robust to parser errors (filter.mode conservative)"}


def _puts_back(spec: dict) -> dict:
    """What a condition puts back after its removal: reinsert rates (old style or an operations chain's reinsert
    steps) and add counts, {construction: 'rate r' / 'n sentences'}."""
    out = {c: f"rate {r:g}" for c, r in (spec.get("reinsert") or {}).items()}
    for op in spec.get("operations") or []:
        if op["op"] == "reinsert":
            out.update({c: f"rate {r:g}" for c, r in op["rates"].items()})
        elif op["op"] == "add":
            out[op["construction"]] = f"{op['n']} sentences"
    return out


def report_description(config: dict, rf: dict) -> str:
    """The report description's account of the run (workflow/report/workflow.rst): its language, the DPE filter it
    ran (rules, mode, conditions) or that it ran none and why, and what each condition removed and put back, or
    that nothing was put back. ``rf``: :func:`report_filter`."""
    lang = language(config)
    conds = config["conditions"]
    filtered = list(rf["filtered"])
    if filtered:
        rules = ", ".join(config.get("filter", {}).get("rules") or [])
        mode = config["filter"]["mode"]  # filled by the schema
        # App. C wrote English rules: another language's rules are povstim's, whatever the mode's name
        mode = FILTER_MODES.get(mode, mode) if lang == "en" else f"povstim's ``{lang}`` rules (filter.mode {mode})"
        filt = (f"parses them and removes direct positive evidence (DPE) for {rules} with {mode}, from "
                f"{', '.join(filtered)}")
    else:
        why = "; ".join(dict.fromkeys(rf["notes"].values())) or "no condition asks for it"
        filt = f"runs no DPE filter ({why})"
    parts, back_any = [], False
    for name, spec in conds.items():
        if name in filtered:
            back = _puts_back(spec)
            back_any = back_any or bool(back)
            what = "DPE removed" + (", then put back: " + ", ".join(f"{c} {v}" for c, v in back.items()) if back
                                    else ", nothing put back")
        elif name in rf["notes"]:
            what = rf["notes"][name]
        else:
            what = "unfiltered"
        parts.append(f"{name.upper()} from {spec['from']}: {what}")
    back = "" if back_any or not filtered else " No condition puts DPE back."
    return (f"The pipeline assembles training corpora of fixed word budgets from a mixture of sources (language "
            f"``{lang}``), {filt}, builds the training conditions ({'; '.join(parts)}).{back}")


def benchmark_spec(config: dict, suite: str) -> dict:
    """A suite's config as the benchmark rule passes it (kind suite: with the experiment's language)."""
    spec = dict(config["benchmarks"][suite])
    if spec.get("kind") == "suite" and "language" not in spec:
        spec["language"] = language(config)
    return spec


def norms_suites(config: dict) -> list[str]:
    """Suites that may ship normative tables (kind suite): the analysis reads their folders."""
    return [s for s, spec in config.get("benchmarks", {}).items() if spec.get("kind") == "suite"]


def suite_files_hash(config: dict, suite: str, base_dir: str = ".") -> str:
    """Kind suite: a hash of the suite's files, so editing an item reruns the benchmark ('' for other kinds)."""
    import hashlib
    from pathlib import Path

    # deferred: the benchmark readers load at DAG build only for a config with a suite read from files
    from .benchmarks.tasks import resolve_path

    spec = config["benchmarks"][suite]
    if spec.get("kind") != "suite":
        return ""
    path = resolve_path(spec["path"])
    if not path.is_absolute():
        path = Path(base_dir) / path
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    h = hashlib.sha256()
    for f in files:
        if f.exists():
            h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


def filtered_corpora(config: dict) -> list[tuple[str, str]]:
    """(corpus, size) pairs that some condition filters, so they need parsing."""
    pairs = []
    for condition, spec in config["conditions"].items():
        if filter_applies(config, condition):
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
            "filtered": filter_applies(config, name) and not spec.get("reinsert")
            and all(o["op"] == "remove" for o in spec.get("operations") or []),
        }
        note = filter_note(config, name)
        if note:
            meta[name]["note"] = note
    for name, spec in config["conditions"].items():
        point = spec.get("placebo_point")
        if point:  # a placebo of vs: vs's predictors, and a level of its own in the three-level model
            meta[name]["filtered"] = meta[point["vs"]]["filtered"]
            meta[name]["placebo"] = {k: point[k] for k in ("series", "of", "vs", "draw")}
    return meta


def analysis_archs(config: dict, arch_meta: dict) -> dict[str, dict]:
    """The analyze rule's ``--archs``: ``biases.arch_meta`` plus each arch's learner, its ``family`` and the
    ``scale`` its scores are on (causal, masked, or a corpus model), for the analysis' fits per learner
    (analysis.pool_learners; the analysis reads no family registry itself)."""
    out = {}
    for name, meta in arch_meta.items():
        fam = families.get(config["archs"][name]["family"], where=f"archs.{name}.family")
        out[name] = {**meta, "family": fam.name, "scale": "corpus model" if fam.corpus_model else fam.kind}
    return out


def suites(config: dict) -> list[str]:
    return list(config.get("benchmarks", {}))


# --- benchmarks: what the benchmark rule builds from, how each suite is scored

SUITE_NOT_BUILD_KEYS = ("scoring", "baselines")  # povstim.benchmarks.build.NOT_BUILD_KEYS


def _real_sources(config: dict, corpus: str) -> bool:
    sources = config.get("sources", {})
    return any(sources.get(s, {}).get("kind") != "synthetic" for s in config["corpora"][corpus]["mixture"])


def word_stats_inputs(config: dict) -> list[tuple[str, str]]:
    """(corpus, size) whose parses give the benchmark its part-of-speech evidence: the largest parsed size
    of each parsed corpus (POSH parses only the corpora it filters)."""
    largest: dict[str, str] = {}
    order = sizes(config)
    for corpus, size in filtered_corpora(config):
        if corpus not in largest or order.index(size) > order.index(largest[corpus]):
            largest[corpus] = size
    return sorted(largest.items())


def benchmark_vocabulary(config: dict, suite: str) -> str | None:
    """``lexicon`` or ``corpus`` for a generated suite (``auto`` resolved), None for an imported one.

    auto = corpus when some corpus has real (non-synthetic) sources and a corpus is parsed.
    """
    spec = config["benchmarks"][suite]
    if spec["kind"] != "generated":
        return None
    vocabulary = spec["vocabulary"]
    parsed = word_stats_inputs(config)
    if vocabulary == "auto":
        real = any(_real_sources(config, c) for c in config["corpora"])
        return "corpus" if real and parsed else "lexicon"
    if vocabulary == "corpus" and not parsed:
        raise PovstimError(
            f"benchmarks.{suite}.vocabulary is corpus, but no corpus is parsed (only filtered corpora are): "
            "filter a corpus or use vocabulary: lexicon"
        )
    return vocabulary


def suite_build_spec(config: dict, suite: str) -> dict:
    """The suite entry the benchmark rule builds from: without the keys of other stages, vocabulary resolved."""
    spec = {k: v for k, v in benchmark_spec(config, suite).items() if k not in SUITE_NOT_BUILD_KEYS}
    vocabulary = benchmark_vocabulary(config, suite)
    if vocabulary is not None:
        spec["vocabulary"] = vocabulary
    return spec


def scoring_for(config: dict, suite: str) -> dict:
    """The scoring section with the suite's own ``scoring:`` overrides applied."""
    return {**config.get("scoring", {}), **(config["benchmarks"][suite].get("scoring") or {})}


# suite kinds whose items may carry a critical region (a 'region' column or field; scoring.metric: region)
REGION_KINDS = ("csv", "jsonl", "suite")


def slor_corpora(config: dict, suite: str, models: list[Model]) -> list[str]:
    """``scoring.metric: slor`` (the suite's scoring): each model's unigram training text, its condition's train
    split, as ``{condition}/{size}/train.txt`` under the results' corpus folder; [] for other metrics."""
    if scoring_for(config, suite).get("metric") != "slor":
        return []
    return [f"{m.condition}/{m.size}/train.txt" for m in models]


def check_scoring_metrics(config: dict) -> None:
    """``scoring.metric: region`` on a suite whose kind gives no regions (generated POSH-BENCH, BLiMP, Zorro,
    SCaMP, the POSH release) would fail in every score job: an error naming the key before any job."""
    for suite, spec in config.get("benchmarks", {}).items():
        if scoring_for(config, suite).get("metric") == "region" and spec.get("kind") not in REGION_KINDS:
            where = (f"benchmarks.{suite}.scoring.metric" if (spec.get("scoring") or {}).get("metric") == "region"
                     else "scoring.metric")
            raise PovstimError(f"{where} is region, but suite {suite} (kind {spec.get('kind')}) has no critical "
                               f"regions: only kinds {', '.join(REGION_KINDS)} can give items a 'region'; set "
                               f"benchmarks.{suite}.scoring.metric to sentence or slor")


def external_models(config: dict) -> list[str]:
    """The names of ``external_models`` (models trained elsewhere, scored by rule score_external)."""
    return list(config.get("external_models") or {})


def external_model_flags(config: dict, name: str) -> str:
    """``povstim score-model``'s flags for external model ``name`` (besides its path, suite and output)."""
    spec = config["external_models"][name]
    flags = [f"--size {spec['size']}", "--checkpoints" if spec["checkpoints"] else "--no-checkpoints"]
    flags += [f"--revision {r}" for r in spec.get("revisions") or []]
    if spec["download"]:
        flags.append("--download")
    if spec.get("corpus"):
        flags.append(f"--corpus {spec['corpus']}")
    return " ".join(flags)


def check_external_models(config: dict) -> None:
    """An external model's rows (arch ``external``, condition = its name) must not be mistaken for a trained
    model's, and ``scoring.metric: slor`` needs its training text: errors naming the key."""
    for name, spec in (config.get("external_models") or {}).items():
        if name in config.get("conditions", {}):
            raise PovstimError(f"external_models.{name}: the name is a condition's too; its rows (condition "
                               f"{name!r}) would mix with that condition's in the tables: rename it")
        slor = [s for s in config.get("benchmarks", {}) if scoring_for(config, s).get("metric") == "slor"]
        if slor and not spec.get("corpus"):
            raise PovstimError(f"external_models.{name}.corpus: scoring.metric is slor (suite {slor[0]}), which "
                               "needs the unigram of the model's training text: give that text's path")
    if "external" in config.get("archs", {}) and config.get("external_models"):
        raise PovstimError("archs.external: the name marks the rows of external_models; rename the arch")


def baseline_scores(config: dict) -> list[tuple[str, str, str, str]]:
    """(baseline, condition, size, suite) of every corpus baseline a suite asks for (``baselines:``)."""
    out = []
    for suite, spec in config.get("benchmarks", {}).items():
        for baseline in spec.get("baselines") or []:
            for condition in config["conditions"]:
                for size in condition_sizes(config, condition):
                    out.append((baseline, condition, size, suite))
    return out


def training_for(config: dict, arch: str) -> dict:
    """The training section with the arch's own ``training:`` overrides applied."""
    return {**config.get("training", {}), **(config["archs"][arch].get("training") or {})}


def train_gpus(config: dict, arch: str, env=None, dev_dir: str = "/dev") -> int:
    """``gpu`` resource units of one training job of this arch (see povstim.devices.job_gpus):
    0 for a small job that shares a GPU (train_gpu_share > 1) or runs on the CPU."""
    from .devices.slots import job_gpus

    if train_gpu_share(config, arch, env, dev_dir) > 1:
        return 0
    return job_gpus(training_for(config, arch).get("device"), env, dev_dir)


def train_threads(config: dict, arch: str) -> int:
    return int(training_for(config, arch)["threads"])


def parse_gpus(config: dict, env=None, dev_dir: str = "/dev") -> int:
    """Only stanza parses on a GPU."""
    from .devices.slots import job_gpus

    parser = config.get("parser", {})
    return job_gpus(parser.get("device"), env, dev_dir) if parser.get("backend") == "stanza" else 0


def score_gpus(config: dict, env=None, dev_dir: str = "/dev", arch: str | list[str] | None = None) -> int:
    """``gpu`` units of a scoring job (of ``arch``'s models; 0 when they are small enough to share a GPU)."""
    from .devices.slots import job_gpus

    if arch is not None and score_gpu_share(config, arch, env, dev_dir) > 1:
        return 0
    return job_gpus(config.get("scoring", {}).get("device"), env, dev_dir)


# --- GPU sharing ------------------------------------------------------------------------

def _configured_gpus(config: dict):
    """The ``gpus:`` section as povstim.devices.GpuSettings, as written; None for a config without one (only
    hand-made dicts: a validated config always has it, filled with the schema's defaults)."""
    from .devices.sharing import GpuSettings

    gpus = config.get("gpus")
    if gpus is None:
        return None
    if not all(k in gpus for k in ("slots", "memory_gb")):
        return build(GpuSettings, "gpus", gpus, where="gpus")
    return GpuSettings(slots=int(gpus["slots"]), memory_gb=float(gpus["memory_gb"]))


def gpu_settings(config: dict, env=None):
    """The ``gpus:`` section (:func:`_configured_gpus`), its ``memory_gb`` lowered to the visible GPUs' own where
    nvidia-smi shows them clearly smaller (povstim.devices.fitted)."""
    from .devices.sharing import fitted, gpu_inventory

    settings = _configured_gpus(config)
    return None if settings is None else fitted(settings, gpu_inventory(env))[0]


def gpu_notes(config: dict, env=None) -> list[str]:
    """What a run on this machine's GPUs should tell its user at DAG build (povstim.devices: a GPU smaller
    than ``gpus.memory_gb``, a GPU without bf16 tensor cores under ``training.precision: auto``)."""
    from .devices.precision import tensor_core_dtypes
    from .devices.sharing import fitted, gpu_inventory

    gpus = gpu_inventory(env)
    settings = _configured_gpus(config)
    note = None if settings is None else fitted(settings, gpus)[1]
    notes = [note] if note else []
    old = [g for g in gpus if not tensor_core_dtypes(g.capability)]
    auto = [a for a in config.get("archs") or {} if str(training_for(config, a).get("precision") or "auto") == "auto"]
    if old and auto:
        g = old[0]
        notes.append(f"povstim: GPU {g.index} ({g.name}, compute capability {g.capability[0]}.{g.capability[1]}) has no "
                     "bf16 tensor cores: training.precision auto trains in fp32 there, and the GPU memory estimates "
                     "count fp32 activations; precision: fp16 would use its fp16 tensor cores, loss-scaled "
                     "(docs/training.md, \"Older GPUs\")")
    return notes


def precision_notes(config: dict, env=None, dev_dir: str = "/dev") -> list[str]:
    """bf16 or fp16 asked for where the training jobs will not see a GPU (povstim.devices.job_gpus: ``device:
    auto`` without a visible GPU, or ``cpu``): said at DAG build, since a training job that runs here would stop
    on it after everything before it. Not an error: models trained elsewhere (a cluster) are not retrained here."""
    from .devices.slots import job_gpus

    notes = []
    for arch in config.get("archs") or {}:
        t = training_for(config, arch)
        precision = str(t.get("precision") or "auto")
        if precision in ("bf16", "fp16") and not job_gpus(t.get("device"), env, dev_dir):
            where = (f"archs.{arch}.training" if "precision" in (config["archs"][arch].get("training") or {})
                     else "training")
            notes.append(f"povstim: {where}.precision {precision} needs a CUDA GPU, and {arch}'s training jobs see none "
                         f"here (device: {t.get('device') or 'auto'}): a training job of {arch} that runs here will "
                         "stop on it (use auto or fp32 to train here)")
    return notes


def _arch_sizes(config: dict, arch: str) -> dict:
    """The arch's sizes as the GPU memory estimates read them (a transformer's; Family.memory_sizes maps others)."""
    spec = families.resolve_arch(config["archs"][arch], f"archs.{arch}")
    fam = families.get(spec["family"])
    return fam.memory_sizes(spec) if fam.memory_sizes else spec


def train_memory_gb(config: dict, arch: str, env=None) -> float:
    """Estimated peak GPU memory of one training job of ``arch`` (povstim.devices.train_memory_gb), fp32-wide
    under ``precision: auto`` where a visible GPU has no bf16 tensor cores (povstim.devices.estimate_precision)."""
    from .devices.sharing import estimate_precision, gpu_inventory
    from .devices.sharing import train_memory_gb as estimate

    t = training_for(config, arch)
    spec = _arch_sizes(config, arch)
    context = int(t["context"])
    batch = int(t["batch_size"])
    if t.get("micro_batch"):
        batch = min(batch, int(t["micro_batch"]))
    vocab = int((config.get("tokenizer") or {}).get("vocab_size") or 32768)
    precision = estimate_precision(str(t.get("precision") or "auto"), gpu_inventory(env))
    return estimate(spec, vocab, context, batch, int(spec.get("n_positions") or context), precision)


def score_memory_gb(config: dict, arch: str) -> float:
    from .devices.sharing import score_memory_gb as estimate

    t = training_for(config, arch)
    spec = _arch_sizes(config, arch)
    positions = int(spec.get("n_positions") or t["context"])
    vocab = int((config.get("tokenizer") or {}).get("vocab_size") or 32768)
    return estimate(spec, vocab, positions, int((config.get("scoring") or {}).get("batch_size") or 64))


def train_gpu_share(config: dict, arch: str, env=None, dev_dir: str = "/dev") -> int:
    """POVSTIM_GPU_SHARE of a training (or Dyck pre-training) job of ``arch``: ``gpus.slots`` when the job
    uses a GPU and is small (povstim.devices.share_slots), else 1."""
    from .devices.sharing import share_slots
    from .devices.slots import job_gpus

    settings = gpu_settings(config, env)
    if settings is None or settings.slots <= 1:
        return 1
    if not job_gpus(training_for(config, arch).get("device"), env, dev_dir):
        return 1
    return share_slots(settings, train_memory_gb(config, arch, env))


def score_gpu_share(config: dict, arch: str | list[str], env=None, dev_dir: str = "/dev") -> int:
    """POVSTIM_GPU_SHARE of a scoring job of ``arch``'s models (a list: one job scoring several archs)."""
    from .devices.sharing import share_slots
    from .devices.slots import job_gpus

    settings = gpu_settings(config, env)
    if settings is None or settings.slots <= 1:
        return 1
    if not job_gpus((config.get("scoring") or {}).get("device"), env, dev_dir):
        return 1
    archs = [arch] if isinstance(arch, str) else list(arch)
    return min(share_slots(settings, score_memory_gb(config, a)) for a in archs)
