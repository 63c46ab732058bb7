"""What a config will use, before anything is trained (``povstim plan``).

For a researcher's own corpora the two questions that stop a first run are "how large may each size
be?" and "which benchmark words will survive the top-K filter?". This answers both with the
pipeline's own code, in memory, in seconds to minutes:

1. every source is cleaned exactly as ``povstim clean`` would (``sources.clean.clean_lines``; synthetic
   sources are generated as ``povstim synth`` would): sentences and words *after* cleaning, what was
   dropped and why, malformed lines;
2. every corpus x size is checked against those counts with the assembly's own quotas
   (``corpus.assemble.quotas``): words each source must give, words it has, and the largest size the
   mixture allows;
3. for each generated benchmark suite, the corpora at the largest size are assembled in memory (as the
   ``benchmark`` rule sees them) and ``benchmarks.words.pool_report`` lists the words of each class that
   survive ``top_k_words``, and the K each class needs; a class of one or two words is a warning (every
   item of its templates reuses them);
4. for each corpus x size a filtered condition draws from, what the DPE filter removes and the targeted
   pool BABY can put back, and whether each ``reinsert`` rate can be met (``preflight.evidence``: exact
   with the gold parser, from a parsed sample with spaCy/stanza);
5. the power of the three-level model's contrasts at POSH Table 12's effects (``analysis.power``, the
   summary of ``povstim power``) and a warning with fewer than 3 seeds (``(1|seed)`` is dropped);
6. the casing of every source against every benchmark suite's items (``preflight.casing``): a warning when
   they disagree and ``tokenizer.lowercase`` is false; and their final punctuation, attached or spaced
   (``preflight.punctuation``): a warning with the cleaning style that matches the items.
"""

from __future__ import annotations

import json
import logging
import math
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .. import languages
from .. import plan as dag_plan
from ..benchmarks.posh import generator_report
from ..benchmarks.words import build_lexicon
from ..io import PovstimError, parse_size, write_json, write_lines
from ..settings import section
from ..sources.spec import source_spec
from ..synth import generate
from . import casing, punctuation

log = logging.getLogger("povstim.plan")


@dataclass
class SourceCount:
    name: str
    kind: str
    status: str = "ok"  # ok | not downloaded | missing | empty
    sentences: int = 0
    words: int = 0
    dropped: dict = field(default_factory=dict)
    malformed: int = 0
    malformed_examples: list = field(default_factory=list)
    dropped_transcripts: list = field(default_factory=list)  # CHAT transcripts left out for a header, by name
    note: str = ""
    lines: list[str] = field(default_factory=list, repr=False)
    gold: list[str] = field(default_factory=list, repr=False)  # synthetic: the CoNLL-U block of each line

    def as_dict(self) -> dict:
        return {"kind": self.kind, "status": self.status, "sentences": self.sentences, "words": self.words,
                "dropped": self.dropped, "malformed_lines": self.malformed,
                "malformed_examples": self.malformed_examples[:5],
                **({"dropped_transcripts": self.dropped_transcripts} if self.dropped_transcripts else {}),
                "note": self.note}


