"""Running a condition's operations on files: trees from the parse shards, condition.json's counts, and the
audit (operations.tsv, also written for a legacy filter/reinsert condition)."""

from __future__ import annotations

from collections import Counter

from ..dpe import audit as dpe_audit
from ..io import PovstimError, atomic_write
from ..parse import conllu
from . import placebo
from .build import Condition, SplitSettings, _rate, vs_reference
from .operations import AUDIT_COLUMNS, OPERATIONS, State

REMOVING = ("remove", "random_remove")


def read_trees(paths: list[str], wanted: set[int]) -> dict[int, conllu.Sentence]:
    out = {}
    for p in paths:
        for s in conllu.read_file(p):
            try:
                i = int(s.sent_id)
            except (TypeError, ValueError):
                raise PovstimError(f"{p}: sentence id {s.sent_id!r} is not a base.txt line") from None
            if i in wanted:
                out[i] = s
    return out


def build(lines: list[str], rows: list, ops: list[dict], seed: int, name: str, tree_paths: list[str]) -> State:
    dpe_of = dpe_audit.removed(rows)
    state = State(lines, dpe_of, dpe_audit.targeted(rows), seed, name, ids=list(range(len(lines))))
    if any(o["op"] == "replace" for o in ops):
        if not tree_paths:
            raise PovstimError(f"conditions.{name}: a replace operation needs the parse shards (--trees)")
        state.trees = read_trees(tree_paths, set(dpe_of))
    state.notes["reference"] = {"after_step": None, "n_sentences": len(lines),
                                "n_words": sum(len(x.split()) for x in lines)}
    for step, o in enumerate(ops):
        if o["op"] not in OPERATIONS:
            raise PovstimError(f"conditions.{name}.operations[{step}].op: unknown operation {o['op']!r}")
        if o["op"] == "placebo":  # its size: how much the two conditions it is matched to differ
            n, words = placebo.change(lines, state.dpe_of, state.targeted_of, seed, o["match"])
            o = {**o, "n_changed": n, "words_changed": words}
        OPERATIONS[o["op"]].apply(state, o, step)
        if o["op"] in REMOVING:  # what the later steps keep: the corpus after the last removal
            state.notes["reference"] = {"after_step": step, "n_sentences": len(state.ids), "n_words": state.n_words()}
    return state


def stats(base: str, lines: list[str], state: State, ops: list[dict], train: list[int], dev: list[int],
          split: SplitSettings) -> dict:
    n = len(state.ids)
    ref = state.notes["reference"]
    n_words = state.n_words()
    cons = sorted({c for v in state.dpe_of.values() for c in v})
    present = Counter(c for i in state.ids if i not in state.text for c in state.dpe_of.get(i, []))
    targeted = Counter(c for i in state.ids if i not in state.text for c in state.dpe_of.get(i, [])
                       if c in state.targeted_of.get(i, ()))
    actions = Counter((a[1], a[2]) for a in state.audit)
    n_base_words = sum(len(x.split()) for x in lines)
    return {
        "base": base,
        "operations": ops,
        "n_base": len(lines),
        "n_base_words": n_base_words,
        "n_dpe_removed": sum(1 for a in state.audit if a[1] == "remove"),
        "n_replaced": sum(1 for a in state.audit if a[1] in ("reinsert", "add") and a[2] == "removed"),
        "n_sentences": n,
        "n_words": n_words,
        "reference": ref,
        **vs_reference(n, n_words, n_base_words, ref),
        "changes": {f"{op}:{action}": k for (op, action), k in sorted(actions.items())},
        "n_rewritten": len(state.text),
        "n_train": len(train),
        "n_dev": len(dev),
        "dev_fraction": split.dev_fraction,
        "seed": split.seed,
        "dpe_count": dict(sorted(present.items())),
        "dpe_rate": {c: _rate(present.get(c, 0), n) for c in cons},
        "dpe_rate_targeted": {c: _rate(targeted.get(c, 0), n) for c in cons},
        "dpe_count_targeted": {c: targeted.get(c, 0) for c in cons},
        "reinsert_config": {c: r for o in ops if o["op"] == "reinsert" for c, r in sorted(o["rates"].items())},
        "reinsert_shortfall": state.notes.get("shortfall", {}),
        "random_remove": state.notes.get("random_remove", []),
        "replace": state.notes.get("replace", {}),
        **({"placebo": state.notes["placebo"]} if state.notes.get("placebo") else {}),
        # an operation that changed nothing (NO MATCH remove, unchanged replace); only when there is one
        **({"warnings": state.notes["warnings"]} if state.notes.get("warnings") else {}),
    }


def legacy_audit(lines: list[str], cond: Condition) -> list[tuple]:
    """The audit rows of a filter/reinsert condition (step 0 the filter, step 1 the reinsert)."""
    rows = [(0, "remove", "removed", i, ",".join(cond.dpe_of[i]), "direct positive evidence (dpe.tsv)", lines[i], "")
            for i in sorted(cond.dpe_of)]
    for c, ids in sorted(cond.reinserted.items()):
        rows += [(1, "reinsert", "added", i, c, "targeted evidence put back at the configured rate", lines[i], "")
                 for i in ids]
    rows += [(1, "reinsert", "removed", i, "", "makes room for the reinsert (sentences matched)", lines[i], "")
             for i in cond.replaced]
    return rows


def write_audit(path: str, rows: list[tuple]) -> None:
    def clean(x) -> str:
        return str(x).replace("\t", " ").replace("\n", " ")

    with atomic_write(path) as fh:
        fh.write("\t".join(AUDIT_COLUMNS) + "\n")
        for r in sorted(rows, key=lambda r: (r[0], r[3], r[2])):
            fh.write("\t".join(clean(x) for x in r) + "\n")
