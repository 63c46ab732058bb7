# Item scores -> accuracy tables, chi-square tests, Bayesian mixed model -> figures.
# Every table and figure is marked for the report (`povstim report CONFIG` -> results/<exp>/report.html); the captions
# live in workflow/report/ (paths below are relative to this file).

report: "../workflow/report/workflow.rst"

from povstim import biases as bias_plan  # the arch-level 'bias' predictor (Experiment 3)
from povstim.train.params import word_checkpoints_wanted  # whether the config trains word-budget checkpoints
from povstim.constructions.delta import comparison_targets, named_conditions  # the construction-delta rule


rule analyze:
    input:
        scores=score_files(),
        # suites that may ship norms (kind suite): norms.json/csv -> age equivalents
        suites=[f"{RESULTS}/benchmarks/{s}" for s in plan.norms_suites(config)],
        # Corpus baselines the suites ask for (benchmarks.<suite>.baselines),
        # kept apart from the models' scores (they are not models of a condition
        # for Tables 3/8/12); benchmarks.audit.solved_by_baselines reads them.
        baselines=baseline_score_files(),
        # models trained elsewhere (external_models; rule score_external): tables and curves, not the Bayesian model
        external=external_score_files(),
    output:
        accuracy=report(
            f"{RESULTS}/analysis/accuracy.csv",
            caption="../workflow/report/accuracy.rst",
            category="Tables",
            labels={"table": "accuracy per model"},
        ),
        chisq=report(
            f"{RESULTS}/analysis/chisq.csv",
            caption="../workflow/report/chisq.rst",
            category="Tables",
            labels={"table": "chi-square tests"},
        ),
        curves=f"{RESULTS}/analysis/accuracy_by_step.csv",
        tidy=f"{RESULTS}/analysis/items.parquet",
        tables=report(
            directory(f"{RESULTS}/analysis/tables"),
            patterns=["{name}.html"],
            caption="../workflow/report/tables.rst",
            category="Tables",
            labels={"table": "{name}"},
        ),
        bayes=report(
            directory(f"{RESULTS}/analysis/bayes"),
            patterns=["{name}.html"],
            caption="../workflow/report/bayes.rst",
            category="Bayesian model",
            labels={"table": "{name}"},
        ),
    params:
        analysis=as_json(config["analysis"]),
        conditions=as_json(plan.condition_meta(config)),
        # + each arch's learner family and score scale: the Bayesian models are fitted per learner
        archs=as_json(plan.analysis_archs(config, bias_plan.arch_meta(config))),
        out_dir=lambda wc, output: os.path.dirname(output.accuracy),
        suite_dirs=lambda wc, input: f"--suite-dirs {' '.join(input.suites)}" if input.suites else "",
        external=lambda wc, input: f"--external-scores {' '.join(input.external)}" if input.external else "",
        # every condition's actual words beside its size label in the captions of Tables 3/8 (read as params, like
        # the guardrails' --conditions: an analysis-only run has none, and the scores already depend on them)
        # (and BABY's shortfall beside the BABY-F vs. BABY sentence, at the guardrail's reinsert_share)
        sizes=" ".join(["--size-label", str(config["guardrails"]["size_label"]),
                        "--reinsert-share", str(config["guardrails"]["reinsert_share"]), "--condition-stats"]
                       + [f"{RESULTS}/corpus/{c}/{s}/condition.json" for c in config["conditions"]
                          for s in plan.condition_sizes(config, c)]),
        code=stage_code("analyze"),
    # one MCMC chain per core (POSH's 4 chains at once; analysis.chains); the sampler is told the same number,
    # so the job uses what it holds (Snakemake caps it at --cores); the draws do not depend on it
    threads: lambda wc: int(config["analysis"].get("chains", 4))
    log:
        f"{LOGS}/analyze/analyze.log",
    benchmark:
        f"{BENCH}/analyze/analyze.tsv"
    conda:
        "../envs/analysis.yaml"
    shell:
        "{POVSTIM} analyze --scores {input.scores} --conditions {params.conditions:q} --archs {params.archs:q}"
        " --params {params.analysis:q} --out-dir {params.out_dir} --cores {threads}"
        " {params.suite_dirs} {params.sizes} {params.external} > {log} 2>&1"


