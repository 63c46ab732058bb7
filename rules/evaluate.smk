# Benchmarks (generated or imported) -> item scores for every model.


def benchmark_inputs(wildcards):
    spec = config["benchmarks"][wildcards.suite]
    if spec["kind"] != "generated":
        return []
    # Words come from the intersection of the most frequent words of the
    # corpora at the largest size (POSH §3.2).
    largest = plan.sizes(config)[-1]
    return [f"results/corpus/{c}/{largest}/base.txt" for c in config["corpora"]]


rule benchmark:
    input:
        benchmark_inputs,
    output:
        directory("results/benchmarks/{suite}"),
    params:
        spec=lambda wc: as_json(config["benchmarks"][wc.suite]),
        corpora=lambda wc, input: " ".join(f"--corpus {p}" for p in input),
        code=code("benchmarks"),
    log:
        "logs/benchmark/{suite}.log",
    benchmark:
        "benchmarks/benchmark/{suite}.tsv"
    conda:
        "../envs/train.yaml"
    shell:
        "{POVSTIM} benchmark --suite {wildcards.suite} --params {params.spec:q} {params.corpora}"
        " --out-dir {output} > {log} 2>&1"


rule score:
    input:
        suite="results/benchmarks/{suite}",
        weights="results/models/{arch}/{condition}/{size}/seed{seed}/model.safetensors",
    output:
        "results/scores/{arch}/{condition}/{size}/seed{seed}/{suite}.parquet",
    params:
        scoring=as_json(config.get("scoring", {})),
        model_dir=lambda wc, input: os.path.dirname(input.weights),
        meta=lambda wc: as_json(
            {"arch": wc.arch, "condition": wc.condition, "size": wc.size, "seed": int(wc.seed)}
        ),
        code=code("scoring"),
    resources:
        gpu=1,
    log:
        "logs/score/{arch}/{condition}/{size}/seed{seed}/{suite}.log",
    benchmark:
        "benchmarks/score/{arch}/{condition}/{size}/seed{seed}/{suite}.tsv"
    conda:
        "../envs/train.yaml"
    shell:
        "{POVSTIM} score --model {params.model_dir} --suite {input.suite} --params {params.scoring:q}"
        " --meta {params.meta:q} --out {output} > {log} 2>&1"
