"""The item schema of the task kinds: validation with errors naming file and line, the `suite`
benchmark kind (import, norms copied, manifest), and minimal-pair suites unchanged."""

from __future__ import annotations

import json

import pytest

from povstim.benchmarks.suite import read_suite
from povstim.benchmarks.tasks import TASKS, builtin_suite, import_items
from povstim.cli import main
from povstim.io import PovstimError

BASE = {"suite": "s", "paradigm": "p", "category": "c"}
MC = {**BASE, "task": "multiple_choice", "stimulus": "il cane", "connective": "cioè",
      "options": ["un animale", "una sedia"], "answer": "un animale"}
COMP = {**BASE, "task": "completion", "prompt": "Il gatto mangia. I gatti", "answers": ["mangiano"]}
MP = {**BASE, "good": "La casa è piccola.", "bad": "La casa è piccolo."}


def _write(path, records):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def test_every_kind_reads_and_a_suite_may_mix_them(tmp_path):
    f = _write(tmp_path / "mix.jsonl", [dict(MP, item_id="1"), dict(MC, item_id="2"), dict(COMP, item_id="3")])
    items = read_suite(f)
    assert [it.get("task", "minimal_pair") for it in items] == list(TASKS)
    assert items[1]["answer"] == "un animale" and items[2]["answers"] == ["mangiano"]


@pytest.mark.parametrize("bad, message", [
    (dict(MC, options=["un animale"], answer="un animale"), "at least two options"),
    (dict(MC, answer="un gatto"), "answer 'un gatto' is not one of the options"),
    (dict(MC, options=["un animale", "un animale"]), "occurs twice"),
    ({k: v for k, v in MC.items() if k != "connective"}, "lacks field(s) connective"),
    (dict(MC, options="un animale"), "must be a list of non-empty strings"),
    (dict(COMP, answers=[]), "needs at least one accepted answer"),
    ({k: v for k, v in COMP.items() if k != "answers"}, "lacks field(s) answers"),
    (dict(COMP, prompt=""), "'prompt' must be a non-empty string"),
    (dict(MC, task="cloze"), "unknown task 'cloze'"),
])
def test_bad_items_name_the_file_and_line(tmp_path, bad, message):
    f = _write(tmp_path / "suite.jsonl", [dict(MP, item_id="1"), dict(COMP, item_id="2"), dict(bad, item_id="3")])
    with pytest.raises(PovstimError) as exc:
        read_suite(f)
    assert f"{f}, line 3" in str(exc.value) and message in str(exc.value)


def test_minimal_pair_records_are_read_exactly_as_before(tmp_path):
    # No `task` field: still a minimal pair, the record untouched (item_id as a string).
    rec = dict(MP, item_id=7, template="t1")
    f = _write(tmp_path / "mp.jsonl", [rec])
    assert read_suite(f) == [dict(rec, item_id="7")]
    with pytest.raises(PovstimError, match="line 1: missing field"):
        read_suite(_write(tmp_path / "bad.jsonl", [{k: v for k, v in MP.items() if k != "bad"} | {"item_id": 1}]))


def test_suite_import_fills_the_connective_and_copies_norms(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    no_conn = {k: v for k, v in MC.items() if k != "connective"}
    _write(src / "a.jsonl", [dict(no_conn, item_id="1"), dict(COMP, item_id="2")])
    (src / "norms.csv").write_text("test,raw,age_months\nall,1,36\nall,2,48\n")
    items, norms, params = import_items("mine", {"kind": "suite", "path": str(src), "language": "it"})
    assert items[0]["connective"] == "cioè" and items[0]["suite"] == "mine"
    items, _, _ = import_items("mine", {"kind": "suite", "path": str(src), "connective": "that is"})
    assert items[0]["connective"] == "that is"
    with pytest.raises(PovstimError, match="lacks field"):  # no connective anywhere
        import_items("mine", {"kind": "suite", "path": str(src)})
    out = tmp_path / "out" / "mine"
    rc = main(["benchmark", "--suite", "mine", "--params", json.dumps({"kind": "suite", "path": str(src),
                                                                        "language": "it"}),
               "--out-dir", str(out)])
    assert rc == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["tasks"] == {"completion": 1, "multiple_choice": 1} and manifest["norms"] == ["norms.csv"]
    assert (out / "norms.csv").read_text() == (src / "norms.csv").read_text()
    assert len(read_suite(out)) == 2


def test_suite_import_rejects_bad_norms_before_writing(tmp_path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    _write(src / "a.jsonl", [dict(MC, item_id="1")])
    (src / "norms.csv").write_text("test,raw,age_months\nall,5,40\nall,4,48\n")
    out = tmp_path / "out"
    rc = main(["benchmark", "--suite", "x", "--params", json.dumps({"kind": "suite", "path": str(src)}),
               "--out-dir", str(out)])
    assert rc != 0 and f"{src / 'norms.csv'}, line 3" in capsys.readouterr().err
    assert not out.exists()


def test_builtin_example_suites_are_valid_and_original():
    for name, connective in (("it", "cioè"), ("en", "that is")):
        items, norms, _ = import_items(name, {"kind": "suite", "path": f"builtin:{name}"})
        kinds = {it.get("task", "minimal_pair") for it in items}
        assert kinds == set(TASKS)
        assert {it["connective"] for it in items if it.get("task") == "multiple_choice"} == {connective}
        assert len(norms) == 1
    # Italian items carry elisions and accents intact.
    text = "".join(p.read_text(encoding="utf-8") for p in builtin_suite("it").glob("*.jsonl"))
    assert "d'oro" in text and "C'è" in text and "è" in text
    with pytest.raises(PovstimError, match="no built-in suite 'fr'"):
        import_items("x", {"kind": "suite", "path": "builtin:fr"})