def count_source(name: str, spec: dict, base_dir: Path, downloads: Path) -> SourceCount:
    """Clean (or generate) one source in memory and count what the corpus stage will get from it."""
    spec = source_spec(name, spec, where=f"sources.{name}")
    kind = spec["kind"]
    out = SourceCount(name, kind)
    if kind == "synthetic":
        for text, block, _ in generate(spec["register"], int(spec["sentences"]), int(spec["seed"]),
                                       spec.get("dpe_rate")):
            out.lines.append(text)
            out.gold.append(block)
    else:
        # deferred: the cleaners and their readers, only for a real source (`povstim plan` starts without them)
        from ..sources.clean import EmptySource, clean_lines, input_paths
        from ..sources.normalize import CleanStats

        input_dir = None if kind == "local" else downloads / name
        if kind != "local" and not (input_dir / "manifest.json").exists():
            out.status = "not downloaded"
            out.note = f"run `snakemake {input_dir / 'manifest.json'}` (same --configfile) to download it first"
            return out
        try:
            paths = input_paths(name, spec, input_dir, base_dir)
        except PovstimError as exc:
            out.status, out.note = ("empty" if isinstance(exc, EmptySource) else "missing"), str(exc)
            return out
        stats = CleanStats(source=name)
        out.lines = list(clean_lines(name, spec, paths, stats))
        out.dropped = dict(sorted(stats.dropped.items()))
        out.malformed, out.malformed_examples = stats.malformed, stats.malformed_examples
        out.dropped_transcripts = stats.extra.get("dropped_transcripts", [])
        if not out.lines:  # as `povstim clean` would fail: name the source, its key and its files
            key = f"sources.{name}.path" if kind == "local" else f"sources.{name}"
            why = f"dropped: {out.dropped}" if out.dropped else "no text in it"
            out.status = "empty"
            out.note = f"{key}: {', '.join(map(str, paths))}: cleaning keeps no lines ({why})"
    if kind != "synthetic" and out.lines:  # as `povstim clean` would fail: text in another language
        languages.check_text(languages.sample_words(out.lines), spec.get("language"), f"sources.{name}.language")
    out.sentences = len(out.lines)
    out.words = sum(len(line.split()) for line in out.lines)
    return out


def size_table(config: dict, counts: dict[str, SourceCount]) -> list[dict]:
    """Per corpus x size: per source the words needed and available, and the largest size this mixture allows."""
    # deferred: numpy, only when sizes are tabulated
    from ..corpus.assemble import line_sizes, preview, quotas, source_quotas

    unit = dag_plan.size_unit(config)
    rows = []
    has_bytes: dict[str, int] = {}
    unit_sizes: dict[str, object] = {}  # each source's line sizes in the unit, for the assemble preview
    for corpus in config["corpora"]:
        for size in dag_plan.sizes(config):
            mixture = dag_plan.mixture(config, corpus, size)
            budget = parse_size(size)
            langs = {src: dag_plan.source_language(config, src) for src in mixture}
            need = source_quotas(mixture, budget, unit, langs)
            total = float(sum(mixture.values()))
            per, largest, known = {}, math.inf, True
            for src, share in mixture.items():
                c = counts[src]
                if c.status != "ok":
                    known = False
                    per[src] = {"needs": need[src], "has": None, "ok": None}
                    continue
                if unit == "words":
                    has = c.words
                else:  # UTF-8 bytes of the cleaned text; the largest size is in English bytes
                    if src not in has_bytes:
                        has_bytes[src] = int(line_sizes(c.lines, unit).sum())
                    has = has_bytes[src]
                per[src] = {"needs": need[src], "has": has, "ok": has >= need[src]}
                if unit != "words":
                    premium = languages.get(langs[src]).byte_premium
                    per[src].update(language=langs[src], byte_premium=premium,
                                    english_bytes=quotas(mixture, budget)[src])
                    has = has / premium
                largest = min(largest, has * total / share)
            ok = all(v["ok"] for v in per.values()) if known else None
            # what the assemble job will say of this size (a 10,000-word line silently held most of a
            # 16k corpus): a corpus over its size_tolerance (the job fails) or one line dominating it (a warning)
            found = {}
            if ok:
                # the corpus section with its defaults (size_tolerance), as the assemble job gets it
                spec = section("corpora", {corpus: config["corpora"][corpus]}, f"corpora.{corpus}")[corpus]
                for src in mixture:
                    if src not in unit_sizes:
                        unit_sizes[src] = line_sizes(counts[src].lines, unit)
                found = preview({s: counts[s].lines for s in mixture}, mixture, budget, int(spec["seed"]),
                                spec["size_tolerance"], unit, langs, unit_sizes)
            rows.append({
                "corpus": corpus, "size": size, "budget": budget, "sources": per,
                "ok": ok,
                "largest": int(math.floor(largest)) if known and largest < math.inf else None,
                **({"unit": unit} if unit != "words" else {}),
                **found,
            })
    return rows


