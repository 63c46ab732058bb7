# Parse -> DPE filter (POSH App. C) -> training conditions.
# The surface prefilter (which sentences get parsed) lives in the parse
# package, so editing the rules reruns the filter but not the parse.

# stanza uses a GPU when one is free: count it against --resources gpu=N.
PARSE_GPU = 1 if config.get("parser", {}).get("backend") == "stanza" and config.get("parser", {}).get("device", "auto") != "cpu" else 0


rule parse:
    input:
        text="results/corpus/{corpus}/{size}/base.txt",
        gold=gold_conllus,
    output:
        "results/parse/{corpus}/{size}/{shard}.conllu",
    params:
        parser=as_json(config.get("parser", {})),
        # Only the enabled rules decide what the prefilter spares: a mode or
        # audit change must not rerun the parse.
        filter=as_json({"rules": config.get("filter", {}).get("rules", ["question_formation", "binding"])}),
        n_shards=N_SHARDS,
        language=plan.language(config),
        code=code("parse"),
    log:
        "logs/parse/{corpus}/{size}/{shard}.log",
    benchmark:
        "benchmarks/parse/{corpus}/{size}/{shard}.tsv"
    resources:
        gpu=PARSE_GPU,
    conda:
        "../envs/corpus.yaml"
    shell:
        "{POVSTIM} parse --input {input.text} --gold {input.gold} --params {params.parser:q}"
        " --filter-params {params.filter:q} --language {params.language}"
        " --shard {wildcards.shard} --n-shards {params.n_shards} --out {output} > {log} 2>&1"


rule filter:
    input:
        text="results/corpus/{corpus}/{size}/base.txt",
        shards=expand("results/parse/{{corpus}}/{{size}}/{shard}.conllu", shard=range(N_SHARDS)),
    output:
        dpe="results/filter/{corpus}/{size}/dpe.tsv",
        summary="results/filter/{corpus}/{size}/summary.json",
        sanity_qf="results/filter/{corpus}/{size}/sanity_question_formation.tsv",
        sanity_binding="results/filter/{corpus}/{size}/sanity_binding.tsv",
    params:
        filter=as_json(config.get("filter", {})),
        audit_dir=subpath(output.summary, parent=True),
        code=code("filter", "parse"),
    log:
        "logs/filter/{corpus}/{size}.log",
    benchmark:
        "benchmarks/filter/{corpus}/{size}.tsv"
    conda:
        "../envs/corpus.yaml"
    shell:
        "{POVSTIM} filter {input.shards} --base {input.text} --params {params.filter:q}"
        " --out {output.dpe} --summary {output.summary} --audit-dir {params.audit_dir} > {log} 2>&1"


rule condition:
    input:
        unpack(condition_inputs),
    output:
        train="results/corpus/{condition}/{size}/train.txt",
        dev="results/corpus/{condition}/{size}/dev.txt",
        stats="results/corpus/{condition}/{size}/condition.json",
    params:
        dpe=lambda wc, input: f"--dpe {input.dpe}" if "dpe" in input.keys() else "",
        reinsert=lambda wc: as_json(condition_spec(wc).get("reinsert", {})),
        # [issue 16] why a `filter: true` condition is built unfiltered (no DPE rules for its language)
        not_filtered=lambda wc: plan.filter_note(config, wc.condition) or "",
        split=as_json(config.get("split", {})),
        code=code("conditions", "filter/rules.py"),
    log:
        "logs/condition/{condition}/{size}.log",
    benchmark:
        "benchmarks/condition/{condition}/{size}.tsv"
    conda:
        "../envs/corpus.yaml"
    shell:
        "{POVSTIM} condition --base {input.base} {params.dpe} --not-filtered={params.not_filtered:q} --reinsert {params.reinsert:q}"
        " --split {params.split:q} --out-train {output.train} --out-dev {output.dev}"
        " --stats {output.stats} > {log} 2>&1"


rule condition_table:
    """Counts and measured DPE rates of every condition x size, one TSV."""
    input:
        [
            f"results/corpus/{c}/{s}/condition.json"
            for c in config["conditions"]
            for s in plan.condition_sizes(config, c)
        ],
    output:
        "results/corpus/conditions.tsv",
    params:
        code=code("conditions"),
    log:
        "logs/condition/table.log",
    benchmark:
        "benchmarks/condition/table.tsv"
    conda:
        "../envs/corpus.yaml"
    shell:
        "{POVSTIM} condition --table {input} --out-table {output} > {log} 2>&1"
