# Dose-response: the dose series' accuracy on their construction's target paradigms against the
# log rate of evidence (povstim dose: analysis/models/dose.py, figures/dose_cli.py), and the counterfactual audit of
# every replace operation (docs/manipulations.md). Present only when the config has a dose series or a replace.

from povstim.conditions import operations as dose_operations

DOSE_SERIES = dose_operations.dose_series(config["conditions"])
REPLACE_CONDITIONS = [c for c, spec in config["conditions"].items() if dose_operations.needs_trees(spec)]
DOSE_OUTPUTS = [f"{RESULTS}/analysis/dose"] if DOSE_SERIES or REPLACE_CONDITIONS else []


if DOSE_OUTPUTS:

    rule dose:
        input:
            tidy=f"{RESULTS}/analysis/items.parquet" if DOSE_SERIES else [],
            audits=[f"{RESULTS}/corpus/{c}/{s}/operations.tsv" for c in REPLACE_CONDITIONS
                    for s in plan.condition_sizes(config, c)],
        output:
            report(
                directory(f"{RESULTS}/analysis/dose"),
                patterns=["{name}.png", "{name}.html"],
                caption="../workflow/report/dose.rst",
                category="Dose-response",
                labels={"item": "{name}"},
            ),
        params:
            series=as_json(DOSE_SERIES),
            analysis=as_json(config["analysis"]),
            tidy=lambda wc, input: f"--items {input.tidy}" if DOSE_SERIES else "",
            audits=lambda wc, input: ("--audits " + " ".join(input.audits)) if REPLACE_CONDITIONS else "",
            code=stage_code("dose"),
        log:
            f"{LOGS}/analyze/dose.log",
        benchmark:
            f"{BENCH}/analyze/dose.tsv"
        conda:
            "../envs/analysis.yaml"
        shell:
            "{POVSTIM} dose {params.tidy} --series {params.series:q} --params {params.analysis:q} {params.audits}"
            " --out-dir {output} > {log} 2>&1"