def pools(config: dict, counts: dict[str, SourceCount], sizes: list[dict]) -> dict:
    """Word pools per class of each generated suite, over the corpora at the largest size (as the rule builds them)."""
    # deferred: numpy, only for a generated suite's word pools
    from ..corpus.assemble import assemble

    out = {}
    suites = {n: s for n, s in (config.get("benchmarks") or {}).items() if s.get("kind") == "generated"}
    if not suites:
        return out
    largest_size = dag_plan.sizes(config)[-1]
    with tempfile.TemporaryDirectory(prefix="povstim-plan-") as tmp:
        paths, notes = [], []
        for corpus in config["corpora"]:
            row = next(r for r in sizes if r["corpus"] == corpus and r["size"] == largest_size)
            if row["ok"] is None:
                return {n: {"status": "unknown: a source of corpus " + corpus + " is not available"} for n in suites}
            budget = row["budget"]
            if not row["ok"]:
                budget = row["largest"]
                notes.append(f"corpus {corpus} at its largest possible size ({budget:,} "
                             f"{'words' if dag_plan.size_unit(config) == 'words' else 'English-equivalent bytes'}; "
                             f"{largest_size} does not fit)")
            mixture = dag_plan.mixture(config, corpus, largest_size)
            lines, _ = assemble({s: counts[s].lines for s in mixture}, mixture, budget,
                                int(config["corpora"][corpus]["seed"]), tolerance=None,
                                unit=dag_plan.size_unit(config),
                                langs={s: dag_plan.source_language(config, s) for s in mixture},
                                warn=False)  # size_table said it per corpus x size
            path = Path(tmp) / f"{corpus}.txt"
            write_lines(path, lines)
            paths.append(path)
        for name, spec in suites.items():
            # before any parse exists no word is ruled out by its part of speech (the benchmark rule may drop some)
            vocabulary = dag_plan.benchmark_vocabulary(config, name)
            # the generator at the suite's own settings, as the benchmark job runs it: what it needs is what plan says
            report = generator_report(build_lexicon(vocabulary), paths, int(spec["top_k_words"]),
                                      int(spec["pairs_per_paradigm"]), int(spec["seed"]), spec.get("paradigms"))
            report["vocabulary"] = vocabulary
            report["corpora"] = f"{', '.join(config['corpora'])} at {largest_size}"
            report["notes"] = notes
            out[name] = report
    return out


