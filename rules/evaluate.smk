# Benchmarks (generated or imported) -> item scores for every model.


# Part-of-speech and object counts per word of a parsed corpus: the evidence a
# generated suite with vocabulary: corpus uses to keep a candidate word.
rule word_stats:
    input:
        expand(f"{RESULTS}/parse/{{{{corpus}}}}/{{{{size}}}}/{{shard}}.conllu", shard=range(N_SHARDS)),
    output:
        f"{RESULTS}/parse/{{corpus}}/{{size}}/words.tsv",
    params:
        code=code("benchmarks/wordstats.py", "benchmarks/stats_cli.py", "parse/conllu.py"),
    log:
        f"{LOGS}/word_stats/{{corpus}}/{{size}}.log",
    benchmark:
        f"{BENCH}/word_stats/{{corpus}}/{{size}}.tsv"
    conda:
        "../envs/train.yaml"
    shell:
        "{POVSTIM} word-stats {input} --out {output} > {log} 2>&1"


rule benchmark:
    input:
        unpack(benchmark_inputs),
    output:
        directory(f"{RESULTS}/benchmarks/{{suite}}"),
    params:
        # Only the keys that build the suite (a suite's scoring/baselines keys
        # rerun its scores, not the suite); vocabulary auto resolved; kind suite with its language.
        spec=lambda wc: as_json(plan.suite_build_spec(config, wc.suite)),
        corpora=lambda wc, input: " ".join(f"--corpus {p}" for p in input.corpora),
        stats=lambda wc, input: " ".join(f"--word-stats {p}" for p in input.stats),
        # kind suite: the suite's own files count as code (editing an item reruns it)
        code=lambda wc: code("benchmarks", "lexicon.py") + plan.suite_files_hash(config, wc.suite, REPO_DIR),
    log:
        f"{LOGS}/benchmark/{{suite}}.log",
    benchmark:
        f"{BENCH}/benchmark/{{suite}}.tsv"
    conda:
        "../envs/train.yaml"
    shell:
        "{POVSTIM} benchmark --suite {wildcards.suite} --params {params.spec:q} {params.corpora} {params.stats}"
        " --out-dir {output} > {log} 2>&1"


rule score:
    input:
        suite=f"{RESULTS}/benchmarks/{{suite}}",
        weights=f"{RESULTS}/models/{{arch}}/{{condition}}/{{size}}/seed{{seed}}/model.safetensors",
    output:
        f"{RESULTS}/scores/{{arch}}/{{condition}}/{{size}}/seed{{seed}}/{{suite}}.parquet",
    params:
        # the scoring section with the suite's own overrides (benchmarks.<suite>.scoring)
        scoring=lambda wc: as_json(plan.scoring_for(config, wc.suite)),
        model_dir=lambda wc, input: os.path.dirname(input.weights),
        meta=lambda wc: as_json(
            {"arch": wc.arch, "condition": wc.condition, "size": wc.size, "seed": int(wc.seed)}
        ),
        code=code("scoring", "families.py"),
    threads: 2
    resources:
        gpu=plan.score_gpus(config),
    log:
        f"{LOGS}/score/{{arch}}/{{condition}}/{{size}}/seed{{seed}}/{{suite}}.log",
    benchmark:
        f"{BENCH}/score/{{arch}}/{{condition}}/{{size}}/seed{{seed}}/{{suite}}.tsv"
    conda:
        "../envs/train.yaml"
    shell:
        "{POVSTIM} score --model {params.model_dir} --suite {input.suite} --params {params.scoring:q}"
        " --meta {params.meta:q} --threads {threads} --out {output} > {log} 2>&1"


# Corpus baselines scored like models (BabyBERTa word frequency; Kneser-Ney
# n-gram), trained on a condition's training text. A suite's `baselines:` puts
# them in the DAG (every condition x size; see baseline_score_files); any other
# can be asked for by path, e.g. results/demo/scores/ngram/baby/50k/seed0/posh.parquet.
ruleorder: score_baseline > score


rule score_baseline:
    input:
        suite=f"{RESULTS}/benchmarks/{{suite}}",
        corpus=f"{RESULTS}/corpus/{{condition}}/{{size}}/train.txt",
    output:
        f"{RESULTS}/scores/{{baseline}}/{{condition}}/{{size}}/seed0/{{suite}}.parquet",
    wildcard_constraints:
        baseline="unigram|ngram",
    params:
        meta=lambda wc: as_json(
            {"arch": wc.baseline, "condition": wc.condition, "size": wc.size, "seed": 0}
        ),
        code=code("scoring"),
    log:
        f"{LOGS}/score/{{baseline}}/{{condition}}/{{size}}/seed0/{{suite}}.log",
    benchmark:
        f"{BENCH}/score/{{baseline}}/{{condition}}/{{size}}/seed0/{{suite}}.tsv"
    conda:
        "../envs/train.yaml"
    shell:
        "{POVSTIM} score --baseline {wildcards.baseline} --corpus {input.corpus} --suite {input.suite}"
        " --meta {params.meta:q} --out {output} > {log} 2>&1"
