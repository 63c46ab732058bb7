# povstim: corpora -> language models -> poverty-of-the-stimulus results.
#
#   snakemake --cores 8 --resources gpu=1 -- results/figures
#
# Rules are thin: each one calls a `povstim` subcommand (workflow/povstim/),
# passes every config value it uses through `params:` (so editing a value
# reruns that rule and what follows) and a hash of the stage's own code (so
# editing a stage's Python reruns that stage and what follows, and nothing
# upstream).

import atexit
import dataclasses
import json
import os
import re
import sys
from pathlib import Path

from snakemake.utils import min_version
from snakemake_interface_executor_plugins.settings import DeploymentMethod, ExecMode

min_version("9.0")

WORKFLOW_DIR = Path(workflow.basedir) / "workflow"
sys.path.insert(0, str(WORKFLOW_DIR))

from povstim import config as povstim_config, plan  # noqa: E402
from povstim.io import PovstimError  # noqa: E402
from povstim import codehash  # noqa: E402
from povstim.preflight import runs as povstim_runs  # noqa: E402
from povstim import warm as povstim_warm  # noqa: E402
from povstim.analysis.models import prewarm as povstim_prewarm  # noqa: E402
from povstim.analysis.tables import conditions_page as povstim_conditions_page  # noqa: E402
from povstim.devices.threads import job_environment  # noqa: E402

# Every job, and the warm-start server they are forked from, shares the cores politely (povstim.devices).
os.environ.update(job_environment())

CONFIGFILES = [
    os.path.relpath(f) if not os.path.relpath(f).startswith("..") else str(f) for f in workflow.overwrite_configfiles
]

# `--configfile X.yaml` replaces the embedded default instead of being merged
# into it (a merge would leak the default's synthetic sources into a real
# experiment).
if not workflow.overwrite_configfiles:
    # Snakemake's own YAML error names neither file nor line: read it ourselves first.
    if os.path.exists("config.yaml"):
        try:
            povstim_config.load_yaml("config.yaml")
        except PovstimError as exc:
            raise WorkflowError(str(exc)) from None

    configfile: "config.yaml"


try:
    povstim_config.validate(config, source=", ".join(CONFIGFILES) or "config.yaml")
except PovstimError as exc:
    raise WorkflowError(str(exc)) from None

# The main process only (not jobs on cluster nodes, which cannot see the main process).
if workflow.exec_mode == ExecMode.DEFAULT:
    # `snakemake --report PATH` must report on the results of the config it loaded.
    _report = povstim_runs.report_target(sys.argv)
    if _report is not None:
        try:
            povstim_runs.check_report_path(_report, config["experiment"], CONFIGFILES)
        except PovstimError as exc:
            raise WorkflowError(str(exc)) from None
    _hint = None if "--unlock" in sys.argv else povstim_runs.stale_lock_hint(".", sys.argv)
    if _hint:
        print(_hint, file=sys.stderr)
    # Snakemake's "Directory cannot be locked" names the live run that holds the folder (PID, command, start)
    # and says not to --unlock it; each run records itself while it lives (.snakemake/povstim-runs/)
    povstim_runs.explain_lock_refusals(".", sys.argv)
    if "--unlock" in sys.argv:
        povstim_runs.forget_dead_runs(".")
    elif not povstim_runs.dry_run(sys.argv):
        atexit.register(povstim_runs.forget_run, povstim_runs.record_run(".", sys.argv, config["experiment"]))
    # a GPU smaller or older than the `gpus:` defaults assume (povstim.plan.gpu_notes, from nvidia-smi), and
    # bf16/fp16 where the training jobs will see no GPU (said now, not at the first training job)
    for _note in plan.gpu_notes(config) + plan.precision_notes(config):
        print(_note, file=sys.stderr)
    # contrasts void by the conditions' definitions (rates 0, a filter with no rules for the language, the same
    # operations): said before any job, as povstim plan says it
    for _note in plan.void_definition_lines(config):
        print(_note, file=sys.stderr)

# Rules run the checkout's own code (workflow/povstim), whether or not the
# package is installed, with the Python that runs Snakemake.
# Under `--sdm conda` the rule's env provides python; otherwise the Python
# that runs Snakemake does.
PYTHON = (
    "python"
    if DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method
    else f'"{sys.executable}"'
)
POVSTIM = f'PYTHONPATH="{WORKFLOW_DIR}" {PYTHON} -m povstim'
PKG = WORKFLOW_DIR / "povstim"


wildcard_constraints:
    source="[^/]+",
    corpus="[^/]+",
    condition="[^/]+",
    size="[^/]+",
    arch="[^/]+",
    seed="[0-9]+",
    suite="[^/]+",
    shard="[0-9]+",


