# povstim: corpora -> language models -> poverty-of-the-stimulus results.
#
#   snakemake --cores 8 --resources gpu=1 results/figures
#
# Rules are thin: each one calls a `povstim` subcommand (workflow/povstim/),
# passes every config value it uses through `params:` (so editing a value
# reruns that rule and what follows) and a hash of the stage's own code (so
# editing a stage's Python reruns that stage and what follows, and nothing
# upstream).

import json
import os
import re
import sys
from pathlib import Path

from snakemake.utils import min_version
from snakemake_interface_executor_plugins.settings import DeploymentMethod

min_version("9.0")

WORKFLOW_DIR = Path(workflow.basedir) / "workflow"
sys.path.insert(0, str(WORKFLOW_DIR))

from povstim import config as povstim_config, plan  # noqa: E402
from povstim.io import PovstimError, code_hash  # noqa: E402


# `--configfile X.yaml` replaces the embedded default instead of being merged
# into it (a merge would leak the default's synthetic sources into a real
# experiment).
if not workflow.overwrite_configfiles:

    configfile: "config.yaml"


try:
    povstim_config.validate(config, source="config")
except PovstimError as exc:
    raise WorkflowError(str(exc)) from None

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


rule all:
    default_target: True
    input:
        "results/figures",
