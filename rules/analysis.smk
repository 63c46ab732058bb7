# Item scores -> accuracy tables, chi-square tests, Bayesian mixed model -> figures.


rule analyze:
    input:
        scores=score_files(),
    output:
        accuracy="results/analysis/accuracy.csv",
        chisq="results/analysis/chisq.csv",
        bayes=directory("results/analysis/bayes"),
    params:
        analysis=as_json(config.get("analysis", {})),
        conditions=as_json(plan.condition_meta(config)),
        out_dir=lambda wc, output: os.path.dirname(output.accuracy),
        code=code("analysis"),
    threads: 2
    log:
        "logs/analyze/analyze.log",
    benchmark:
        "benchmarks/analyze/analyze.tsv"
    conda:
        "../envs/analysis.yaml"
    shell:
        "{POVSTIM} analyze --scores {input.scores} --conditions {params.conditions:q}"
        " --params {params.analysis:q} --out-dir {params.out_dir} > {log} 2>&1"


rule figures:
    input:
        accuracy="results/analysis/accuracy.csv",
        bayes="results/analysis/bayes",
        scores=score_files(),
    output:
        directory("results/figures"),
    params:
        analysis_dir=lambda wc, input: os.path.dirname(input.accuracy),
        code=code("figures"),
    log:
        "logs/figures/figures.log",
    benchmark:
        "benchmarks/figures/figures.tsv"
    conda:
        "../envs/analysis.yaml"
    shell:
        "{POVSTIM} figures --analysis-dir {params.analysis_dir} --scores {input.scores}"
        " --out-dir {output} > {log} 2>&1"