include: "rules/common.smk"
include: "rules/sources.smk"
include: "rules/corpus.smk"
include: "rules/filter.smk"
include: "rules/train.smk"
include: "rules/biases.smk"
include: "rules/evaluate.smk"
include: "rules/analysis.smk"
include: "rules/probe.smk"
include: "rules/dose.smk"

# `snakemake --report`: the description (workflow/report/workflow.rst) states what each reinserting condition
# (BABY) really got back, from its condition.json files, not only that reinsertion was configured, and which
# conditions the filter ran for (plan.report_filter). Keys the schema does not know, added after validation and
# only for the report (no job runs, nothing hashes them).
if workflow.exec_mode == ExecMode.DEFAULT and povstim_runs.report_target(sys.argv) is not None:
    config["_reinsert_evidence"] = povstim_conditions_page.report_evidence(config, RESULTS, plan.condition_sizes)
    # which conditions the DPE filter really ran for, and whether the report has a "DPE filter" section to link to
    config["_report_filter"] = plan.report_filter(config, bool(SANITY))
    # the run as it is: language, the filter it ran (or none, and why), what each condition removed and put back
    config["_report_description"] = plan.report_description(config, config["_report_filter"])

# Results made with another config are replaced by this run: said now, when the DAG is built, so that a dry run
# (`snakemake -n`) says it too; a real run pauses before its first job (onstart). Not for --unlock or --report.
REPLACES = None
if workflow.exec_mode == ExecMode.DEFAULT and "--unlock" not in sys.argv and povstim_runs.report_target(sys.argv) is None:
    REPLACES = povstim_runs.overwrite_warning(RESULTS, config)
    if REPLACES:
        print(REPLACES, file=sys.stderr)
    # a deleted model folder (any intermediate finished results were built from): named, with the command
    # that rebuilds it, instead of Snakemake's silent "Nothing to be done"
    for _line in povstim_runs.missing_lines(".", RESULTS, sys.argv):
        print(_line, file=sys.stderr)


rule all:
    default_target: True
    input:
        "results/figures",
        DOSE_OUTPUTS,


# Warm start (povstim/warm.py): one process imports torch/transformers once and forks each
# training/scoring job, so a job does not pay 4-8 s of imports. Jobs must run here, with this Python.
WARM_START = {}


onstart:
    povstim_runs.watch_interrupts()  # a Ctrl-C is then told apart from a failed job in onerror
    if REPLACES:  # said when the DAG was built; Ctrl-C during the pause stops the run before any job
        povstim_runs.pause_before_replacing(EXPERIMENT)
    povstim_runs.write_record(config, CONFIGFILES, RESULTS)
    if povstim_warm.enabled(config["warm_start"], workflow.local_exec, workflow.dryrun or workflow.touch,
                            bool(workflow.deployment_settings.deployment_method)):
        os.makedirs(LOGS, exist_ok=True)
        WARM_START["server"] = povstim_warm.start(str(WORKFLOW_DIR), log=f"{LOGS}/warm_start.log")
        # the Bayesian model's sampler code compiles on idle cores while the models train
        # (povstim/analysis/models/prewarm.py); only when this run will fit it
        _analyze = [job for job in workflow.dag.needrun_jobs() if job.rule.name == "analyze"]
        if _analyze and config["prewarm_analysis"]:
            WARM_START["prewarm"] = povstim_prewarm.launch(
                povstim_prewarm.command(
                    sys.executable, [dataclasses.asdict(m) for m in MODELS + CORPUS_MODELS],
                    {s: f"{RESULTS}/benchmarks/{s}" for s in SUITES}, plan.condition_meta(config),
                    bias_plan.arch_meta(config), config["analysis"], str(_analyze[0].log[0]),
                    povstim_prewarm.SUITE_WAIT_S, os.getpid()),
                str(WORKFLOW_DIR), f"{LOGS}/analyze/prewarm.log")


onsuccess:
    povstim_prewarm.stop(WARM_START.pop("prewarm", None))
    if "server" in WARM_START:
        WARM_START.pop("server").stop()
    _guard = Path(RESULTS) / "analysis" / "guardrails" / "guardrails.json"
    if _guard.exists():
        _result = json.loads(_guard.read_text())
        for _line in povstim_runs.guardrail_lines(_result, _guard):
            print(_line, file=sys.stderr)
    print(povstim_runs.end_line(EXPERIMENT, True, None), file=sys.stderr)


onerror:
    povstim_prewarm.stop(WARM_START.pop("prewarm", None))
    if "server" in WARM_START:
        WARM_START.pop("server").stop()
    _interrupted = povstim_runs.interrupted()
    print(povstim_runs.end_line(EXPERIMENT, False, log, _interrupted), file=sys.stderr)
    if _interrupted:
        # Snakemake reports a Ctrl-C as a failed run (exit 1, "At least one job did not complete"); leave with
        # 130 as every povstim command does. SystemExit passes Snakemake's handlers; its locks are still removed.
        raise SystemExit(povstim_runs.INTERRUPTED_EXIT)
