"""Learning curves: accuracy per model x training step x paradigm, from checkpoint and final item scores."""

from __future__ import annotations

import pandas as pd


def curve_table(scores: pd.DataFrame) -> pd.DataFrame:
    """Accuracy per model x step x paradigm (checkpoints and the final model): learning curves."""
    # deferred: tables pulls scipy, which `povstim figures` (importing this module) does not need otherwise
    from povstim.analysis.tables import tables
    from povstim.analysis.tables import tidy

    rows = tidy.curve_items(scores)
    keys = ["suite", "arch", "condition", "size", "seed", "step", "category", "paradigm"]
    par = rows.groupby(keys, sort=False)["correct"].agg(n_correct="sum", n_total="size").reset_index()
    par["accuracy"] = par["n_correct"] / par["n_total"]
    if "chance" in rows.columns:  # other task kinds (tidy.with_chance): the figures draw each panel's own chance
        chance = rows.groupby(keys, sort=False)["chance"].agg(lambda x: x.mean(skipna=False)).rename("chance")
        par = par.merge(chance.reset_index(), on=keys, how="left")
    final_steps = rows[rows["final"]].groupby(["suite", "arch", "condition", "size", "seed"])["step"].max()
    par = par.merge(final_steps.rename("final_step").reset_index(), how="left",
                    on=["suite", "arch", "condition", "size", "seed"])
    par["final"] = par["step"] == par["final_step"]
    par = par.drop(columns=["final_step"])
    if "words_seen" in rows.columns:  # training.checkpoint_words: words seen at each step (the curves' x-axis)
        seen = rows.groupby(["suite", "arch", "condition", "size", "seed", "step"])["words_seen"].first()
        par = par.merge(seen.reset_index(), how="left", on=["suite", "arch", "condition", "size", "seed", "step"])
    par["level"] = "paradigm"
    out = tables.sort_table(par)
    order = ["suite", "arch", "condition", "size", "seed", "step", "final", "category", "paradigm",
             "n_correct", "n_total", "accuracy"] + (["chance"] if "chance" in par.columns else []) \
        + (["words_seen"] if "words_seen" in par.columns else [])
    out = out[order].sort_values(["suite", "arch", "condition", "size", "seed", "step", "category", "paradigm"],
                                 kind="mergesort", key=lambda s: s.map(tidy.size_words) if s.name == "size" else s)
    return out.reset_index(drop=True)
