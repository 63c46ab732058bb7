# Benchmarks (generated or imported) -> item scores for every model.

import shlex


# Part-of-speech and object counts per word of a parsed corpus: the evidence a
# generated suite with vocabulary: corpus uses to keep a candidate word.
rule word_stats:
    input:
        expand(f"{RESULTS}/parse/{{{{corpus}}}}/{{{{size}}}}/{{shard}}.conllu", shard=range(N_SHARDS)),
    output:
        f"{RESULTS}/parse/{{corpus}}/{{size}}/words.tsv",
    params:
        code=stage_code("word-stats"),
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
        code=lambda wc: stage_code("benchmark") + plan.suite_files_hash(config, wc.suite, REPO_DIR),
    log:
        f"{LOGS}/benchmark/{{suite}}.log",
    benchmark:
        f"{BENCH}/benchmark/{{suite}}.tsv"
    conda:
        "../envs/train.yaml"
    shell:
        "{POVSTIM} benchmark --suite {wildcards.suite} --params {params.spec:q} {params.corpora} {params.stats}"
        " --out-dir {output} > {log} 2>&1"


# scoring.group (speed only, the scores are the same): none = one job per model; seeds = one job per
# arch x condition x size scoring all its seeds; all = one job per suite scoring every model. Every
# variant is this one rule calling `povstim score-group` (one --job per model; with a single job it
# writes exactly what `povstim score` writes), so a grouped job pays the torch/transformers imports,
# CUDA start-up and GPU claim once.
SCORE_GROUP = config["scoring"]["group"]
# group only changes speed: not a param, so switching it reruns nothing
SCORE_ARCHS = sorted({m.arch for m in MODELS})
if SCORE_GROUP == "seeds":
    SCORE_OUTPUTS = [f"{RESULTS}/scores/{{arch}}/{{condition}}/{{size}}/seed{s}/{{suite}}.parquet" for s in config["seeds"]]
    SCORE_JOB = "{arch}/{condition}/{size}/seeds/{suite}"
elif SCORE_GROUP == "all" and MODELS:
    SCORE_OUTPUTS = [f"{RESULTS}/scores/{m.path}/{{suite}}.parquet" for m in MODELS]
    SCORE_JOB = "all/{suite}"
else:
    SCORE_GROUP = "none"
    SCORE_OUTPUTS = [f"{RESULTS}/scores/{{arch}}/{{condition}}/{{size}}/seed{{seed}}/{{suite}}.parquet"]
    SCORE_JOB = "{arch}/{condition}/{size}/seed{seed}/{suite}"


def score_group_models(wildcards):
    """The models one scoring job scores (plan.Model), in the order of its outputs."""
    if SCORE_GROUP == "none":
        return [plan.Model(wildcards.arch, wildcards.condition, wildcards.size, int(wildcards.seed))]
    if SCORE_GROUP == "seeds":
        return [m for m in MODELS if (m.arch, m.condition, m.size) == (wildcards.arch, wildcards.condition, wildcards.size)]
    return MODELS


def score_jobs(wildcards, output):
    return " ".join(
        f"--job {model_dir(m)} {shlex.quote(as_json({'arch': m.arch, 'condition': m.condition, 'size': m.size, 'seed': int(m.seed)}))} {out}"
        for m, out in zip(score_group_models(wildcards), output)
    )


def score_job_archs(wildcards):
    return sorted({m.arch for m in score_group_models(wildcards)})


def score_corpora(wildcards):
    """scoring.metric slor: each job's condition's train.txt (its unigram model), in the jobs' order; else none."""
    return [f"{RESULTS}/corpus/{c}" for c in plan.slor_corpora(config, wildcards.suite, score_group_models(wildcards))]


