"""``results/figures``: an index of the figures of the experiment that was run last.

Each experiment writes its figures to ``results/<experiment>/figures``. The
README's target ``results/figures`` is a folder of relative links to them (plus
``EXPERIMENT``, naming the experiment), so the usual command keeps working
whichever config was run, while every experiment's own results stay complete
under its own folder.
"""

from __future__ import annotations

import html
import os
from pathlib import Path

from ..io import PovstimError, atomic_dir


def write_index(figures_dir: str | Path, experiment: str, out_dir: str | Path) -> list[str]:
    src, out = Path(figures_dir), Path(out_dir)
    if not src.is_dir():
        raise PovstimError(f"{src}: no figures folder (run the figures stage first)")
    files = sorted(p.name for p in src.iterdir() if p.is_file() and not p.name.startswith("."))
    with atomic_dir(out) as tmp:
        for name in files:
            os.symlink(os.path.relpath(src / name, out), tmp / name)
        (tmp / "EXPERIMENT").write_text(f"{experiment}\n")
        items = "".join(f'<li><a href="{html.escape(n)}">{html.escape(n)}</a></li>' for n in files)
        (tmp / "index.html").write_text(
            f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(experiment)}</title></head>"
            f"<body><h3>Figures of experiment {html.escape(experiment)}</h3><p>Links into "
            f"{html.escape(str(src))}/ (the experiment's own folder).</p><ul>{items}</ul></body></html>\n"
        )
    return files
