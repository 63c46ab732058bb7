# MSGS fine-tuning probes (docs/probes.md): generated control and ambiguous tasks ->
# every trained model fine-tuned as a sentence classifier -> linguistic bias scores
# (LBS) -> tables and MSGS-style figures. The DAG has them only when the config has
# probes.msgs: rule figures then waits for the probe summary, so `snakemake
# results/figures` runs it. (Without the section, asking for a probe output by path
# runs it with the schema's defaults, the MSGS paper's values.)

from povstim.devices import slots as device_slots
from povstim.settings import section as settings_section

MSGS_ON = "msgs" in (config.get("probes") or {})
MSGS = config["probes"]["msgs"] if MSGS_ON else settings_section("probes", {"msgs": {}})["msgs"]
MSGS_DIR = f"{RESULTS}/probes/msgs"
# Only the generator's keys reach probe_data: editing the grid or the gate keeps the data.
MSGS_DATA_KEYS = ("tasks", "inoculation", "items", "seed")
# threads only changes speed, so editing it reruns nothing (the CLI gets --threads).
MSGS_RUN = {k: v for k, v in MSGS.items() if k != "threads"}
# The three rules run `povstim probe <generate|run|summarize>`, one process (probes/cli.py) whose import
# closure holds all three: they share one code hash (editing the summary's code reruns the fine-tuning too).
MSGS_CODE = stage_code("probe")
# One LBS table per trained model.
MSGS_LBS_FILES = [f"{MSGS_DIR}/{m.path}/lbs.parquet" for m in MODELS]

# What rule figures (rules/analysis.smk) waits for: nothing without probes.
PROBE_OUTPUTS = [f"{MSGS_DIR}/lbs_summary.csv", f"{MSGS_DIR}/figures"] if MSGS_ON else []


rule probe_data:
    output:
        directory(f"{MSGS_DIR}/data"),
    params:
        msgs=as_json({k: MSGS[k] for k in MSGS_DATA_KEYS}),
        code=MSGS_CODE,
    log:
        f"{LOGS}/probe/data.log",
    benchmark:
        f"{BENCH}/probe/data.tsv"
    conda:
        "../envs/probe.yaml"
    shell:
        "{POVSTIM} probe generate --params {params.msgs:q} --out-dir {output} > {log} 2>&1"


rule probe:
    input:
        data=f"{MSGS_DIR}/data",
        weights=f"{RESULTS}/models/{{arch}}/{{condition}}/{{size}}/seed{{seed}}/model.safetensors",
    output:
        f"{MSGS_DIR}/{{arch}}/{{condition}}/{{size}}/seed{{seed}}/lbs.parquet",
    params:
        msgs=as_json(MSGS_RUN),
        model_dir=lambda wc, input: os.path.dirname(input.weights),
        meta=lambda wc: as_json(
            {"arch": wc.arch, "condition": wc.condition, "size": wc.size, "seed": int(wc.seed)}
        ),
        code=MSGS_CODE,
    threads: int(MSGS["threads"])
    resources:
        gpu=lambda wc: device_slots.job_gpus(MSGS["device"]),
    log:
        f"{LOGS}/probe/{{arch}}/{{condition}}/{{size}}/seed{{seed}}.log",
    benchmark:
        f"{BENCH}/probe/{{arch}}/{{condition}}/{{size}}/seed{{seed}}.tsv"
    conda:
        "../envs/probe.yaml"
    shell:
        "{POVSTIM} probe run --model {params.model_dir} --data {input.data} --params {params.msgs:q}"
        " --meta {params.meta:q} --threads {threads} --out {output} > {log} 2>&1"


rule probe_summary:
    input:
        lbs=MSGS_LBS_FILES,
    output:
        rows=f"{MSGS_DIR}/lbs.parquet",
        table=report(
            f"{MSGS_DIR}/lbs_summary.csv",
            caption="../workflow/report/probes_lbs.rst",
            category="MSGS probes",
            labels={"table": "linguistic bias scores"},
        ),
        controls=report(
            f"{MSGS_DIR}/controls.csv",
            caption="../workflow/report/probes_controls.rst",
            category="MSGS probes",
            labels={"table": "control tasks"},
        ),
        figures=report(
            directory(f"{MSGS_DIR}/figures"),
            patterns=["{name}.png"],
            caption="../workflow/report/probes_figures.rst",
            category="MSGS probes",
            labels={"figure": "{name}"},
        ),
    params:
        msgs=as_json({"gate": MSGS["gate"]}),
        out_dir=MSGS_DIR,
        code=MSGS_CODE,
    log:
        f"{LOGS}/probe/summary.log",
    benchmark:
        f"{BENCH}/probe/summary.tsv"
    conda:
        "../envs/probe.yaml"
    shell:
        "{POVSTIM} probe summarize --lbs {input.lbs} --params {params.msgs:q} --out-dir {params.out_dir}"
        " --figures {output.figures} > {log} 2>&1"
