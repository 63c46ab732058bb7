"""Export a povstim model and its item scores in the layout of the BabyLM evaluation pipeline (2025).

The pipeline (github.com/babylm/evaluation-pipeline-2025) loads a model with ``AutoModelFor{CausalLM,MaskedLM}
.from_pretrained(path, revision=...)``, where each intermediate checkpoint is a revision named by the words seen,
``chck_1M`` ... ``chck_10M`` ... (``eval_zero_shot_fast_all_revisions.sh``, ``collate_preds.py``). Locally a
revision is a folder; so the export writes

    OUT/models/{name}/                 the final model (revision main): config, weights, tokenizer
    OUT/models/{name}/chck_{budget}/   each word checkpoint (training.checkpoint_words), the same files

and, for each scored suite, the minimal-pair predictions as the pipeline's zero-shot task ``blimp`` writes them
(``sentence_zero_shot/run.py``, ``--save_predictions``):

    OUT/results/{name}/{revision}/zero_shot/{backend}/blimp/{dataset}/predictions.json
    OUT/results/{name}/{revision}/zero_shot/{backend}/blimp/{dataset}/best_temperature_report.txt

``predictions.json`` maps each UID (the paradigm) to ``{"predictions": [{"id": "{UID}_{k}", "pred": sentence}]}``,
k counting the UID's items in the suite's order and ``pred`` the sentence the model preferred; the pipeline counts
an item correct when ``pred`` is its ``sentence_good``. povstim's verdict is kept: a tie is not correct, so a tied
pair's ``pred`` is the bad sentence. The report gives each UID's accuracy (%) and their mean, at temperature 1
(povstim does not scale logits). ``backend`` is ``causal`` or ``mlm``, ``dataset`` the suite's name (rename with
``--dataset SUITE=NAME``: the pipeline's collation reads ``blimp_filtered`` for the final model and ``blimp_fast``
for checkpoints, with its own filtered item sets).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ..io import PovstimError, atomic_write
from .items import TRAINING_RECORDS, word_checkpoints

# files of a povstim folder that are training records, not the model: left out of the export
EXCLUDED = TRAINING_RECORDS | {"manifest.json"}


def revisions(model_dir: Path, checkpoints: bool = True) -> dict:
    """{row key: (revision name, folder)}: ("final", None) -> main, each word checkpoint's step -> chck_{budget}.

    BabyLM names checkpoints by words seen, so a model with step checkpoints only (no training.checkpoint_words)
    is an error when checkpoints are asked for."""
    if not (model_dir / "config.json").is_file():
        raise PovstimError(f"{model_dir} is not a model folder: it has no config.json")
    out = {"final": ("main", model_dir)}
    if not checkpoints:
        return out
    words = word_checkpoints(model_dir)
    if not words:
        raise PovstimError(f"{model_dir} has no word checkpoints (checkpoints/chck_*, training.checkpoint_words): "
                           "BabyLM names a model's checkpoints by the words seen; train with "
                           "training.checkpoint_words, or pass --no-checkpoints to export the final model only")
    for step, folder in words:
        out[int(step)] = (folder.name, folder)
    return out


def export_models(model_dir: Path, out: Path, revs: dict) -> list[Path]:
    """Copy the final model and each checkpoint's model files (training records left out) into ``out``, each
    folder built beside its place and renamed into it (nothing half-written)."""
    written = []
    for name, folder in revs.values():
        dest = out if name == "main" else out / name
        tmp = dest.parent / f".{dest.name}.tmp"
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        for f in sorted(folder.iterdir()):
            if f.is_file() and f.name not in EXCLUDED:
                shutil.copy2(f, tmp / f.name)
        if name == "main":  # the checkpoints already exported into `out` stay: move the files only
            dest.mkdir(parents=True, exist_ok=True)
            for f in tmp.iterdir():
                f.replace(dest / f.name)
            tmp.rmdir()
        else:
            if dest.exists():
                shutil.rmtree(dest)
            tmp.rename(dest)
        written.append(dest)
    return written


def predictions(rows) -> dict:
    """The pipeline's predictions.json of one revision's item rows of one suite (in the suite's order)."""
    out: dict = {}
    for paradigm, good, bad, correct in zip(rows["paradigm"], rows["good"], rows["bad"], rows["correct"]):
        preds = out.setdefault(str(paradigm), {"predictions": []})["predictions"]
        preds.append({"id": f"{paradigm}_{len(preds)}", "pred": good if bool(correct) else bad})
    return out


def report(rows) -> str:
    """best_temperature_report.txt: the accuracy (%) of each UID and their mean, at temperature 1."""
    acc = rows.groupby("paradigm", sort=True)["correct"].mean() * 100.0
    lines = ["TEMPERATURE: 1.00", "", "### UID ACCURACY"] + [f"{uid}: {a:.2f}" for uid, a in acc.items()]
    return "\n".join(lines + ["", "### AVERAGE ACCURACY", f"{acc.mean():.2f}", "", ""])


def build_predictions(scores, pairs: list[dict], revs: dict, name: str, backend: str, dataset: str) -> dict:
    """{folder under the results root: (predictions.json text, report text)} of every revision of one suite's item
    scores (``scores``: the score file's rows; ``pairs``: the suite's items, for the sentences). Built whole before
    anything is written, so a score file lacking a revision's rows writes nothing."""
    import pandas as pd

    if "task" in scores.columns and scores["task"].ne("minimal_pair").any():
        raise PovstimError(f"suite {dataset}: only minimal pairs export to the BabyLM pipeline's blimp format")
    items = pd.DataFrame([{"paradigm": str(p["paradigm"]), "item_id": str(p["item_id"]), "good": p["good"],
                           "bad": p["bad"], "order": k} for k, p in enumerate(pairs)])
    out = {}
    for key, (revision, _) in revs.items():
        sel = scores[scores["final"]] if key == "final" else scores[(scores["step"] == key) & ~scores["final"]]
        if sel.empty:
            raise PovstimError(f"the score file of suite {dataset} has no rows for revision {revision} (step "
                               f"{key}): score the model with checkpoints (scoring.checkpoints: true)")
        rows = sel[["paradigm", "item_id", "correct"]].astype({"paradigm": str, "item_id": str}).merge(
            items, on=["paradigm", "item_id"], how="inner", validate="one_to_one").sort_values("order")
        if len(rows) != len(sel):
            raise PovstimError(f"suite {dataset}: {len(sel) - len(rows)} scored item(s) are not in the suite "
                               "given (another suite's scores?)")
        folder = Path(name) / revision / "zero_shot" / backend / "blimp" / dataset
        out[folder] = (json.dumps(predictions(rows), ensure_ascii=False), report(rows))
    return out


def write_predictions(built: dict, root: Path) -> None:
    for folder, (preds, text) in built.items():
        with atomic_write(root / folder / "predictions.json") as f:
            f.write(preds)
        with atomic_write(root / folder / "best_temperature_report.txt") as f:
            f.write(text)
