# Input functions and target lists shared by the rule files. Logic lives in
# povstim.plan (tested Python); these are thin adapters to wildcards.

# Where this experiment's outputs go. New rules write every output under
# RESULTS (f"{RESULTS}/probes/..."), never under a literal "results/".
RESULTS = "results"


def code(*modules):
    """Hash of the named povstim modules/subpackages plus the shared helpers."""
    return code_hash(PKG / "io.py", *(PKG / m for m in modules))


def as_json(obj):
    return json.dumps(obj, sort_keys=True)


def job_gpus(device):
    """Units of the `gpu` resource a job holds: 1 only when it will really use a
    GPU, so `--resources gpu=1` does not serialise CPU-only jobs."""
    from povstim.train.resources import gpu_visible

    device = str(device or "auto")
    return 1 if device.startswith("cuda") or (device == "auto" and gpu_visible()) else 0


SYNTHETIC_SOURCES = [s for s, spec in config["sources"].items() if spec["kind"] == "synthetic"]
REAL_SOURCES = [s for s, spec in config["sources"].items() if spec["kind"] != "synthetic"]
MODELS = plan.models(config)
SUITES = plan.suites(config)
N_SHARDS = int(config.get("parser", {}).get("shards", 1))


def one_of(names):
    """A wildcard constraint matching exactly these names (or nothing)."""
    return "|".join(re.escape(n) for n in names) if names else "(?!x)x"


def mixture_sources(corpus, size):
    return list(plan.mixture(config, corpus, size))


def clean_texts(wildcards):
    return [f"results/corpus/clean/{s}.txt" for s in mixture_sources(wildcards.corpus, wildcards.size)]


def gold_conllus(wildcards):
    return [
        f"results/corpus/clean/{s}.conllu"
        for s in mixture_sources(wildcards.corpus, wildcards.size)
        if s in SYNTHETIC_SOURCES
    ]


def condition_spec(wildcards):
    return config["conditions"][wildcards.condition]


def model_dir(m):
    return f"results/models/{m.path}"


def score_files():
    return [f"results/scores/{m.path}/{suite}.parquet" for m in MODELS for suite in SUITES]


# --- real sources (rules/sources.smk)

REMOTE_SOURCES = [s for s in REAL_SOURCES if config["sources"][s]["kind"] != "local"]
LOCAL_SOURCES = [s for s in REAL_SOURCES if config["sources"][s]["kind"] == "local"]
# Not a param: moving the checkout must not rerun the cleaning.
REPO_DIR = workflow.basedir


def local_source_path(source):
    """A local source's file/folder; relative paths are relative to the repository."""
    path = Path(os.path.expanduser(config["sources"][source]["path"]))
    return str(path if path.is_absolute() else Path(workflow.basedir) / path)


# Only these keys reach the download rule, so editing a cleaning setting (style,
# min_words, ...) reruns the cleaning but not the download.
DOWNLOAD_KEYS = ("kind", "url", "sha256", "filename", "files", "retries", "timeout", "license")


def download_spec(source):
    spec = config["sources"][source]
    return {k: spec[k] for k in DOWNLOAD_KEYS if k in spec}


def clean_inputs(wildcards):
    if wildcards.source in LOCAL_SOURCES:
        # A missing local path (licensed data not yet in place, e.g. the BNC) must
        # not break a dry run of the whole DAG: the clean job then fails with an
        # error naming sources.<name>.path.
        path = local_source_path(wildcards.source)
        return {"data": path} if os.path.exists(path) else {}
    return {"manifest": f"resources/downloads/{wildcards.source}/manifest.json"}


# --- conditions (rules/filter.smk)

def condition_inputs(wildcards):
    spec = condition_spec(wildcards)
    inputs = {"base": f"results/corpus/{spec['from']}/{wildcards.size}/base.txt"}
    # [issue 16] filter: true in a language without DPE rules builds the condition unfiltered.
    if plan.filter_applies(config, wildcards.condition):
        inputs["dpe"] = f"results/filter/{spec['from']}/{wildcards.size}/dpe.tsv"
    return inputs


# --- benchmarks (rules/evaluate.smk)

def benchmark_inputs(wildcards):
    spec = config["benchmarks"][wildcards.suite]
    if spec["kind"] != "generated":
        return []
    # Words come from the intersection of the most frequent words of the
    # corpora at the largest size (POSH §3.2).
    largest = plan.sizes(config)[-1]
    return [f"results/corpus/{c}/{largest}/base.txt" for c in config["corpora"]]


# --- analysis and figures (rules/analysis.smk)

FIGURES = config.get("figures", {})




def filter_audits():
    """DPE audit files of every filtered corpus x size (the filter audit figure)."""
    if not FIGURES.get("filter_audit", True):
        return []
    return [f"results/filter/{corpus}/{size}/dpe.tsv" for corpus, size in plan.filtered_corpora(config)]


def tokenizer_studies():
    """The vocab-size study table (POSH Table 9, rule vocab_study), when the config runs the study."""
    if not FIGURES.get("tokenizer_study", True) or not config.get("vocab_study"):
        return []
    return ["results/tokenizers/study/table9.tsv"]
