# Parse -> DPE filter (POSH App. C) -> training conditions.
# What the parse stage spares is decided by the enabled phenomena's surface
# pre-tests (povstim.dpe): the parse rule hashes those, so editing a rule
# reruns the filter but not the parse, while editing a pre-test reruns both.

import shlex

from povstim import dpe
from povstim.conditions import operations as condition_operations
from povstim.constructions import library as constructions
from povstim.filter.settings import condition_filter, condition_phenomena, filter_rules, removal_rules

# What the filter runs: filter.rules, every construction a condition names in its filter list
# (docs/constructions.md) and every one its corpus operations name (docs/manipulations.md); the user's own
# constructions (filter.constructions) are registered first. REMOVAL_RULES: what `true` removes.
constructions.use(config["filter"])
DPE_RULES = list(filter_rules(config))
REMOVAL_RULES = list(removal_rules(config))
FILTER_SECTION = {**config["filter"], "rules": DPE_RULES}
SANITY = dpe.sanity_names(DPE_RULES)


if CHILDES_PARSER:

    rule train_parser:
        """The parser adapted to child-directed speech (parser.backend: childes), trained on gold UD trees."""
        input:
            treebank=childes_treebank(),
        output:
            directory(CHILDES_PARSER),
        params:
            # the treebank travels as the input; the training settings as params
            parser=as_json({k: v for k, v in config["parser"].items() if k.startswith("childes_")
                            and k not in ("childes_treebank", "childes_model")}),
            treebank=shlex.quote(repo_path(config["parser"]["childes_treebank"])),
            code=stage_code("train-parser"),
        threads: 1
        log:
            f"{LOGS}/parser/childes.log",
        benchmark:
            f"{BENCH}/parser/childes.tsv"
        conda:
            "../envs/corpus.yaml"
        shell:
            "{POVSTIM} train-parser --treebank {params.treebank} --params {params.parser:q} --out {output}"
            " > {log} 2>&1"


rule parse:
    input:
        unpack(parser_model_inputs),
        text=f"{RESULTS}/corpus/{{corpus}}/{{size}}/base.txt",
        gold=gold_conllus,
    output:
        f"{RESULTS}/parse/{{corpus}}/{{size}}/{{shard}}.conllu",
    params:
        parser=as_json(PARSER_SECTION),
        # Only the enabled rules decide what the prefilter spares: a mode or
        # audit change must not rerun the parse.
        filter=as_json({"rules": DPE_RULES, **({"constructions": config["filter"]["constructions"]}
                                               if config["filter"].get("constructions") else {})}),
        n_shards=N_SHARDS,
        language=plan.language(config),
        # the parse's closure without the dpe package, which it imports whole: only the surface
        # pre-tests decide what it parses (see the top of this file); nor the filter's measured-recall
        # reader, whose numbers only a log line quotes
        code=stage_code("parse", exclude=("dpe", "constructions", "filter")) + dpe.surface_hash(DPE_RULES),
    log:
        f"{LOGS}/parse/{{corpus}}/{{size}}/{{shard}}.log",
    benchmark:
        f"{BENCH}/parse/{{corpus}}/{{size}}/{{shard}}.tsv"
    resources:
        gpu=plan.parse_gpus(config),
    conda:
        "../envs/corpus.yaml"
    shell:
        "{POVSTIM} parse --input {input.text} --gold {input.gold} --params {params.parser:q}"
        " --filter-params {params.filter:q} --language {params.language}"
        " --shard {wildcards.shard} --n-shards {params.n_shards} --out {output} > {log} 2>&1"


rule filter:
    input:
        text=f"{RESULTS}/corpus/{{corpus}}/{{size}}/base.txt",
        shards=expand(f"{RESULTS}/parse/{{{{corpus}}}}/{{{{size}}}}/{{shard}}.conllu", shard=range(N_SHARDS)),
    output:
        dpe=f"{RESULTS}/filter/{{corpus}}/{{size}}/dpe.tsv",
        summary=f"{RESULTS}/filter/{{corpus}}/{{size}}/summary.json",
        # App. C's sanity-check samples, shown in the report next to the filter validation
        sanity=[
            report(
                f"{RESULTS}/filter/{{corpus}}/{{size}}/sanity_{name}.tsv",
                caption="../workflow/report/filter_sanity.rst",
                category="DPE filter",
                subcategory="App. C sanity check",
                labels={"sample": name, "corpus": "{corpus}", "size": "{size}"},
            )
            for name in SANITY
        ],
    params:
        filter=as_json(FILTER_SECTION),
        audit_dir=subpath(output.summary, parent=True),
        # a construction's YAML entry and word lists are data: their resolved definitions are hashed
        # (question_formation reads constructions/words/wh_clause_heads.txt too)
        code=stage_code("filter", "constructions/words/wh_clause_heads.txt", "dpe/cue_precision.yaml")
        + constructions.spec_hash(DPE_RULES),
    # the rules run in forked processes (same outputs for any number; Snakemake scales this down to --cores)
    threads: 4
    log:
        f"{LOGS}/filter/{{corpus}}/{{size}}.log",
    benchmark:
        f"{BENCH}/filter/{{corpus}}/{{size}}.tsv"
    conda:
        "../envs/corpus.yaml"
    shell:
        "{POVSTIM} filter {input.shards} --base {input.text} --params {params.filter:q}"
        " --out {output.dpe} --summary {output.summary} --audit-dir {params.audit_dir} --cores {threads}"
        " > {log} 2>&1"