rule figures:
    input:
        accuracy=f"{RESULTS}/analysis/accuracy.csv",
        curves=f"{RESULTS}/analysis/accuracy_by_step.csv",
        bayes=f"{RESULTS}/analysis/bayes",
        audits=[path for _, _, path in filter_audits()],
        study=tokenizer_studies(),
        # the MSGS probe summary when the config has probes.msgs (rules/probe.smk), so this target runs it
        probes=lambda wc: PROBE_OUTPUTS,
        # not drawn here: the filter validation has its own figure; this puts it in the DAG of results/figures
        validation=filter_validation_outputs(),
    output:
        figures=report(
            directory(f"{RESULTS}/figures"),
            patterns=["{name}.png"],
            caption="../workflow/report/figures.rst",
            category="Figures",
            labels={"figure": "{name}"},
        ),
        run_info=report(
            f"{RESULTS}/report/run_info.html",
            caption="../workflow/report/run_info.rst",
            category="Run info",
            labels={"page": "config and package versions"},
        ),
    params:
        analysis_dir=lambda wc, input: os.path.dirname(input.accuracy),
        audits=" ".join(f"--filter-audit {c} {s} {p}" for c, s, p in filter_audits()),
        study=lambda wc, input: f"--tokenizer-study {' '.join(input.study)}" if input.study else "",
        # The whole config is shown in the report; figures are cheap to redraw.
        config=as_json(config),
        code=stage_code("figures", "figures/children_table7.yaml"),
    # figures are drawn several at once (one forked process each; same files): the job ends the DAG, so
    # the cores are otherwise idle (Snakemake scales this down to --cores)
    threads: 8
    log:
        f"{LOGS}/figures/figures.log",
    benchmark:
        f"{BENCH}/figures/figures.tsv"
    conda:
        "../envs/analysis.yaml"
    shell:
        "{POVSTIM} figures --analysis-dir {params.analysis_dir} {params.audits} {params.study}"
        " --out-dir {output.figures} --run-info {output.run_info} --config {params.config:q} --cores {threads}"
        " > {log} 2>&1"


# When is each paradigm acquired (docs/analysis.md, "Acquisition points"): only when an arch trains with
# training.checkpoint_words, whose scored checkpoints carry words seen; CHILDES files for the children's side
# (acquisition.childes) are inputs.
ACQUISITION_OUTPUTS = [f"{RESULTS}/analysis/acquisition"] if word_checkpoints_wanted(config) else []


ACQUISITION = config.get("acquisition") or {}
# word learning for models (acquisition.word_learning): one word-curves job per model trained with word checkpoints
WORD_CURVES = [f"{RESULTS}/analysis/word_curves/{m.path}.csv" for m in MODELS
               if word_checkpoints_wanted({"training": config["training"], "archs": {m.arch: config["archs"][m.arch]}})] \
    if ACQUISITION.get("word_learning") else []


rule word_curves:
    input:
        weights=f"{RESULTS}/models/{{arch}}/{{condition}}/{{size}}/seed{{seed}}/model.safetensors",
        train=f"{RESULTS}/corpus/{{condition}}/{{size}}/train.txt",
    output:
        f"{RESULTS}/analysis/word_curves/{{arch}}/{{condition}}/{{size}}/seed{{seed}}.csv",
    params:
        acquisition=as_json(ACQUISITION),
        model=lambda wc, input: os.path.dirname(input.weights),
        meta=lambda wc: as_json({"arch": wc.arch, "condition": wc.condition, "size": wc.size, "seed": int(wc.seed)}),
        code=stage_code("word-curves"),
    log:
        f"{LOGS}/analyze/word_curves/{{arch}}/{{condition}}/{{size}}/seed{{seed}}.log",
    benchmark:
        f"{BENCH}/analyze/word_curves/{{arch}}/{{condition}}/{{size}}/seed{{seed}}.tsv"
    conda:
        "../envs/train.yaml"
    shell:
        "{POVSTIM} word-curves --model {params.model} --train {input.train} --params {params.acquisition:q}"
        " --meta {params.meta:q} --out {output} > {log} 2>&1"


