# Benchmarks (generated or imported) -> item scores for every model.


rule benchmark:
    input:
        benchmark_inputs,
    output:
        directory("results/benchmarks/{suite}"),
    params:
        spec=lambda wc: as_json(plan.benchmark_spec(config, wc.suite)),
        corpora=lambda wc, input: " ".join(f"--corpus {p}" for p in input),
        # kind suite: the suite's own files count as code (editing an item reruns it)
        code=lambda wc: code("benchmarks", "lexicon.py") + plan.suite_files_hash(config, wc.suite, REPO_DIR),
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
    threads: 2
    resources:
        gpu=lambda wc: job_gpus(config.get("scoring", {}).get("device", "auto")),
    log:
        "logs/score/{arch}/{condition}/{size}/seed{seed}/{suite}.log",
    benchmark:
        "benchmarks/score/{arch}/{condition}/{size}/seed{seed}/{suite}.tsv"
    conda:
        "../envs/train.yaml"
    shell:
        "{POVSTIM} score --model {params.model_dir} --suite {input.suite} --params {params.scoring:q}"
        " --meta {params.meta:q} --threads {threads} --out {output} > {log} 2>&1"


# Corpus baselines scored like models (BabyBERTa word frequency; Kneser-Ney
# n-gram), trained on a condition's training text. Not in the default targets:
# ask for them by path, e.g. results/scores/ngram/baby/50k/seed0/posh.parquet.
ruleorder: score_baseline > score


rule score_baseline:
    input:
        suite="results/benchmarks/{suite}",
        corpus="results/corpus/{condition}/{size}/train.txt",
    output:
        "results/scores/{baseline}/{condition}/{size}/seed0/{suite}.parquet",
    wildcard_constraints:
        baseline="unigram|ngram",
    params:
        meta=lambda wc: as_json(
            {"arch": wc.baseline, "condition": wc.condition, "size": wc.size, "seed": 0}
        ),
        code=code("scoring"),
    log:
        "logs/score/{baseline}/{condition}/{size}/seed0/{suite}.log",
    benchmark:
        "benchmarks/score/{baseline}/{condition}/{size}/seed0/{suite}.tsv"
    conda:
        "../envs/train.yaml"
    shell:
        "{POVSTIM} score --baseline {wildcards.baseline} --corpus {input.corpus} --suite {input.suite}"
        " --meta {params.meta:q} --out {output} > {log} 2>&1"
