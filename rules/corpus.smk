# Sources -> clean text -> size-matched corpora.


rule synth:
    output:
        text="results/corpus/clean/{source}.txt",
        conllu="results/corpus/clean/{source}.conllu",
    wildcard_constraints:
        source=one_of(SYNTHETIC_SOURCES),
    params:
        spec=lambda wc: as_json(config["sources"][wc.source]),
        code=code("synth", "lexicon.py", "parse/conllu.py"),
    log:
        "logs/synth/{source}.log",
    benchmark:
        "benchmarks/synth/{source}.tsv"
    conda:
        "../envs/corpus.yaml"
    shell:
        "{POVSTIM} synth --params {params.spec:q} --out-text {output.text}"
        " --out-conllu {output.conllu} > {log} 2>&1"


rule assemble:
    input:
        clean_texts,
    output:
        text="results/corpus/{corpus}/{size}/base.txt",
        stats="results/corpus/{corpus}/{size}/stats.json",
    params:
        inputs=lambda wc, input: " ".join(
            f"{s}={p}" for s, p in zip(mixture_sources(wc.corpus, wc.size), input)
        ),
        mixture=lambda wc: as_json(plan.mixture(config, wc.corpus, wc.size)),
        seed=lambda wc: config["corpora"][wc.corpus].get("seed", 0),
        code=code("corpus"),
    log:
        "logs/assemble/{corpus}/{size}.log",
    benchmark:
        "benchmarks/assemble/{corpus}/{size}.tsv"
    conda:
        "../envs/corpus.yaml"
    shell:
        "{POVSTIM} assemble --input {params.inputs} --mixture {params.mixture:q}"
        " --words {wildcards.size} --seed {params.seed}"
        " --out {output.text} --stats {output.stats} > {log} 2>&1"
