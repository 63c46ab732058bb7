import re
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
import sys
from pathlib import Path

from snakemake.utils import min_version

min_version("9.0")

WORKFLOW_DIR = Path(workflow.basedir) / "workflow"
# Rules run the checkout's own code, whether or not the package is installed.
sys.path.insert(0, str(WORKFLOW_DIR))
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(WORKFLOW_DIR)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
)

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

POVSTIM = f'"{sys.executable}" -m povstim'
PKG = WORKFLOW_DIR / "povstim"


def code(*modules):
    """Hash of the named povstim modules/subpackages plus the shared helpers."""
    return code_hash(PKG / "io.py", *(PKG / m for m in modules))


def as_json(obj):
    return json.dumps(obj, sort_keys=True)


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
include: "rules/evaluate.smk"
include: "rules/analysis.smk"


rule all:
    default_target: True
    input:
        "results/figures",