def make_plan(config: dict, base_dir: str | Path = ".", downloads: str | Path = "resources/downloads",
              filter_sample: int | None = None, forecast_cores: int | None = None,
              forecast_cache: str | Path | None = None, recalibrate: bool = False) -> dict:
    """``filter_sample``: sentences parsed per corpus to estimate the DPE filter with a real parser
    (None: ``evidence.DEFAULT_SAMPLE``; 0: no estimate). ``forecast_cores``: also forecast the training and
    scoring jobs' seconds and the wall time at that many cores (``preflight.forecast``; calibrations cached in
    ``forecast_cache``)."""
    # deferred: scipy, the parser and the filter, only for the DPE estimate
    from . import evidence

    base_dir, downloads = Path(base_dir), Path(downloads)
    counts = {}
    for name, spec in config["sources"].items():
        used = any(name in dag_plan.mixture(config, c, s) for c in config["corpora"] for s in dag_plan.sizes(config))
        if not used:
            continue
        log.info("counting source %s ...", name)
        counts[name] = count_source(name, dag_plan.source_spec(config, name), base_dir, downloads)
    sizes = size_table(config, counts)
    result = {
        "experiment": config["experiment"],
        "sources": {n: c.as_dict() for n, c in counts.items()},
        "sizes": sizes,
        "suites": pools(config, counts, sizes) if all(r["ok"] is not None for r in sizes) else {},
        "models": len(dag_plan.models(config)),
        "casing": casing.check(config, {n: c.lines for n, c in counts.items() if c.status == "ok"}, base_dir),
        "punctuation": punctuation.check(config, {n: c.lines for n, c in counts.items() if c.status == "ok"},
                                         base_dir),
    }
    result["void_definition"] = dag_plan.void_definition_lines(config)
    sample = evidence.DEFAULT_SAMPLE if filter_sample is None else filter_sample
    result["filter"] = evidence.estimate(config, counts, sizes, sample, {n: c.gold for n, c in counts.items()
                                                                         if c.gold}) if sample else {}
    # the power of what will be fitted: the cells the evidence forecast calls void are left out (None: no forecast)
    void = (frozenset((v["condition"], str(v["size"])) for v in (result["filter"] or {}).get("void") or []
                      if v["status"] == "void") if sample else None)
    # ... and so are those the conditions' definitions make void (BABY's rates all 0, a filter with no rules)
    by_definition = frozenset((v["duplicate"], str(z)) for v in dag_plan.void_definitions(config) for z in v["sizes"])
    if by_definition:
        void = (void or frozenset()) | by_definition
    result["power"] = power_summary(config, base_dir, void)
    if forecast_cores:
        # deferred: the trainer (torch), only when a forecast is asked for
        from . import forecast

        ok = all(c.status == "ok" for c in counts.values())
        # a void twin with identical text trains once (train/reuse.py): its train jobs are counted as links
        reused = evidence.reused_models((result["filter"] or {}).get("void") or [])
        # ... and so does one void by the conditions' definitions (BABY's rates all 0, a filter with no rules)
        reused.update({(v["duplicate"], z): v["kept"] for v in dag_plan.void_definitions(config) if v["identical"]
                       for z in v["sizes"]})
        # a size the sources cannot fill is refused above: nothing is forecast (or calibrated) for it
        refused = {(r["corpus"], r["size"]) for r in sizes if r["ok"] is False}
        result["forecast"] = (forecast.forecast(config, counts, base_dir, forecast_cores,
                                                Path(forecast_cache or forecast.cache_dir(base_dir)), recalibrate,
                                                reused, refused)
                              if ok else {"notes": ["not forecast: a source is not available yet"], "jobs": []})
    return result


def stops_the_run(result: dict) -> bool:
    """Whether a job of the run would fail on what the plan found (exit status 3): a size that does not fit, one whose
    assemble job fails on its size_tolerance (one very long line), or a generated suite the benchmark job cannot make
    at its top_k_words. An empty word class alone does not: the templates may draw it with others."""
    return bool([r for r in result["sizes"] if r["ok"] is False or r.get("overshoot")]) or any(
        not s.get("generates", True) for s in result["suites"].values())


def power_summary(config: dict, base_dir: Path, void: frozenset | None = None) -> dict:
    """``povstim power``'s table (analysis/models/power.py) and the fewer-than-3-seeds warning, for plan's summary
    line; a power that cannot be computed (a single seed, an imported suite not built yet) is a note, a bad key of
    the config's own power: section an error."""
    # deferred: scipy, only when the plan runs
    from ..analysis.models import power

    out = {"warning": power.seed_warning(config)}
    try:
        out["line"] = power.plan_line(power.analyse(config, base_dir / "results" / config["experiment"], void=void))
    except PovstimError as exc:
        if str(exc).startswith("power.") and config.get("power"):  # a bad power: section the user wrote
            raise
        out["line"] = f"Power: not computed: {exc}"
    return out


def thin_pools(rep: dict) -> list[str]:
    """Classes whose top-K pool holds one or two words."""
    return [cls for cls, v in rep.get("classes", {}).items() if 0 < v["available"] <= 2]