if VALIDATION:

    rule filter_validation:
        """The DPE filter on the configured parser's output, measured against a gold treebank's trees
        (or against hand labels: filter_validation.labels)."""
        input:
            unpack(validation_inputs),
        output:
            json=f"{RESULTS}/filter/validation.json",
            table=report(
                f"{RESULTS}/filter/validation.tsv",
                caption="../workflow/report/filter_validation.rst",
                category="DPE filter",
                subcategory="validation against gold trees",
                labels={"table": "recall and precision per mode"},
            ),
            figure=report(
                f"{RESULTS}/filter/validation.png",
                caption="../workflow/report/filter_validation.rst",
                category="DPE filter",
                subcategory="validation against gold trees",
                labels={"figure": "recall and precision per mode"},
            ),
            disagreements=report(
                f"{RESULTS}/filter/validation_disagreements.tsv",
                caption="../workflow/report/filter_validation.rst",
                category="DPE filter",
                subcategory="validation against gold trees",
                labels={"table": "sentences where parse and gold tree disagree"},
            ),
        params:
            # every phenomenon the filter stage runs (filter.rules plus the constructions conditions name):
            # the report's table has a row per construction a condition removes
            filter=as_json(FILTER_SECTION),
            parser=as_json(PARSER_SECTION),
            constructions=constructions.spec_hash(DPE_RULES),
            # the path travels as the input; the rest of the section as params
            validation=as_json({k: v for k, v in VALIDATION.items() if k not in VALIDATION_FILES}),
            language=plan.language(config),
            code=stage_code("filter-validation", "constructions/words/wh_clause_heads.txt", "dpe/cue_precision.yaml"),
        log:
            f"{LOGS}/filter/validation.log",
        benchmark:
            f"{BENCH}/filter/validation.tsv"
        conda:
            "../envs/corpus.yaml"
        shell:
            # The paths are not params: moving the checkout must not rerun the validation.
            "{POVSTIM} filter-validation " + validation_args() + " --params {params.filter:q}"
            " --parser-params {params.parser:q} --validation-params {params.validation:q} --language {params.language}"
            " --out {output.json} --table {output.table} --figure {output.figure}"
            " --disagreements {output.disagreements} > {log} 2>&1"


rule condition:
    input:
        unpack(condition_inputs),
    output:
        train=f"{RESULTS}/corpus/{{condition}}/{{size}}/train.txt",
        dev=f"{RESULTS}/corpus/{{condition}}/{{size}}/dev.txt",
        stats=f"{RESULTS}/corpus/{{condition}}/{{size}}/condition.json",
        # one row per sentence removed, added or rewritten, by which operation and why
        audit=f"{RESULTS}/corpus/{{condition}}/{{size}}/operations.tsv",
    params:
        dpe=lambda wc, input: f"--dpe {input.dpe}" if "dpe" in input.keys() else "",
        # a condition declared as operations (docs/manipulations.md), resolved against filter.rules
        operations=lambda wc: ("--operations " + shlex.quote(json.dumps(condition_operations.resolve(
            config["conditions"], wc.condition, REMOVAL_RULES), sort_keys=True)) + f" --condition-name {wc.condition}"
            if condition_spec(wc).get("operations") else ""),
        trees=lambda wc, input: "--trees " + " ".join(input.trees) if "trees" in input.keys() else "",
        # a condition that names its constructions removes only those rows of dpe.tsv (filter: true too when
        # operations made the filter run constructions beyond REMOVAL_RULES)
        phenomena=lambda wc: ("--phenomena " + ",".join(condition_phenomena(config, condition_spec(wc)))
                              if condition_phenomena(config, condition_spec(wc)) else ""),
        reinsert=lambda wc: as_json(condition_spec(wc).get("reinsert", {})),
        # why a `filter: true` condition is built unfiltered (no DPE rules for its language)
        not_filtered=lambda wc: plan.filter_note(config, wc.condition) or "",
        # a duplicate of another condition by their definitions (plan.void_definitions): said in condition.json
        void=lambda wc: (lambda v: f"--void-definition {shlex.quote(json.dumps(v, sort_keys=True))}" if v else "")(
            plan.void_definition_of(config, wc.condition, wc.size)),
        split=as_json(config["split"]),
        code=stage_code("condition"),
    log:
        f"{LOGS}/condition/{{condition}}/{{size}}.log",
    benchmark:
        f"{BENCH}/condition/{{condition}}/{{size}}.tsv"
    conda:
        "../envs/corpus.yaml"
    shell:
        "{POVSTIM} condition --base {input.base} {params.dpe} {params.phenomena} --not-filtered={params.not_filtered:q} --reinsert {params.reinsert:q}"
        " {params.operations} {params.trees} {params.void}"
        " --split {params.split:q} --out-train {output.train} --out-dev {output.dev}"
        " --stats {output.stats} --out-audit {output.audit} > {log} 2>&1"


rule condition_table:
    """Counts and measured DPE rates of every condition x size, one TSV."""
    input:
        stats=[
            f"{RESULTS}/corpus/{c}/{s}/condition.json"
            for c in config["conditions"]
            for s in plan.condition_sizes(config, c)
        ],
        # the base corpora's assembly stats: every condition's words vs its base's (words_vs_base)
        base=sorted({f"{RESULTS}/corpus/{spec['from']}/{s}/stats.json" for c, spec in config["conditions"].items()
                     for s in plan.condition_sizes(config, c)}),
    output:
        f"{RESULTS}/corpus/conditions.tsv",
    params:
        code=stage_code("condition"),
    log:
        f"{LOGS}/condition/table.log",
    benchmark:
        f"{BENCH}/condition/table.tsv"
    conda:
        "../envs/corpus.yaml"
    shell:
        "{POVSTIM} condition --table {input.stats} --out-table {output} > {log} 2>&1"
