# Experiment 3 (POSH §7): inductive biases as properties of an arch (archs.<name>.bias; docs/exp3.md).
#
#   dyck_corpus    shuffled k-Dyck corpus                 {RESULTS}/pretrain/dyck-corpora/{dyck_corpus}/
#   dyck_pretrain  one pre-pretrained checkpoint, shared  {RESULTS}/pretrain/dyck-models/{dyck_model}/
#   tpt_parse      a parse of every train/dev sentence    {RESULTS}/parse/tpt/{backend}/{condition}/{size}/{split}.conllu
#   train_biased   `rule train` for archs with a bias, with those extra inputs
#
# Which corpus/checkpoint an arch needs is decided by povstim.train.bias_plan (tested Python); the
# ids are hashes of every setting that decides the file, so archs, seeds and conditions that
# ask for the same thing share one node.

from povstim import biases as bias_plan
from povstim.devices import slots as device_slots
from povstim.train.bias_plan import dyck_plan

DYCK = dyck_plan(config)
BIAS_ARCHS = [a for a, spec in config["archs"].items() if bias_plan.of(spec)]
TPT_BACKENDS = sorted(
    {bias_plan.tpt_parser(config, spec).get("backend", "gold") for spec in config["archs"].values()
     if "tpt" in bias_plan.of(spec)}
)


def dyck_arch(model_id):
    """One arch that uses this Dyck checkpoint (for its threads / GPU resources)."""
    return next(a for a, m in DYCK["archs"].items() if m == model_id)


rule dyck_corpus:
    output:
        train=f"{RESULTS}/pretrain/dyck-corpora/{{dyck_corpus}}/train.txt",
        dev=f"{RESULTS}/pretrain/dyck-corpora/{{dyck_corpus}}/dev.txt",
        stats=f"{RESULTS}/pretrain/dyck-corpora/{{dyck_corpus}}/stats.json",
    wildcard_constraints:
        dyck_corpus=one_of(DYCK["corpora"]),
    params:
        spec=lambda wc: as_json(DYCK["corpora"][wc.dyck_corpus]),
        code=stage_code("dyck"),
    log:
        f"{LOGS}/dyck/corpus/{{dyck_corpus}}.log",
    benchmark:
        f"{BENCH}/dyck/corpus/{{dyck_corpus}}.tsv"
    conda:
        "../envs/train.yaml"
    shell:
        "{POVSTIM} dyck generate --params {params.spec:q} --out-train {output.train} --out-dev {output.dev}"
        " --stats {output.stats} > {log} 2>&1"


rule dyck_pretrain:
    input:
        train=lambda wc: f"{RESULTS}/pretrain/dyck-corpora/{DYCK['models'][wc.dyck_model]['corpus']}/train.txt",
        dev=lambda wc: f"{RESULTS}/pretrain/dyck-corpora/{DYCK['models'][wc.dyck_model]['corpus']}/dev.txt",
    output:
        config=f"{RESULTS}/pretrain/dyck-models/{{dyck_model}}/config.json",
        weights=f"{RESULTS}/pretrain/dyck-models/{{dyck_model}}/model.safetensors",
        log=f"{RESULTS}/pretrain/dyck-models/{{dyck_model}}/train_log.jsonl",
    wildcard_constraints:
        dyck_model=one_of(DYCK["models"]),
    params:
        arch=lambda wc: as_json(DYCK["models"][wc.dyck_model]["arch"]),
        training=lambda wc: as_json(DYCK["models"][wc.dyck_model]["training"]),
        dyck=lambda wc: as_json(
            {"k": DYCK["corpora"][DYCK["models"][wc.dyck_model]["corpus"]]["k"],
             "steps": DYCK["models"][wc.dyck_model]["steps"]}
        ),
        vocab=lambda wc: DYCK["models"][wc.dyck_model]["vocab_size"],
        seed=lambda wc: DYCK["models"][wc.dyck_model]["seed"],
        out_dir=lambda wc, output: os.path.dirname(output.config),
        code=stage_code("dyck"),
    resources:
        gpu=lambda wc: plan.train_gpus(config, dyck_arch(wc.dyck_model)),
        gpu_share=lambda wc: plan.train_gpu_share(config, dyck_arch(wc.dyck_model)),
    threads: lambda wc: plan.train_threads(config, dyck_arch(wc.dyck_model))
    log:
        f"{LOGS}/dyck/pretrain/{{dyck_model}}.log",
    benchmark:
        f"{BENCH}/dyck/pretrain/{{dyck_model}}.tsv"
    conda:
        "../envs/train.yaml"
    shell:
        "POVSTIM_GPU_SHARE={resources.gpu_share} {POVSTIM} dyck pretrain --train {input.train} --dev {input.dev} --arch {params.arch:q}"
        " --params {params.training:q} --dyck {params.dyck:q} --vocab-size {params.vocab} --seed {params.seed}"
        " --out-dir {params.out_dir} --threads {threads} --no-progress > {log} 2>&1"