def pool_advice(name: str, rep: dict) -> list[str]:
    """The word-pool lines under a suite's classes: the top_k_words the generator needs (exact: the smallest K at which
    it makes every pair at the suite's pairs_per_paradigm), the classes still empty there (drawn with others, or with
    no word in every form), and the K that gives each thin class five words."""
    lines: list[str] = []
    classes = rep.get("classes", {})
    k = rep.get("k_needed")
    empty = rep.get("empty") or []
    if not rep.get("generates", True):
        why = f" ({rep['why']})" if rep.get("why") else ""
        if k:
            lines.append(f"  -> the benchmark cannot be generated at top_k_words {rep.get('top_k', 0):,}{why}: set "
                         f"benchmarks.{name}.top_k_words to at least {k:,} (the smallest at which the generator makes "
                         "every pair of the suite)")
            still = [c for c in empty if (classes[c]["k_for"].get("1") or math.inf) > k]
            if still:
                lines.append(f"     at {k:,}, {', '.join(still)} still {'has' if len(still) == 1 else 'have'} no word "
                             "in every form: the templates draw them with other classes or need one form at a time")
        else:
            lines.append(f"  -> the benchmark cannot be generated from these corpora at any top_k_words{why}: "
                         "larger or different corpora are needed")
    elif empty:
        lines.append(f"  -> note: {', '.join(empty)} {'has' if len(empty) == 1 else 'have'} no word in every form at "
                     f"top_k_words {rep.get('top_k', 0):,}, but the generator makes every pair of the suite there: the "
                     "templates draw such a class with others, or one verb form at a time")
    thin = thin_pools(rep)
    if thin:
        parts, reachable = [], []
        for c in thin:
            k5 = classes[c]["k_for"].get("5")
            if k5:
                parts.append(f"{c} at K={k5:,}")
                reachable.append(k5)
            else:
                n = classes[c].get("in_corpora")
                parts.append(f"{c} never (the corpora hold {n if n is not None else 'fewer than 5'} of its words)")
        advice = f"top_k_words {max(reachable):,} gives " + ("each" if len(reachable) == len(thin) else
                                                            "those it can") + " at least 5" if reachable else ""
        lines.append(f"  -> WARNING: {len(thin)} class(es) with only 1-2 words ({', '.join(thin)}): every item of "
                     "their templates reuses the same word, so a paradigm may measure that word, not the structure; "
                     f"five words: {'; '.join(parts)}" + (f"; {advice}" if advice else "")
                     + ("" if len(reachable) == len(thin) else
                        "; larger corpora give " + ("the others" if reachable else "them") + " more"))
    return lines


def size_lines(sizes: list[dict]) -> list[str]:
    """The plan's corpus-size lines: per corpus x size what each source must give and has (with size_unit
    english_bytes the conversion: English bytes x the language's byte premium = bytes of its text)."""
    lines: list[str] = []
    in_bytes = any(r.get("unit") == "english_bytes" for r in sizes)
    if in_bytes:
        lines += ["", "Corpus sizes in English-equivalent bytes (size_unit: english_bytes; each source's share x size x "
                      "its language's byte premium, Arnett et al. 2024 = UTF-8 bytes it must give / has):"]
    else:
        lines += ["", "Corpus sizes (words each source must give / has):"]
    for r in sizes:
        def part(src, v):
            got = f"{v['has']:,}" if v["has"] is not None else "?"
            if "byte_premium" not in v:
                return f"{src} {v['needs']:,}/{got}"
            return (f"{src} [{v['language']}] {v['english_bytes']:,} x {v['byte_premium']:.4f} = "
                    f"{v['needs']:,}/{got} bytes")
        parts = ", ".join(part(src, v) for src, v in r["sources"].items())
        status = "ok" if r["ok"] else ("TOO LARGE" if r["ok"] is False else "unknown")
        status = "OVERSHOOT" if r.get("overshoot") else "LONG LINE" if r.get("dominant_line") else status
        unit = "English-equivalent bytes" if r.get("unit") == "english_bytes" else "words"
        largest = f"; largest possible with this mixture: {r['largest']:,} {unit}" if r["largest"] is not None else ""
        lines.append(f"  {r['corpus']:<10} {r['size']:>6}  {status:<9} ({parts}){largest}")
    for r in sizes:
        if r.get("overshoot"):
            why = r["overshoot"].replace("corpora.<corpus>.", f"corpora.{r['corpus']}.")
            lines.append(f"  -> ERROR at run time: {r['corpus']} {r['size']}: {why}")
        elif r.get("dominant_line"):
            lines.append(f"  -> WARNING: {r['corpus']} {r['size']}: {r['warning']}")
    return lines


