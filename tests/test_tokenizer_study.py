"""The vocab-size study (POSH Table 9): token counts fall with vocab size; the choice balances corpora."""

from __future__ import annotations

import csv
import json

from povstim import cli
from povstim.tokenizer import study
from test_tokenizer import make_corpus


def test_vocab_study_table_and_choice(tmp_path):
    small_lexicon = tmp_path / "baby.txt"
    small_lexicon.write_text("\n".join(make_corpus(1500, 1)) + "\n")
    # a "wiki-like" corpus: same grammar plus long rare words, so it compresses worse at small vocabularies
    rare = [s[:-1] + f" near the {w}." for s, w in zip(make_corpus(1500, 2), ["lighthouse", "archipelago",
            "cathedral", "observatory", "parliament"] * 300)]
    wiki = tmp_path / "wiki.txt"
    wiki.write_text("\n".join(rare) + "\n")
    out = tmp_path / "study"
    args = ["vocab-study", "--corpus", "baby", "1k", str(small_lexicon), "--corpus", "wiki", "1k", str(wiki),
            "--params", '{"vocab_size": 9999, "min_frequency": 2}', "--vocab-sizes", "300", "400", "2000",
            "--out-dir", str(out)]
    assert cli.main(args) == 0
    rows = list(csv.DictReader(open(out / "table9.tsv"), delimiter="\t"))
    assert [(r["vocab_size"], r["corpus"]) for r in rows] == [
        ("300", "baby"), ("300", "wiki"), ("400", "baby"), ("400", "wiki"), ("2000", "baby"), ("2000", "wiki")]
    for name in ("baby", "wiki"):
        counts = [int(r["tokens"]) for r in rows if r["corpus"] == name]
        assert counts[0] > counts[1] >= counts[2]  # a bigger vocabulary never needs more tokens
        assert int(rows[0]["words"]) == sum(len(s.split()) for s in small_lexicon.read_text().splitlines())
    wide = (out / "table9_wide.tsv").read_text().splitlines()
    assert wide[0] == "vocab_size\tcorpus\t1k" and len(wide) == 7
    choice = json.loads((out / "choice.json").read_text())
    disc = {int(r["vocab_size"]): float(r["discrepancy"])
            for r in csv.DictReader(open(out / "discrepancy.tsv"), delimiter="\t")}
    assert choice["chosen_vocab_size"] == min(disc, key=disc.get)
    # rerunning gives the same bytes
    first = (out / "table9.tsv").read_bytes()
    assert cli.main(args) == 0 and (out / "table9.tsv").read_bytes() == first


def test_discrepancy_is_relative_spread():
    rows = [study.Row(100, "a", "1k", 1, 100, 120, 100), study.Row(100, "b", "1k", 1, 100, 180, 100),
            study.Row(200, "a", "1k", 1, 100, 110, 200), study.Row(200, "b", "1k", 1, 100, 120, 200)]
    disc = study.discrepancies(rows)
    assert abs(disc[0]["discrepancy"] - 0.6 / 1.5) < 1e-12
    assert study.choose(disc)["chosen_vocab_size"] == 200