def tpt_gold(wildcards):
    """The synthetic sources' gold CoNLL-U (the gold backend looks every sentence up by its text)."""
    if wildcards.backend != "gold":
        return []
    corpus = config["conditions"][wildcards.condition]["from"]
    return [f"{RESULTS}/corpus/clean/{s}.conllu" for s in mixture_sources(corpus, wildcards.size)
            if s in SYNTHETIC_SOURCES]


rule tpt_parse:
    input:
        text=f"{RESULTS}/corpus/{{condition}}/{{size}}/{{split}}.txt",
        gold=tpt_gold,
    output:
        f"{RESULTS}/parse/tpt/{{backend}}/{{condition}}/{{size}}/{{split}}.conllu",
    wildcard_constraints:
        backend=one_of(TPT_BACKENDS),
        split="train|dev",
    params:
        parser=lambda wc: as_json({**config["parser"], "backend": wc.backend}),
        language=plan.language(config),
        code=stage_code("parse"),
    resources:
        gpu=lambda wc: device_slots.job_gpus(config["parser"]["device"]) if wc.backend == "stanza" else 0,
    log:
        f"{LOGS}/parse/tpt/{{backend}}/{{condition}}/{{size}}/{{split}}.log",
    benchmark:
        f"{BENCH}/parse/tpt/{{backend}}/{{condition}}/{{size}}/{{split}}.tsv"
    conda:
        "../envs/corpus.yaml"
    shell:
        # every line parsed (no prefilter), one shard: '# sent_id' is the line index TPT aligns by
        "{POVSTIM} parse --input {input.text} --gold {input.gold} --params {params.parser:q} --no-prefilter"
        " --language {params.language} --shard 0 --n-shards 1 --out {output} > {log} 2>&1"


def biased_train_inputs(wildcards):
    spec = config["archs"][wildcards.arch]
    bias = bias_plan.of(spec)
    out = {}
    if "dyck" in bias:
        out["init"] = f"{RESULTS}/pretrain/dyck-models/{DYCK['archs'][wildcards.arch]}/model.safetensors"
    if "tpt" in bias:
        backend = bias_plan.tpt_parser(config, spec).get("backend", "gold")
        base = f"{RESULTS}/parse/tpt/{backend}/{wildcards.condition}/{wildcards.size}"
        out["parses"] = [f"{base}/train.conllu", f"{base}/dev.conllu"]
    return out


def biased_train_flags(wildcards, input):
    flags = []
    if "init" in input.keys():
        flags.append(f"--init-from {os.path.dirname(input.init)}")
    if "parses" in input.keys():
        flags.append(f"--parses {' '.join(input.parses)}")
    return " ".join(flags)


rule train_biased:
    """`rule train` for an arch with a bias block: the same command, plus the Dyck checkpoint / the parses."""
    input:
        unpack(biased_train_inputs),
        train=f"{RESULTS}/corpus/{{condition}}/{{size}}/train.txt",
        dev=f"{RESULTS}/corpus/{{condition}}/{{size}}/dev.txt",
        tokenizer=f"{RESULTS}/tokenizers/{{condition}}/{{size}}/tokenizer.json",
    output:
        config=f"{RESULTS}/models/{{arch}}/{{condition}}/{{size}}/seed{{seed}}/config.json",
        weights=f"{RESULTS}/models/{{arch}}/{{condition}}/{{size}}/seed{{seed}}/model.safetensors",
        log=f"{RESULTS}/models/{{arch}}/{{condition}}/{{size}}/seed{{seed}}/train_log.jsonl",
    wildcard_constraints:
        arch=one_of(BIAS_ARCHS),
    params:
        arch=lambda wc: as_json(config["archs"][wc.arch]),
        training=as_json({k: v for k, v in config["training"].items() if k != "threads"}),
        extra=biased_train_flags,
        out_dir=lambda wc, output: os.path.dirname(output.config),
        meta=lambda wc: as_json({"arch": wc.arch, "condition": wc.condition, "size": wc.size}),
        # the experiment's index of trained runs: a void duplicate (identical corpus) links the model trained
        # for its twin instead of training again (train/reuse.py)
        reuse=f"{RESULTS}/models/.reuse",
        code=stage_code("train"),
    resources:
        gpu=lambda wc: plan.train_gpus(config, wc.arch),
        gpu_share=lambda wc: plan.train_gpu_share(config, wc.arch),
    threads: lambda wc: plan.train_threads(config, wc.arch)
    log:
        f"{LOGS}/train/{{arch}}/{{condition}}/{{size}}/seed{{seed}}.log",
    benchmark:
        f"{BENCH}/train/{{arch}}/{{condition}}/{{size}}/seed{{seed}}.tsv"
    conda:
        "../envs/train.yaml"
    shell:
        "POVSTIM_GPU_SHARE={resources.gpu_share} {POVSTIM} train --train {input.train} --dev {input.dev} --tokenizer {input.tokenizer}"
        " --arch {params.arch:q} --params {params.training:q} --seed {wildcards.seed}"
        " --out-dir {params.out_dir} --meta {params.meta:q} --reuse-dir {params.reuse}"
        " --threads {threads} {params.extra} > {log} 2>&1"


ruleorder: train_biased > train