def render(result: dict) -> str:
    """The plan as text for a terminal."""
    lines = [f"Experiment {result['experiment']}: {result['models']} models; outputs under results/{result['experiment']}/", ""]
    lines.append("Sources after cleaning (what the corpus stage can draw from):")
    for name, s in result["sources"].items():
        if s["status"] != "ok":
            lines.append(f"  {name:<14} {s['status']}: {s['note']}")
            continue
        dropped = ", ".join(f"{k} {v:,}" for k, v in s["dropped"].items()) or "nothing"
        lines.append(f"  {name:<14} {s['sentences']:>10,} sentences {s['words']:>12,} words   dropped: {dropped}"
                     + (f"; {s['malformed_lines']:,} malformed lines (first: {s['malformed_examples'][0]['where']})"
                        if s["malformed_lines"] else ""))
        gone = s.get("dropped_transcripts") or []
        if gone:
            lines.append(f"  {'':<14} {len(gone):,} transcript(s) dropped for a header: "
                         + "; ".join(f"{d['file']} ({d['why']})" for d in gone[:3]) + ("; ..." if len(gone) > 3 else ""))
    lines += size_lines(result["sizes"])
    bad = [r for r in result["sizes"] if r["ok"] is False]
    if bad:
        lines.append(f"  -> {len(bad)} size(s) do not fit: lower `sizes`, change the mixture, or add text.")
    for name, rep in result["suites"].items():
        lines += ["", f"Benchmark {name}: word pools over {rep.get('corpora', '?')}, top_k_words {rep.get('top_k', '?')} "
                      f"({rep.get('frequent_words', 0):,} frequent words)"]
        for note in rep.get("notes", []):
            lines.append(f"  note: {note}")
        for cls, v in rep.get("classes", {}).items():
            flag = "" if v["available"] else "   <- EMPTY"
            if 0 < v["available"] <= 2:
                flag = f"   <- THIN ({v['available']} word{'s' if v['available'] > 1 else ''})"
            first = v["k_for"].get("1")
            need = f"first word at K={first:,}" if first else "in no corpus"
            need += f", all at K={v['k_all']:,}" if v["k_all"] else ""
            lines.append(f"  {cls:<22} {v['available']:>3}/{v['candidates']:<3} {need}{flag}")
        lines += pool_advice(name, rep)
    pw = result.get("power") or {}
    if pw:
        lines += ["", pw["line"]] + ([pw["warning"]] if pw["warning"] else [])
    if result.get("void_definition"):
        lines += ["", "Void contrasts by the conditions' definitions (before any job):"]
        lines += [f"  -> WARNING: {x}" for x in result["void_definition"]]
    lines += render_filter(result.get("filter") or {})
    lines += casing.render(result.get("casing") or {})
    lines += punctuation.render(result.get("punctuation") or {})
    if result.get("forecast"):
        from .forecast import render as render_forecast

        lines += render_forecast(result["forecast"])
    return "\n".join(lines) + "\n"


def render_filter(ev: dict) -> list[str]:
    from .evidence import render as render_evidence

    return render_evidence(ev)


def write_json_report(result: dict, path: str | Path) -> None:
    write_json(path, json.loads(json.dumps(result, default=str)))
