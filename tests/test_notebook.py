"""The exploration notebook runs top to bottom on a results/ folder built by the real CLIs."""

from __future__ import annotations

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.slow


def test_explore_results_notebook_executes(repo_root, monkeypatch):
    from test_analysis_helpers import simulated_results

    results = simulated_results()
    monkeypatch.setenv("POVSTIM_RESULTS", str(results))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    path = repo_root / "notebooks" / "explore_results.ipynb"
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    outputs = "\n".join(
        o.get("text", "") + str(o.get("data", {}).get("text/plain", "")) + str(o.get("data", {}).get("text/markdown", ""))
        for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])
    )
    assert str(results) in outputs
    assert "table3_posh" in outputs and "Holm-corrected" in outputs
    assert "P(filtering effect > 0) = " in outputs
    assert "fig2_accuracy.png" in outputs
    assert not any(o.get("output_type") == "error" for c in nb.cells for o in c.get("outputs", []))