rule acquisition:
    input:
        curves=f"{RESULTS}/analysis/accuracy_by_step.csv",
        childes=lambda wc: ACQUISITION.get("childes") or [],
        word_curves=WORD_CURVES,
    output:
        report(
            directory(f"{RESULTS}/analysis/acquisition"),
            patterns=["{name}.png", "{name}.html"],
            caption="../workflow/report/acquisition.rst",
            category="Acquisition",
            labels={"item": "{name}"},
        ),
    params:
        acquisition=as_json(ACQUISITION),
        word_curves=lambda wc, input: f"--word-curves {' '.join(input.word_curves)}" if input.word_curves else "",
        code=stage_code("acquisition"),
    log:
        f"{LOGS}/analyze/acquisition.log",
    benchmark:
        f"{BENCH}/analyze/acquisition.tsv"
    conda:
        "../envs/analysis.yaml"
    shell:
        "{POVSTIM} acquisition --curves {input.curves} --params {params.acquisition:q} {params.word_curves}"
        " --out-dir {output} > {log} 2>&1"


# Δ accuracy per construction (docs/constructions.md, "Δ accuracy"): only when a condition names the constructions
# it removes (conditions.<c>.filter: [..]); each is compared with the unfiltered condition of its corpus.
CONSTRUCTION_DELTA_OUTPUTS = [f"{RESULTS}/analysis/construction_delta"] \
    if named_conditions(config["conditions"]) else []


rule construction_delta:
    input:
        tidy=f"{RESULTS}/analysis/items.parquet",
    output:
        report(
            directory(f"{RESULTS}/analysis/construction_delta"),
            patterns=["{name}.png", "{name}.html"],
            caption="../workflow/report/construction_delta.rst",
            category="Constructions",
            labels={"item": "{name}"},
        ),
    params:
        conditions=as_json(config["conditions"]),
        filter=as_json(config["filter"]),
        analysis=as_json(config["analysis"]),
        # the constructions' targets as resolved now: editing a library entry's targets: reruns this rule
        targets=as_json(comparison_targets(config["conditions"])),
        code=stage_code("construction-delta"),
    # one chain per core, as rule analyze
    threads: lambda wc: int(config["analysis"].get("chains", 4))
    log:
        f"{LOGS}/analyze/construction_delta.log",
    benchmark:
        f"{BENCH}/analyze/construction_delta.tsv"
    conda:
        "../envs/analysis.yaml"
    shell:
        "{POVSTIM} construction-delta --items {input.tidy} --conditions {params.conditions:q}"
        " --filter {params.filter:q} --params {params.analysis:q} --cores {threads} --out-dir {output} > {log} 2>&1"


# `results/figures` (the README's target) always shows the figures of the
# experiment run last: an index of relative links into results/<experiment>/figures.
# Each experiment's own results stay complete under results/<experiment>/.
rule figures_index:
    input:
        figures=f"{RESULTS}/figures",
        # the default target runs the guardrails too (their page is part of the report)
        guardrails=f"{RESULTS}/analysis/guardrails/guardrails.json",
        # and conditions.tsv (rules/filter.smk): the evidence each condition holds (its report page is the
        # guardrails rule's conditions.html)
        conditions=f"{RESULTS}/corpus/conditions.tsv",
        # and the acquisition points when the config trains word-budget checkpoints
        acquisition=ACQUISITION_OUTPUTS,
        # and the Δ accuracy per construction when a condition names the constructions it removes
        construction_delta=CONSTRUCTION_DELTA_OUTPUTS,
    output:
        directory("results/figures"),
    params:
        experiment=EXPERIMENT,
    log:
        f"{LOGS}/figures/index.log",
    benchmark:
        f"{BENCH}/figures/index.tsv"
    conda:
        "../envs/analysis.yaml"
    shell:
        "{POVSTIM} figures --index {input.figures} --experiment {params.experiment} --out-dir {output} > {log} 2>&1"


