"""How many sentences and words a placebo changes: the corpora of the two conditions it is matched to (``of``,
``vs``) rebuilt from the same base.txt and dpe.tsv as the placebo's own, by the code that builds them
(``build.build`` for an old-style condition, the operations for one declared with ``operations:``), and
compared sentence by sentence. Cheap (lists of line ids), so the placebo's rule needs no other condition's
files."""

from __future__ import annotations

from .build import build as build_legacy
from .operations import State, apply


def sentence_ids(lines: list[str], dpe_of: dict[int, list[str]], targeted_of: dict[int, set[str]], seed: int,
                 how: dict) -> set[int]:
    """The base.txt lines a condition built as ``how`` (operations._as_built) keeps."""
    if "operations" in how:
        state = State(lines, dpe_of, targeted_of, seed, how["name"], ids=list(range(len(lines))))
        return set(apply(state, how["operations"]).ids)
    if how["filter"] is None:
        return set(range(len(lines)))
    keep = set(how["filter"])
    dpe = {i: [p for p in ps if p in keep] for i, ps in dpe_of.items()}
    dpe = {i: ps for i, ps in dpe.items() if ps}
    targeted = {i: {p for p in ps if p in keep} for i, ps in targeted_of.items() if i in dpe}
    cond = build_legacy(len(lines), dpe, how["reinsert"], seed, targeted, words=[len(x.split()) for x in lines])
    return set(cond.ids)


def change(lines: list[str], dpe_of: dict[int, list[str]], targeted_of: dict[int, set[str]], seed: int,
           match: dict) -> tuple[int, int]:
    """(sentences, words) by which the conditions ``match['of']`` and ``match['vs']`` differ: the lines one
    keeps and the other does not, counted both ways (BABY puts 4 evidence sentences into BABY-F in place of 4
    others: 8 sentences)."""
    a = sentence_ids(lines, dpe_of, targeted_of, seed, match["of"])
    b = sentence_ids(lines, dpe_of, targeted_of, seed, match["vs"])
    diff = a ^ b
    return len(diff), sum(len(lines[i].split()) for i in diff)
