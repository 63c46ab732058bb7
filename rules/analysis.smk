# Item scores -> accuracy tables, chi-square tests, Bayesian mixed model -> figures.
# Every table and figure is marked for `snakemake --report results/report.html`; the captions
# live in workflow/report/ (paths below are relative to this file).

report: "../workflow/report/workflow.rst"

from povstim import biases as bias_plan  # the arch-level 'bias' predictor (Experiment 3)


rule analyze:
    input:
        scores=score_files(),
    output:
        accuracy=report(
            "results/analysis/accuracy.csv",
            caption="../workflow/report/accuracy.rst",
            category="Tables",
            labels={"table": "accuracy per model"},
        ),
        chisq=report(
            "results/analysis/chisq.csv",
            caption="../workflow/report/chisq.rst",
            category="Tables",
            labels={"table": "chi-square tests"},
        ),
        curves="results/analysis/accuracy_by_step.csv",
        tidy="results/analysis/items.parquet",
        tables=report(
            directory("results/analysis/tables"),
            patterns=["{name}.html"],
            caption="../workflow/report/tables.rst",
            category="Tables",
            labels={"table": "{name}"},
        ),
        bayes=report(
            directory("results/analysis/bayes"),
            patterns=["{name}.html"],
            caption="../workflow/report/bayes.rst",
            category="Bayesian model",
            labels={"table": "{name}"},
        ),
    params:
        analysis=as_json(config.get("analysis", {})),
        conditions=as_json(plan.condition_meta(config)),
        archs=as_json(bias_plan.arch_meta(config)),
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
        "{POVSTIM} analyze --scores {input.scores} --conditions {params.conditions:q} --archs {params.archs:q}"
        " --params {params.analysis:q} --out-dir {params.out_dir} --cores {threads} > {log} 2>&1"


rule figures:
    input:
        accuracy="results/analysis/accuracy.csv",
        curves="results/analysis/accuracy_by_step.csv",
        bayes="results/analysis/bayes",
        audits=filter_audits(),
        study=tokenizer_studies(),
    output:
        figures=report(
            directory("results/figures"),
            patterns=["{name}.png"],
            caption="../workflow/report/figures.rst",
            category="Figures",
            labels={"figure": "{name}"},
        ),
        run_info=report(
            "results/report/run_info.html",
            caption="../workflow/report/run_info.rst",
            category="Run info",
            labels={"page": "config and package versions"},
        ),
    params:
        analysis_dir=lambda wc, input: os.path.dirname(input.accuracy),
        audits=lambda wc, input: f"--filter-audit {' '.join(input.audits)}" if input.audits else "",
        study=lambda wc, input: f"--tokenizer-study {' '.join(input.study)}" if input.study else "",
        # The whole config is shown in the report; figures are cheap to redraw.
        config=as_json(config),
        code=code("figures", "analysis/tidy.py", "analysis/tables.py", "analysis/cli.py"),
    log:
        "logs/figures/figures.log",
    benchmark:
        "benchmarks/figures/figures.tsv"
    conda:
        "../envs/analysis.yaml"
    shell:
        "{POVSTIM} figures --analysis-dir {params.analysis_dir} {params.audits} {params.study}"
        " --out-dir {output.figures} --run-info {output.run_info} --config {params.config:q} > {log} 2>&1"
