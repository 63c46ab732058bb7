"""`povstim plan`: words per source after cleaning, the largest size of each mixture and the benchmark word
pools, before anything is trained (messages 1 and 2). Gold values are computed here by hand
(word counts of the files, the mixture arithmetic) or by running the benchmark generator itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from povstim.cli import main
from povstim.io import PovstimError
from povstim.synth import generate

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("data")
    cds = [t for t, _, _ in generate("child", 1500, 5, {"question_formation": 0.02, "binding": 0.01})]
    wiki = [t for t, _, _ in generate("adult", 700, 6, {"question_formation": 0.01, "binding": 0.01})]
    (d / "cds.txt").write_text("\n".join(cds) + "\nhi there\n")  # one line under min_words
    (d / "wiki.txt").write_text("\n".join(wiki) + "\n")
    return {"dir": d, "cds": cds, "wiki": wiki}


def config(tmp_path: Path, files, sizes, top_k=3000, mixture=None) -> Path:
    c = yaml.safe_load((REPO / "configs" / "own-data-template.yaml").read_text())
    c["sources"]["my_cds"]["path"] = str(files["dir"] / "cds.txt")
    c["sources"]["my_wiki"]["path"] = str(files["dir"] / "wiki.txt")
    c["sizes"] = sizes
    if mixture:
        c["corpora"]["wiki"]["mixture"] = mixture
    c["benchmarks"]["posh"].update(top_k_words=top_k, pairs_per_paradigm=2)
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(c))
    return path


def words(lines, min_words=3) -> int:
    return sum(len(x.split()) for x in lines if len(x.split()) >= min_words)


def test_words_after_cleaning_and_the_largest_size_each_mixture_allows(files, tmp_path, capsys):
    cds_words, wiki_words = words(files["cds"]), words(files["wiki"])
    too_big = f"{cds_words // 1000 + 1}k"
    path = config(tmp_path, files, ["2k", too_big], mixture={"my_wiki": 0.7, "my_cds": 0.3})
    code = main(["plan", str(path), "--json", str(tmp_path / "plan.json")])
    out = capsys.readouterr().out
    assert code == 3  # a size does not fit
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert plan["sources"]["my_cds"]["words"] == cds_words
    short = sum(1 for x in files["cds"] + ["hi there"] if len(x.split()) < 3)
    assert plan["sources"]["my_cds"]["dropped"] == {"under_3_words": short}
    assert plan["sources"]["my_wiki"]["words"] == wiki_words
    rows = {(r["corpus"], r["size"]): r for r in plan["sizes"]}
    assert rows[("baby", "2k")]["ok"] and rows[("baby", too_big)]["ok"] is False
    assert rows[("baby", too_big)]["largest"] == cds_words
    # wiki = 70% my_wiki + 30% my_cds: the budget is limited by whichever source runs out first
    assert rows[("wiki", "2k")]["largest"] == int(min(wiki_words / 0.7, cds_words / 0.3))
    assert rows[("wiki", "2k")]["sources"]["my_wiki"]["needs"] == 1400
    assert "TOO LARGE" in out and f"largest possible with this mixture: {cds_words:,} words" in out


def test_word_pools_name_the_top_k_that_fills_every_class(files, tmp_path, capsys):
    path = config(tmp_path, files, ["2k", "6k"], top_k=60)
    assert main(["plan", str(path), "--json", str(tmp_path / "plan.json")]) == 3
    posh = json.loads((tmp_path / "plan.json").read_text())["suites"]["posh"]
    assert not posh["generates"] and posh["k_needed"] > 60
    assert f"top_k_words to at least {posh['k_needed']:,}" in capsys.readouterr().out
    k = posh["k_needed"]
    # the generator itself agrees, at the suite's own pairs_per_paradigm (2): at K it makes every pair, at K - 1 not
    corpora = []
    from povstim.corpus.assemble import assemble

    for corpus, source in (("baby", "cds"), ("wiki", "wiki")):
        name = f"my_{source}"  # the corpus as the pipeline assembles it: same source name, seed, clean lines
        clean = [x for x in files[source] if len(x.split()) >= 3]
        lines, _ = assemble({name: clean}, {name: 1.0}, 6000, 1)
        p = tmp_path / f"{corpus}.txt"
        p.write_text("\n".join(lines) + "\n")
        corpora += ["--corpus", str(p)]
    spec = {"kind": "generated", "pairs_per_paradigm": 2, "seed": 1}  # the config's
    ok = main(["benchmark", "--suite", "posh", "--params", json.dumps({**spec, "top_k_words": k}), *corpora,
               "--out-dir", str(tmp_path / "b1")])
    err_ok = capsys.readouterr().err
    assert ok == 0, err_ok
    assert "no word of class" not in err_ok, err_ok
    bad = main(["benchmark", "--suite", "posh", "--params", json.dumps({**spec, "top_k_words": k - 1}), *corpora,
                "--out-dir", str(tmp_path / "b2")])
    err = capsys.readouterr().err
    assert bad == 1 and ("no word of class" in err or "distinct pairs" in err)
    # and the benchmark's own error says how far to raise it
    assert f"top_k_words: {k} generates every pair" in err


def test_plan_of_an_unreadable_source_says_what_is_missing(tmp_path, capsys):
    c = yaml.safe_load((REPO / "configs" / "own-data-template.yaml").read_text())
    c["sources"]["my_cds"]["path"] = str(tmp_path / "nope.txt")
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(c))
    main(["plan", str(path)])
    out = capsys.readouterr().out
    assert "my_cds" in out and "missing" in out and "nope.txt does not exist" in out


def test_plan_of_a_missing_file_is_an_error_naming_the_key_and_path(tmp_path, capsys):
    # Once "unknown" and exit 0.
    c = yaml.safe_load((REPO / "configs" / "own-data-template.yaml").read_text())
    c["sources"]["my_cds"]["path"] = str(tmp_path / "nope.txt")
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(c))
    assert main(["plan", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"sources.my_cds.path: {tmp_path / 'nope.txt'} does not exist" in err
    assert len(err.strip().splitlines()) == 1


def test_plan_of_an_empty_source_names_the_source_and_its_file(files, tmp_path, capsys):
    # Once "assemble: word budget must be positive, got 0", naming no source.
    empty = tmp_path / "empty.txt"
    empty.write_text("hi\nok then\n")  # every line under min_words
    path = config(tmp_path, files, ["2k"])
    c = yaml.safe_load(path.read_text())
    c["sources"]["my_cds"]["path"] = str(empty)
    path.write_text(yaml.safe_dump(c))
    assert main(["plan", str(path), "--json", str(tmp_path / "plan.json")]) == 1
    captured = capsys.readouterr()
    assert "word budget" not in captured.err
    assert f"sources.my_cds.path: {empty}: cleaning keeps no lines (dropped: {{'under_3_words': 2}})" in captured.err
    assert "my_cds" in captured.out and "empty" in captured.out  # the rest of the plan is still printed
    assert json.loads((tmp_path / "plan.json").read_text())["sources"]["my_cds"]["status"] == "empty"


def test_plan_and_clean_of_a_zero_byte_source_say_it_is_empty(files, tmp_path, capsys):
    # An empty local file got "a source is not available yet (download it first)".
    from povstim.sources.clean import input_paths

    empty = tmp_path / "empty.txt"
    empty.write_text("")
    path = config(tmp_path, files, ["2k"])
    c = yaml.safe_load(path.read_text())
    c["sources"]["my_cds"]["path"] = str(empty)
    path.write_text(yaml.safe_dump(c))
    assert main(["plan", str(path), "--json", str(tmp_path / "plan.json")]) == 1
    captured = capsys.readouterr()
    assert f"sources.my_cds.path: {empty} is empty (0 bytes)" in captured.err
    assert len(captured.err.strip().splitlines()) == 1
    assert "download" not in captured.out + captured.err
    assert json.loads((tmp_path / "plan.json").read_text())["sources"]["my_cds"]["status"] == "empty"
    with pytest.raises(PovstimError, match=r"sources\.my_cds\.path: .*empty\.txt is empty \(0 bytes\)"):
        input_paths("my_cds", c["sources"]["my_cds"], None, tmp_path)  # what `povstim clean` reads first


@pytest.mark.parametrize("state", ["no files", "only empty files", "no file the include selects"])
def test_check_plan_and_clean_of_a_folder_without_text_say_why(state, files, tmp_path, capsys):
    # A folder: `check` said OK, `clean` "cleaning kept no lines from DIR (dropped: {}); check its
    # kind/format/include settings". Now all three name the folder and what it lacks, as for a 0-byte file.
    folder = tmp_path / "mine"
    (folder / "sub").mkdir(parents=True)
    fmt = "lines"
    if state == "only empty files":
        (folder / "sub" / "a.txt").write_text("")
        (folder / "b.txt").write_text("")
        want = f"sources.my_cds.path: {folder}: its 2 file(s) that it reads are all empty (0 bytes; first: b.txt)"
    elif state == "no file the include selects":
        fmt = "chat"  # reads *.cha by default
        (folder / "notes.txt").write_text("the dog wants a ball .\n")
        want = (f"sources.my_cds.path: {folder} holds 1 file(s) (first: notes.txt) but none that format chat's "
                "default include selects (*.cha): set sources.my_cds.include")
    else:
        want = f"sources.my_cds.path: {folder} is an empty folder (no files)"
    path = config(tmp_path, files, ["2k"])
    c = yaml.safe_load(path.read_text())
    spec = {"kind": "local", "format": fmt, "path": str(folder)}
    c["sources"]["my_cds"] = spec
    path.write_text(yaml.safe_dump(c))
    assert main(["check", str(path)]) == 0
    assert f"{path}: warning: {want}" in capsys.readouterr().out
    assert main(["plan", str(path), "--filter-sample", "0", "--json", str(tmp_path / "plan.json")]) == 1
    captured = capsys.readouterr()
    assert want in captured.err and len(captured.err.strip().splitlines()) == 1
    assert json.loads((tmp_path / "plan.json").read_text())["sources"]["my_cds"]["status"] == "empty"
    out = tmp_path / "clean.txt"
    assert main(["clean", "--source", "my_cds", "--params", json.dumps(spec), "--out", str(out),
                 "--stats", str(tmp_path / "clean.json")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"povstim clean: error: {want}") and "download" not in err and not out.exists()


def test_plan_names_chat_transcripts_dropped_for_a_header(files, tmp_path, capsys):
    # With `languages: [eng]`, a transcript without @Languages is left out whole: the plan names it.
    folder = tmp_path / "chat"
    folder.mkdir()
    fixtures = REPO / "tests" / "fixtures" / "sources"
    for name in ("mini.cha", "no_languages.cha", "colonless_header.cha"):
        (folder / name).write_text((fixtures / name).read_text())
    path = config(tmp_path, files, ["2k"])
    c = yaml.safe_load(path.read_text())
    c["sources"]["my_chat"] = {"kind": "local", "format": "chat", "path": str(folder), "languages": ["eng"]}
    c["corpora"]["baby"]["mixture"] = {"my_cds": 0.9, "my_chat": 0.1}
    path.write_text(yaml.safe_dump(c))
    main(["plan", str(path), "--json", str(tmp_path / "plan.json")])
    out = capsys.readouterr().out
    chat = json.loads((tmp_path / "plan.json").read_text())["sources"]["my_chat"]
    assert [d["file"] for d in chat["dropped_transcripts"]] == ["no_languages.cha"]
    assert chat["malformed_lines"] >= 1  # the colonless @Languages, read and counted
    assert "1 transcript(s) dropped for a header: no_languages.cha (no @Languages header" in out


def test_plan_says_what_each_size_s_assemble_job_will_say_of_one_very_long_line(tmp_path, capsys):
    # With max_sentence_words: null one 10,000-word line was 10,000 of a 16k corpus's 16,001 words. The
    # plan only logged it when a generated suite made it assemble the largest size; with any suite, every size's
    # row now says what its assemble job will: a dominant line (a warning) or a size_tolerance failure (an error).
    # 1,000 six-word lines + the 10,000-word line 501 = 16,000 words: at 16k every line is taken (hand-computed:
    # the long line holds 10,000 / 16,000 = 62.5%). The smaller sizes are checked against the real stages.
    lines = [f"short line number {i} is here" for i in range(1000)]
    lines.insert(500, " ".join(["word"] * 10_000))
    src = tmp_path / "long.txt"
    src.write_text("\n".join(lines) + "\n")
    c = yaml.safe_load((REPO / "configs" / "own-data-template.yaml").read_text())
    c["sources"] = {"my_cds": {"kind": "local", "format": "lines", "path": str(src), "max_sentence_words": None}}
    c["corpora"] = {"baby": {"mixture": {"my_cds": 1.0}, "seed": 1}}
    c["conditions"] = {"baby": {"from": "baby", "filter": False}}
    c["sizes"] = ["4k", "12k", "16k"]
    path = tmp_path / "long.yaml"
    path.write_text(yaml.safe_dump(c))
    code = main(["plan", str(path), "--filter-sample", "0", "--json", str(tmp_path / "plan.json")])
    out = capsys.readouterr().out
    rows = {r["size"]: r for r in json.loads((tmp_path / "plan.json").read_text())["sizes"]}
    assert rows["16k"]["dominant_line"] == {"source": "my_cds", "line": 501, "words": 10_000, "share": 0.625}
    assert "baby          16k  LONG LINE" in out
    assert ("-> WARNING: baby 16k: assemble: line 501 of source 'my_cds' (its cleaned text) holds 10,000 of the "
            "corpus's 16,000 words (62.5%)") in out
    # the real stages: clean the file as the pipeline does, assemble each size; the plan said the same
    clean = tmp_path / "clean.txt"
    assert main(["clean", "--source", "my_cds", "--params", json.dumps(c["sources"]["my_cds"]), "--out", str(clean),
                 "--stats", str(tmp_path / "clean.json")]) == 0
    capsys.readouterr()
    verdicts = set()
    for size in c["sizes"]:
        stats = tmp_path / f"{size}.json"
        rc = main(["assemble", "--input", f"my_cds={clean}", "--mixture", '{"my_cds": 1.0}', "--words", size,
                   "--seed", "1", "--corpus-name", "baby", "--out", str(tmp_path / f"{size}.txt"),
                   "--stats", str(stats)])
        err = capsys.readouterr().err
        if rc == 1:  # over the default 2% tolerance: the plan gave the job's own message, as an error
            assert rows[size]["overshoot"] and "dominant_line" not in rows[size]
            assert rows[size]["overshoot"].replace("<corpus>", "baby") in err
            assert f"-> ERROR at run time: baby {size}: " in out
            verdicts.add("overshoot")
        else:
            assert rc == 0 and "overshoot" not in rows[size]
            assert json.loads(stats.read_text()).get("dominant_line") == rows[size].get("dominant_line")
            verdicts.add("dominant" if rows[size].get("dominant_line") else "fine")
    assert {"overshoot", "dominant"} <= verdicts  # both cases occur among these sizes
    assert code == 3  # a size whose assemble job fails is not a plan that runs
