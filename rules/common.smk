# Input functions and target lists shared by the rule files. Logic lives in
# povstim.plan (tested Python); these are thin adapters to wildcards.

# Each experiment's outputs, logs and job timings live under their own folder,
# so two configs never overwrite each other. Every rule writes under RESULTS
# (f"{RESULTS}/..."), LOGS and BENCH, never under a literal "results/".
EXPERIMENT = config["experiment"]
RESULTS = f"results/{EXPERIMENT}"
LOGS = f"logs/{EXPERIMENT}"
BENCH = f"benchmarks/{EXPERIMENT}"

import shlex  # filter_validation's paths on the command line


# the import lists of the parsed sources, kept between DAG builds (a DAG build then parses only edited files)
codehash.use_cache(".snakemake/povstim/codehash-imports.json")


def stage_code(stage, *data, exclude=()):
    """Hash of what `povstim <stage>` can execute of the package (its import closure, povstim/codehash.py)
    plus the data files it reads (`data`: paths relative to workflow/povstim). (The schema is not hashed:
    rules pass complete, defaulted sections in params, so a changed default reruns through params.)"""
    return codehash.stage_hash(stage, *data, exclude=exclude, root=PKG)


def as_json(obj):
    return json.dumps(obj, sort_keys=True)


SYNTHETIC_SOURCES = [s for s, spec in config["sources"].items() if spec["kind"] == "synthetic"]
REAL_SOURCES = [s for s, spec in config["sources"].items() if spec["kind"] != "synthetic"]
MODELS = plan.models(config)
# n-gram archs (family kneser-ney): fitted and scored by rule score_corpus_model, no training job
CORPUS_MODELS = plan.corpus_models(config)
SUITES = plan.suites(config)
N_SHARDS = int(config["parser"]["shards"])


def one_of(names):
    """A wildcard constraint matching exactly these names (or nothing)."""
    return "|".join(re.escape(n) for n in names) if names else "(?!x)x"


def mixture_sources(corpus, size):
    return list(plan.mixture(config, corpus, size))


def clean_texts(wildcards):
    return [f"{RESULTS}/corpus/clean/{s}.txt" for s in mixture_sources(wildcards.corpus, wildcards.size)]


def gold_conllus(wildcards):
    return [
        f"{RESULTS}/corpus/clean/{s}.conllu"
        for s in mixture_sources(wildcards.corpus, wildcards.size)
        if s in SYNTHETIC_SOURCES
    ]


def condition_spec(wildcards):
    return config["conditions"][wildcards.condition]


def model_dir(m):
    return f"{RESULTS}/models/{m.path}"


def score_files():
    return [f"{RESULTS}/scores/{m.path}/{suite}.parquet" for m in MODELS + CORPUS_MODELS for suite in SUITES]


# --- real sources (rules/sources.smk)

REMOTE_SOURCES = [s for s in REAL_SOURCES if config["sources"][s]["kind"] != "local"]
LOCAL_SOURCES = [s for s in REAL_SOURCES if config["sources"][s]["kind"] == "local"]
# Not a param: moving the checkout must not rerun the cleaning.
REPO_DIR = workflow.basedir


def repo_path(path):
    """A config path; relative paths are relative to the repository, the Snakefile's folder (the one rule for
    relative paths, which `povstim` commands follow too: povstim.io.project_dir)."""
    path = Path(os.path.expanduser(path))
    return str(path if path.is_absolute() else Path(workflow.basedir) / path)


def local_source_path(source):
    """A local source's file/folder."""
    return repo_path(config["sources"][source]["path"])


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


# --- filter validation against gold trees (rules/filter.smk)

VALIDATION = config.get("filter_validation")


# What filter_validation measures on: a gold treebank, or hand labels and the CSV their rows number
# (filter_validation.labels / .texts: a language without a gold treebank, French CDS). The paths are the
# rule's inputs and its command's arguments, not params: moving the checkout must not rerun it.
VALIDATION_FILES = ({k: VALIDATION[k] for k in ("treebank", "labels", "texts") if VALIDATION.get(k)}
                    if VALIDATION else {})


def validation_path(key):
    """A filter_validation path."""
    return repo_path(VALIDATION[key])


def validation_treebank():
    """The gold treebank of filter_validation."""
    return validation_path("treebank")


def validation_args():
    """The filter-validation command's --treebank, or --labels and --texts."""
    return " ".join(f"--{k} {shlex.quote(validation_path(k))}" for k in VALIDATION_FILES)


def validation_inputs(wildcards):
    # Like a local source: a missing treebank (labels, texts) must not break a dry run of
    # the whole DAG; the job then fails with an error naming filter_validation.treebank.
    files = {k: validation_path(k) for k in VALIDATION_FILES}
    return {**{k: p for k, p in files.items() if os.path.exists(p)}, **parser_model_inputs(wildcards)}


# --- the parser adapted to child-directed speech (parser.backend: childes; rule train_parser)

