"""No cue, word list or fixture of the DPE filter quotes a sentence of the gold treebank the
filter is validated on (the UD_English-CHILDES dev split).

Rules fitted to the very sentences they are measured on report in-sample numbers; the filter's cues are
general structural patterns instead. This test collects every string literal (docstrings included) of
``workflow/povstim/dpe/**``, ``workflow/povstim/filter/**`` and ``workflow/povstim/constructions/**`` (its YAML
library and word lists line by line) and of the DPE test modules (with
:mod:`ast`), every quoted span inside them, and the texts of the DPE test fixtures, and fails if one of at least three words equals a
dev utterance, is contained in one, or contains a whole dev utterance of at least three words.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path


REPO = Path(__file__).resolve().parents[1]
PACKAGES = [REPO / "workflow" / "povstim" / "dpe", REPO / "workflow" / "povstim" / "filter",
            REPO / "workflow" / "povstim" / "constructions"]
# the declarative constructions' data: YAML entries (every string in them) and word lists (every line)
CONSTRUCTION_DATA = REPO / "workflow" / "povstim" / "constructions"
FIXTURES = [REPO / "tests" / "fixtures" / "conllu"]
# the DPE tests' own example sentences (hand-written trees, spaCy checks)
TEST_MODULES = [REPO / "tests" / f for f in ("test_filter_rules.py", "test_filter_spacy.py", "test_filter_validation.py",
                                              "test_constructions.py")]
QUOTED = re.compile(r"\"([^\"]+)\"|“([^”]+)”|'([^']{8,})'")


def words(text: str) -> tuple[str, ...]:
    """Lowercased words; apostrophes kept inside words, everything else a separator."""
    text = text.lower().replace("’", "'")
    return tuple(re.findall(r"[a-z0-9]+(?:'[a-z]+)?", text))


def literal_units(path: Path) -> list[tuple[str, str]]:
    """(where, text) for each string literal of a module and each quoted span inside one."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            where = f"{path.relative_to(REPO)}:{node.lineno}"
            out.append((where, node.value))
            out.extend((where, next(g for g in m.groups() if g)) for m in QUOTED.finditer(node.value))
    return out


def fixture_units(path: Path) -> list[tuple[str, str]]:
    out = []
    for k, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("#") and "=" in line:
            out.append((f"{path.relative_to(REPO)}:{k}", line.split("=", 1)[1]))
            out.extend((f"{path.relative_to(REPO)}:{k}", next(g for g in m.groups() if g))
                       for m in QUOTED.finditer(line))
        elif line and line[0].isdigit():
            pass  # token lines: the sentence is in its # text comment
    return out


def yaml_units(path: Path) -> list[tuple[str, str]]:
    """(where, text) for every string of a YAML file (keys, values, comments' lines) and each quoted span."""
    out = []
    for k, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        where = f"{path.relative_to(REPO)}:{k}"
        text = line.split(":", 1)[1] if ":" in line and not line.lstrip().startswith("#") else line
        out.append((where, text.strip(" -#")))
        out.extend((where, next(g for g in m.groups() if g)) for m in QUOTED.finditer(line))
    return out


def word_list_units(path: Path) -> list[tuple[str, str]]:
    return [(f"{path.relative_to(REPO)}:{k}", line.split("#", 1)[0].strip())
            for k, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)]


def all_units() -> list[tuple[str, str]]:
    units = []
    for path in sorted(CONSTRUCTION_DATA.rglob("*.yaml")):
        units.extend(yaml_units(path))
    for path in sorted(CONSTRUCTION_DATA.rglob("*.txt")):
        units.extend(word_list_units(path))
    for pkg in PACKAGES:
        for path in sorted(pkg.rglob("*.py")):
            units.extend(literal_units(path))
    for path in TEST_MODULES:
        units.extend(literal_units(path))
    for folder in FIXTURES:
        for path in sorted(folder.rglob("*.conllu")):
            units.extend(fixture_units(path))
    return units


def contains(big: tuple[str, ...], small: tuple[str, ...]) -> bool:
    n = len(small)
    return any(big[i:i + n] == small for i in range(len(big) - n + 1))


def collisions(units, utterances: set[tuple[str, ...]]) -> list[str]:
    long_utts = [u for u in utterances if len(u) >= 3]
    bad = []
    for where, text in units:
        w = words(text)
        if len(w) < 3:
            continue
        if w in utterances:
            bad.append(f"{where}: {text!r} is a dev utterance")
            continue
        hit = next((u for u in long_utts if (len(w) <= len(u) and contains(u, w))
                    or (len(u) <= len(w) and contains(w, u))), None)
        if hit is not None:
            bad.append(f"{where}: {text[:80]!r} overlaps the dev utterance {' '.join(hit)!r}")
    return bad


def test_the_check_has_teeth():
    utts = {words("Is that the cup you wanted?"), words("Where did it go?")}
    units = [("a", "the cup you wanted"), ("b", 'e.g. "Is that the cup you wanted?" and more'),
             ("c", "A docstring quoting Where did it go? whole."), ("d", "the cup"), ("e", "a cup you wanted")]
    got = collisions(units, utts)
    assert [g.split(":")[0] for g in got] == ["a", "b", "c"], got
    assert collisions(literal_units(Path(__file__)), {words("quoting where did it go whole")})  # ast finds literals


def test_no_dpe_cue_word_list_or_fixture_quotes_a_dev_sentence(shared_data):
    from povstim.parse.conllu import read_file

    dev = read_file(shared_data / "ud_childes" / "en_childes-ud-dev.conllu")
    utterances = {words(s.text) for s in dev}
    units = all_units()
    assert len(units) > 100  # the modules' literals and the fixtures were read
    bad = collisions(units, utterances)
    assert not bad, "\n".join(bad)


def test_the_construction_library_is_read():
    units = [u for path in sorted(CONSTRUCTION_DATA.rglob("*.yaml")) for u in yaml_units(path)]
    texts = " ".join(t for _, t in units)
    assert "a beautiful five days" in texts and "relative clause modifying the subject" in texts
    assert any(t == "themselves" for _, t in word_list_units(CONSTRUCTION_DATA / "words" / "reflexives.txt"))
