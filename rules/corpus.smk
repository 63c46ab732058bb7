# Sources -> clean text -> size-matched corpora.


rule synth:
    output:
        text=f"{RESULTS}/corpus/clean/{{source}}.txt",
        conllu=f"{RESULTS}/corpus/clean/{{source}}.conllu",
    wildcard_constraints:
        source=one_of(SYNTHETIC_SOURCES),
    params:
        spec=lambda wc: as_json(config["sources"][wc.source]),
        code=stage_code("synth"),
    log:
        f"{LOGS}/synth/{{source}}.log",
    benchmark:
        f"{BENCH}/synth/{{source}}.tsv"
    conda:
        "../envs/corpus.yaml"
    shell:
        "{POVSTIM} synth --params {params.spec:q} --out-text {output.text}"
        " --out-conllu {output.conllu} > {log} 2>&1"


rule assemble:
    input:
        clean_texts,
    output:
        text=f"{RESULTS}/corpus/{{corpus}}/{{size}}/base.txt",
        stats=f"{RESULTS}/corpus/{{corpus}}/{{size}}/stats.json",
    params:
        inputs=lambda wc, input: " ".join(
            f"{s}={p}" for s, p in zip(mixture_sources(wc.corpus, wc.size), input)
        ),
        mixture=lambda wc: as_json(plan.mixture(config, wc.corpus, wc.size)),
        seed=lambda wc: config["corpora"][wc.corpus]["seed"],
        tolerance=lambda wc: as_json(config["corpora"][wc.corpus]["size_tolerance"]),
        # size_unit: words, or English-equivalent bytes with each source's language (its byte premium)
        unit=lambda wc: plan.assemble_unit_args(config, wc.corpus),
        code=stage_code("assemble"),
    log:
        f"{LOGS}/assemble/{{corpus}}/{{size}}.log",
    benchmark:
        f"{BENCH}/assemble/{{corpus}}/{{size}}.tsv"
    conda:
        "../envs/corpus.yaml"
    shell:
        "{POVSTIM} assemble --input {params.inputs} --mixture {params.mixture:q}"
        " --words {wildcards.size} {params.unit} --seed {params.seed} --tolerance {params.tolerance} --corpus-name {wildcards.corpus}"
        " --out {output.text} --stats {output.stats} > {log} 2>&1"