# The parser folder the DAG trains (backend childes without parser.childes_model), or None.
CHILDES_PARSER = (f"{RESULTS}/parser/childes" if config["parser"]["backend"] == "childes"
                  and not config["parser"].get("childes_model") else None)
# The parser section the parse jobs get: the folder the DAG trains filled in.
PARSER_SECTION = {**config["parser"], **({"childes_model": CHILDES_PARSER} if CHILDES_PARSER else {})}


def childes_treebank():
    """The files train_parser reads: a missing treebank must not break a dry run; the job names the key."""
    path = Path(repo_path(config["parser"]["childes_treebank"]))
    return sorted(str(p) for p in path.glob("*.conllu")) if path.is_dir() else ([str(path)] if path.exists() else [])


def parser_model_inputs(wildcards):
    return {"parser_model": CHILDES_PARSER} if CHILDES_PARSER else {}


def filter_validation_outputs():
    """The validation outputs the report shows, when the config asks for the validation."""
    if not VALIDATION:
        return []
    return [f"{RESULTS}/filter/validation.json", f"{RESULTS}/filter/validation.png"]


# --- conditions (rules/filter.smk)

def condition_inputs(wildcards):
    spec = condition_spec(wildcards)
    inputs = {"base": f"{RESULTS}/corpus/{spec['from']}/{wildcards.size}/base.txt"}
    # filter: true in a language without DPE rules builds the condition unfiltered (plan.filter_applies).
    if plan.filter_applies(config, wildcards.condition):
        inputs["dpe"] = f"{RESULTS}/filter/{spec['from']}/{wildcards.size}/dpe.tsv"
        if condition_operations.needs_trees(spec):  # replace rewrites parsed sentences
            inputs["trees"] = [f"{RESULTS}/parse/{spec['from']}/{wildcards.size}/{k}.conllu" for k in range(N_SHARDS)]
    return inputs


# --- benchmarks (rules/evaluate.smk)

def benchmark_inputs(wildcards):
    spec = config["benchmarks"][wildcards.suite]
    if spec["kind"] != "generated":
        return {"corpora": [], "stats": []}
    # Words come from the intersection of the most frequent words of the
    # corpora at the largest size (POSH §3.2); with real corpora
    # (vocabulary: corpus) they must also be used in their slot's part of
    # speech in the parses (the largest parsed size of each parsed corpus).
    largest = plan.sizes(config)[-1]
    stats = []
    if plan.benchmark_vocabulary(config, wildcards.suite) == "corpus":
        stats = [f"{RESULTS}/parse/{c}/{s}/words.tsv" for c, s in plan.word_stats_inputs(config)]
    return {"corpora": [f"{RESULTS}/corpus/{c}/{largest}/base.txt" for c in config["corpora"]], "stats": stats}


def baseline_score_files():
    """Corpus-baseline item scores the suites ask for (benchmarks.<suite>.baselines)."""
    return [f"{RESULTS}/scores/{b}/{c}/{s}/seed0/{suite}.parquet" for b, c, s, suite in plan.baseline_scores(config)]


EXTERNAL_MODELS = plan.external_models(config)


def external_score_files():
    """Item scores of the models trained elsewhere (external_models; rule score_external)."""
    return [f"{RESULTS}/scores/external/{n}/{suite}.parquet" for n in EXTERNAL_MODELS for suite in SUITES]


def external_model_path(name):
    """An external model's folder (relative paths: to the repository), or its hub repository id as given."""
    given = config["external_models"][name]["path"]
    path = Path(os.path.expanduser(given))
    if path.is_absolute() or given.startswith((".", "~")) or (Path(workflow.basedir) / path).exists():
        return str(path if path.is_absolute() else Path(workflow.basedir) / path)
    return given


def check_external_models():
    """A local external model's checkpoints are found at DAG build, so a folder that is not a model, or has no
    checkpoints when they are asked for, is an error naming external_models.<name>.path before any job runs
    (a hub repository is left to its job: listing its revisions needs the network)."""
    from povstim.scoring.external import find_revisions, is_local

    for name in EXTERNAL_MODELS:
        spec, path = config["external_models"][name], external_model_path(name)
        if is_local(path):
            try:
                find_revisions(path, spec["checkpoints"], spec.get("revisions"), where=f"external_models.{name}.path")
            except PovstimError as exc:
                raise WorkflowError(str(exc)) from None


check_external_models()


# --- analysis and figures (rules/analysis.smk)

FIGURES = config["figures"]


def filter_audits():
    """(corpus, size, dpe.tsv) of every filtered corpus x size (the filter audit figure)."""
    if not FIGURES["filter_audit"]:
        return []
    return [(corpus, size, f"{RESULTS}/filter/{corpus}/{size}/dpe.tsv") for corpus, size in plan.filtered_corpora(config)]


def tokenizer_studies():
    """The vocab-size study table (POSH Table 9, rule vocab_study), when the config runs the study."""
    if not FIGURES["tokenizer_study"] or not config.get("vocab_study"):
        return []
    return [f"{RESULTS}/tokenizers/study/table9.tsv"]
