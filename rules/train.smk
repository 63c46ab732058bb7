# Tokenizer per condition x size, then one model per arch x condition x size x seed.


rule tokenizer:
    input:
        "results/corpus/{condition}/{size}/train.txt",
    output:
        "results/tokenizers/{condition}/{size}/tokenizer.json",
    params:
        tok=as_json(config.get("tokenizer", {})),
        code=code("tokenizer"),
    log:
        "logs/tokenizer/{condition}/{size}.log",
    benchmark:
        "benchmarks/tokenizer/{condition}/{size}.tsv"
    conda:
        "../envs/train.yaml"
    shell:
        "{POVSTIM} tokenize --train {input} --params {params.tok:q} --out {output} > {log} 2>&1"


rule train:
    input:
        train="results/corpus/{condition}/{size}/train.txt",
        dev="results/corpus/{condition}/{size}/dev.txt",
        tokenizer="results/tokenizers/{condition}/{size}/tokenizer.json",
    output:
        config="results/models/{arch}/{condition}/{size}/seed{seed}/config.json",
        weights="results/models/{arch}/{condition}/{size}/seed{seed}/model.safetensors",
        log="results/models/{arch}/{condition}/{size}/seed{seed}/train_log.jsonl",
    params:
        arch=lambda wc: as_json(config["archs"][wc.arch]),
        training=as_json(config["training"]),
        out_dir=lambda wc, output: os.path.dirname(output.config),
        code=code("train"),
    resources:
        gpu=1,
    threads: 2
    log:
        "logs/train/{arch}/{condition}/{size}/seed{seed}.log",
    benchmark:
        "benchmarks/train/{arch}/{condition}/{size}/seed{seed}.tsv"
    conda:
        "../envs/train.yaml"
    shell:
        "{POVSTIM} train --train {input.train} --dev {input.dev} --tokenizer {input.tokenizer}"
        " --arch {params.arch:q} --params {params.training:q} --seed {wildcards.seed}"
        " --out-dir {params.out_dir} > {log} 2>&1"