rule score:
    input:
        suite=f"{RESULTS}/benchmarks/{{suite}}",
        weights=lambda wc: [f"{model_dir(m)}/model.safetensors" for m in score_group_models(wc)],
        # scoring.metric slor: the unigram model's training text of each job (its condition's train split)
        corpora=score_corpora,
    output:
        SCORE_OUTPUTS,
    wildcard_constraints:
        arch=one_of(SCORE_ARCHS),
    params:
        # the scoring section with the suite's own overrides (benchmarks.<suite>.scoring); `group` only
        # decides how many models a job scores, so it is left out (changing it reruns nothing)
        scoring=lambda wc: as_json({k: v for k, v in plan.scoring_for(config, wc.suite).items() if k != "group"}),
        jobs=score_jobs,
        corpora=lambda wc: " ".join(f"--job-corpus {p}" for p in score_corpora(wc)),
        code=stage_code("score-group"),
    threads: 2
    resources:
        # a job of small models shares a GPU (gpu=0, gpu_share=gpus.slots; povstim.devices)
        gpu=lambda wc: plan.score_gpus(config, arch=score_job_archs(wc)),
        gpu_share=lambda wc: plan.score_gpu_share(config, score_job_archs(wc)),
    log:
        f"{LOGS}/score/{SCORE_JOB}.log",
    benchmark:
        f"{BENCH}/score/{SCORE_JOB}.tsv"
    conda:
        "../envs/train.yaml"
    shell:
        "POVSTIM_GPU_SHARE={resources.gpu_share} {POVSTIM} score-group --suite {input.suite}"
        " --params {params.scoring:q} --threads {threads} {params.jobs} {params.corpora} > {log} 2>&1"


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
        code=stage_code("score"),
    log:
        f"{LOGS}/score/{{baseline}}/{{condition}}/{{size}}/seed0/{{suite}}.log",
    benchmark:
        f"{BENCH}/score/{{baseline}}/{{condition}}/{{size}}/seed0/{{suite}}.tsv"
    conda:
        "../envs/train.yaml"
    shell:
        "{POVSTIM} score --baseline {wildcards.baseline} --corpus {input.corpus} --suite {input.suite}"
        " --meta {params.meta:q} --out {output} > {log} 2>&1"


# The grid's n-gram learners (archs of family kneser-ney, plan.corpus_models): fitted on the condition's
# train split and scored in one job, rows in the models' item-score format, so Tables 3/8 and the Bayesian
# model get them beside the trained models. Deterministic: one per arch x condition x size, labelled with the
# first seed (docs/analysis.md, "n-gram rows").
CORPUS_ARCHS = sorted({m.arch for m in CORPUS_MODELS})
if CORPUS_ARCHS:
    ruleorder: score_corpus_model > score_baseline

    rule score_corpus_model:
        input:
            suite=f"{RESULTS}/benchmarks/{{suite}}",
            corpus=f"{RESULTS}/corpus/{{condition}}/{{size}}/train.txt",
        output:
            f"{RESULTS}/scores/{{arch}}/{{condition}}/{{size}}/seed{{seed}}/{{suite}}.parquet",
        wildcard_constraints:
            arch=one_of(CORPUS_ARCHS),
            seed=str(config["seeds"][0]),
        params:
            meta=lambda wc: as_json(
                {"arch": wc.arch, "condition": wc.condition, "size": wc.size, "seed": int(wc.seed)}
            ),
            order=lambda wc: plan.corpus_model_order(config, wc.arch),
            code=stage_code("score"),
        log:
            f"{LOGS}/score/{{arch}}/{{condition}}/{{size}}/seed{{seed}}/{{suite}}.log",
        benchmark:
            f"{BENCH}/score/{{arch}}/{{condition}}/{{size}}/seed{{seed}}/{{suite}}.tsv"
        conda:
            "../envs/train.yaml"
        shell:
            "{POVSTIM} score --baseline ngram --order {params.order} --corpus {input.corpus} --suite {input.suite}"
            " --meta {params.meta:q} --out {output} > {log} 2>&1"


# Models trained elsewhere (external_models: a Hugging Face folder with chck_* / checkpoint-N / povstim
# checkpoints, or a hub repository at its revisions), scored like the trained models: rows arch `external`,
# condition = the entry's name, every checkpoint with its words seen (povstim score-model; docs/evaluation.md).
if EXTERNAL_MODELS:

    rule score_external:
        input:
            suite=f"{RESULTS}/benchmarks/{{suite}}",
        output:
            f"{RESULTS}/scores/external/{{name}}/{{suite}}.parquet",
        wildcard_constraints:
            name=one_of(EXTERNAL_MODELS),
        params:
            path=lambda wc: external_model_path(wc.name),
            flags=lambda wc: plan.external_model_flags(config, wc.name),
            scoring=lambda wc: as_json({k: v for k, v in plan.scoring_for(config, wc.suite).items() if k != "group"}),
            code=stage_code("score-model"),
        threads: 2
        resources:
            # a whole GPU when scoring.device would put the job on one (its size is unknown: it shares none)
            gpu=lambda wc: plan.score_gpus(config),
        log:
            f"{LOGS}/score/external/{{name}}/{{suite}}.log",
        benchmark:
            f"{BENCH}/score/external/{{name}}/{{suite}}.tsv"
        conda:
            "../envs/train.yaml"
        shell:
            "{POVSTIM} score-model {params.path:q} --suite {input.suite} --out {output} --name {wildcards.name}"
            " {params.flags} --params {params.scoring:q} --where external_models.{wildcards.name}.path"
            " --threads {threads} > {log} 2>&1"
