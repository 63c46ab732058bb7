# Parse -> DPE filter (POSH App. C) -> training conditions.


rule parse:
    input:
        text="results/corpus/{corpus}/{size}/base.txt",
        gold=gold_conllus,
    output:
        "results/parse/{corpus}/{size}/{shard}.conllu",
    params:
        parser=as_json(config.get("parser", {})),
        filter=as_json(config.get("filter", {})),
        n_shards=N_SHARDS,
        code=code("parse"),
    log:
        "logs/parse/{corpus}/{size}/{shard}.log",
    benchmark:
        "benchmarks/parse/{corpus}/{size}/{shard}.tsv"
    conda:
        "../envs/corpus.yaml"
    shell:
        "{POVSTIM} parse --input {input.text} --gold {input.gold} --params {params.parser:q}"
        " --filter-params {params.filter:q}"
        " --shard {wildcards.shard} --n-shards {params.n_shards} --out {output} > {log} 2>&1"


rule filter:
    input:
        text="results/corpus/{corpus}/{size}/base.txt",
        shards=expand("results/parse/{{corpus}}/{{size}}/{shard}.conllu", shard=range(N_SHARDS)),
    output:
        dpe="results/filter/{corpus}/{size}/dpe.tsv",
        summary="results/filter/{corpus}/{size}/summary.json",
    params:
        filter=as_json(config.get("filter", {})),
        code=code("filter"),
    log:
        "logs/filter/{corpus}/{size}.log",
    benchmark:
        "benchmarks/filter/{corpus}/{size}.tsv"
    conda:
        "../envs/corpus.yaml"
    shell:
        "{POVSTIM} filter {input.shards} --parser gold --params {params.filter:q}"
        " --out {output.dpe} --summary {output.summary} > {log} 2>&1"


def condition_inputs(wildcards):
    spec = condition_spec(wildcards)
    inputs = {"base": f"results/corpus/{spec['from']}/{wildcards.size}/base.txt"}
    if spec.get("filter"):
        inputs["dpe"] = f"results/filter/{spec['from']}/{wildcards.size}/dpe.tsv"
    return inputs


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
        split=as_json(config.get("split", {})),
        code=code("conditions"),
    log:
        "logs/condition/{condition}/{size}.log",
    benchmark:
        "benchmarks/condition/{condition}/{size}.tsv"
    conda:
        "../envs/corpus.yaml"
    shell:
        "{POVSTIM} condition --base {input.base} {params.dpe} --reinsert {params.reinsert:q}"
        " --split {params.split:q} --out-train {output.train} --out-dev {output.dev}"
        " --stats {output.stats} > {log} 2>&1"