# Checks a reviewer would ask for (undertrained models, equal training tokens across sizes, paradigms
# decided by a lexical preference, below-chance results): log warnings + the report's Guardrails page.
# The onsuccess handler in the Snakefile prints what fired at the end of the run.
# Model folders and suites are read as params, not inputs: they come before the scores in the DAG (and
# any change to them changes the scores, hence items.parquet), and an analysis-only run (simulated scores,
# `--allowed-rules analyze …`) has none; missing ones are skipped with a log line.
rule guardrails:
    input:
        tidy=f"{RESULTS}/analysis/items.parquet",
        chisq=f"{RESULTS}/analysis/chisq.csv",
        # the conditions page's residual evidence reads this run's filter_validation output: an input, so the
        # page waits for it and is rebuilt when it changes
        validation=[f"{RESULTS}/filter/validation.json"] if VALIDATION else [],
        # every Bayesian fit's diagnostics.json: a fit that did not converge is a finding (fit_convergence)
        bayes=f"{RESULTS}/analysis/bayes",
    output:
        json=f"{RESULTS}/analysis/guardrails/guardrails.json",
        csv=f"{RESULTS}/analysis/guardrails/guardrails.csv",
        html=report(
            f"{RESULTS}/analysis/guardrails/guardrails.html",
            caption="../workflow/report/guardrails.rst",
            category="Guardrails",
            labels={"page": "checks before reading the tables"},
        ),
        # the evidence each condition really contains: rendered here, not by the condition stage,
        # so that the page can change without rebuilding the conditions (and retraining)
        conditions=report(
            f"{RESULTS}/analysis/conditions.html",
            caption="../workflow/report/conditions.rst",
            category="Tables",
            labels={"table": "conditions: words, removed and reinserted evidence, rates"},
        ),
    params:
        guardrails=as_json(config["guardrails"]),
        models=" ".join(model_dir(m) for m in MODELS),
        suites=" ".join(f"{RESULTS}/benchmarks/{suite}" for suite in SUITES),
        # every condition's counts and rates: the conditions page, and BABY's measured vs configured
        # reinsert rates (the reinsert_shortfall check)
        conditions=" ".join(
            f"{RESULTS}/corpus/{c}/{s}/condition.json"
            for c in config["conditions"]
            for s in plan.condition_sizes(config, c)
        ),
        out_dir=lambda wc, output: os.path.dirname(output.json),
        # the conditions page's residual evidence: the recall of the configured parser and mode,
        # from this run's filter_validation output when the config has one (else povstim's shipped table)
        residual=lambda wc, input: as_json({"backend": config["parser"]["backend"], "mode": config["filter"]["mode"],
                                            "validation": input.validation[0] if input.validation else None}),
        code=stage_code("guardrails", "filter/measured_recall.yaml"),
    log:
        f"{LOGS}/analyze/guardrails.log",
    benchmark:
        f"{BENCH}/analyze/guardrails.tsv"
    conda:
        "../envs/analysis.yaml"
    shell:
        "{POVSTIM} guardrails --items {input.tidy} --chisq {input.chisq} --benchmarks {params.suites}"
        " --models {params.models} --conditions {params.conditions} --conditions-page {output.conditions}"
        " --params {params.guardrails:q} --residual {params.residual:q} --bayes {input.bayes} --out-dir {params.out_dir}"
        " > {log} 2>&1"
