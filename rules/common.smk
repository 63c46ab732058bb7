# Input functions and target lists shared by the rule files. Logic lives in
# povstim.plan (tested Python); these are thin adapters to wildcards.

def code(*modules):
    """Hash of the named povstim modules/subpackages plus the shared helpers."""
    return code_hash(PKG / "io.py", *(PKG / m for m in modules))


def as_json(obj):
    return json.dumps(obj, sort_keys=True)


SYNTHETIC_SOURCES = [s for s, spec in config["sources"].items() if spec["kind"] == "synthetic"]
REAL_SOURCES = [s for s, spec in config["sources"].items() if spec["kind"] != "synthetic"]
MODELS = plan.models(config)
SUITES = plan.suites(config)
N_SHARDS = int(config.get("parser", {}).get("shards", 1))


def one_of(names):
    """A wildcard constraint matching exactly these names (or nothing)."""
    return "|".join(re.escape(n) for n in names) if names else "(?!x)x"


def mixture_sources(corpus):
    return list(config["corpora"][corpus]["mixture"])


def clean_texts(wildcards):
    return [f"results/corpus/clean/{s}.txt" for s in mixture_sources(wildcards.corpus)]


def gold_conllus(wildcards):
    return [
        f"results/corpus/clean/{s}.conllu"
        for s in mixture_sources(wildcards.corpus)
        if s in SYNTHETIC_SOURCES
    ]


def condition_spec(wildcards):
    return config["conditions"][wildcards.condition]


def model_dir(m):
    return f"results/models/{m.path}"


def score_files():
    return [f"results/scores/{m.path}/{suite}.parquet" for m in MODELS for suite in SUITES]
