# Tokenizer per condition x size, then one model per arch x condition x size x seed.


from povstim.tokenizer import study as vocab_study


rule tokenizer:
    input:
        # its own train.txt, or with tokenizer.shared those of every condition at the size / the named one's
        lambda wc: [f"{RESULTS}/corpus/{c}/{wc.size}/train.txt" for c in plan.tokenizer_corpora(config, wc.condition, wc.size)],
    output:
        f"{RESULTS}/tokenizers/{{condition}}/{{size}}/tokenizer.json",
    params:
        tok=as_json(plan.tokenizer_params(config)),
        code=stage_code("tokenize"),
    log:
        f"{LOGS}/tokenizer/{{condition}}/{{size}}.log",
    benchmark:
        f"{BENCH}/tokenizer/{{condition}}/{{size}}.tsv"
    conda:
        "../envs/train.yaml"
    shell:
        "{POVSTIM} tokenize --train {input} --params {params.tok:q} --out {output} > {log} 2>&1"


rule train:
    input:
        train=f"{RESULTS}/corpus/{{condition}}/{{size}}/train.txt",
        dev=f"{RESULTS}/corpus/{{condition}}/{{size}}/dev.txt",
        tokenizer=f"{RESULTS}/tokenizers/{{condition}}/{{size}}/tokenizer.json",
    output:
        config=f"{RESULTS}/models/{{arch}}/{{condition}}/{{size}}/seed{{seed}}/config.json",
        weights=f"{RESULTS}/models/{{arch}}/{{condition}}/{{size}}/seed{{seed}}/model.safetensors",
        log=f"{RESULTS}/models/{{arch}}/{{condition}}/{{size}}/seed{{seed}}/train_log.jsonl",
    params:
        arch=lambda wc: as_json(config["archs"][wc.arch]),
        # threads only changes speed, so editing it does not retrain (the CLI gets --threads)
        training=as_json({k: v for k, v in config["training"].items() if k != "threads"}),
        out_dir=lambda wc, output: os.path.dirname(output.config),
        # recorded in train_summary.json, so `povstim score` on the folder labels its rows by itself
        meta=lambda wc: as_json({"arch": wc.arch, "condition": wc.condition, "size": wc.size}),
        # the experiment's index of trained runs: a void duplicate (identical corpus) links the model trained
        # for its twin instead of training again (train/reuse.py)
        reuse=f"{RESULTS}/models/.reuse",
        code=stage_code("train"),
    resources:
        # 1 only when the job will use a GPU alone (povstim.devices.job_gpus); a small job holds
        # none and shares a GPU with up to gpus.slots - 1 others (gpu_share, povstim.devices)
        gpu=lambda wc: plan.train_gpus(config, wc.arch),
        gpu_share=lambda wc: plan.train_gpu_share(config, wc.arch),
    # Tiny CPU models scale poorly past one core, so by default two jobs share two
    # cores rather than one job using both; training.threads raises it.
    threads: lambda wc: plan.train_threads(config, wc.arch)
    log:
        f"{LOGS}/train/{{arch}}/{{condition}}/{{size}}/seed{{seed}}.log",
    benchmark:
        f"{BENCH}/train/{{arch}}/{{condition}}/{{size}}/seed{{seed}}.tsv"
    conda:
        "../envs/train.yaml"
    shell:
        "POVSTIM_GPU_SHARE={resources.gpu_share} {POVSTIM} train --train {input.train} --dev {input.dev}"
        " --tokenizer {input.tokenizer}"
        " --arch {params.arch:q} --params {params.training:q} --seed {wildcards.seed}"
        " --out-dir {params.out_dir} --meta {params.meta:q} --reuse-dir {params.reuse}"
        " --threads {threads} > {log} 2>&1"


# POSH App. D / Table 9: corpus token counts per vocab size, and the vocab size
# that best balances compression across corpora. Not needed by training (the
# tokenizer: section fixes the vocab); a report target of its own.
VOCAB_STUDY = config.get("vocab_study") or {}
VOCAB_STUDY_CORPORA = vocab_study.study_corpora(config)


rule vocab_study:
    input:
        [f"{RESULTS}/corpus/{c}/{s}/train.txt" for c, s in VOCAB_STUDY_CORPORA],
    output:
        table=f"{RESULTS}/tokenizers/study/table9.tsv",
        wide=f"{RESULTS}/tokenizers/study/table9_wide.tsv",
        discrepancy=f"{RESULTS}/tokenizers/study/discrepancy.tsv",
        choice=f"{RESULTS}/tokenizers/study/choice.json",
    params:
        tok=as_json(plan.tokenizer_params(config)),
        study=as_json(VOCAB_STUDY),
        corpora=" ".join(
            f"--corpus {c} {s} {RESULTS}/corpus/{c}/{s}/train.txt" for c, s in VOCAB_STUDY_CORPORA
        ),
        out_dir=lambda wc, output: os.path.dirname(output.table),
        code=stage_code("vocab-study"),
    log:
        f"{LOGS}/tokenizer/vocab_study.log",
    benchmark:
        f"{BENCH}/tokenizer/vocab_study.tsv"
    conda:
        "../envs/train.yaml"
    shell:
        "{POVSTIM} vocab-study {params.corpora} --params {params.tok:q} --study {params.study:q}"
        " --out-dir {params.out_dir} > {log} 2>&1"
