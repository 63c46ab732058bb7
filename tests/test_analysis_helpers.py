"""Shared simulated results for the analysis, figures and notebook tests.

``simulated_results()`` writes item-score parquet files simulated from known coefficients
(tests/helpers/simulate.py) and runs the real ``povstim analyze`` and ``povstim figures`` on
them once per test process, so the expensive Bambi fit is shared by every test that only reads
its outputs.
"""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import tempfile
from pathlib import Path

from helpers.simulate import CONDITIONS, simulate_scores, write_score_files
from povstim.cli import main

# Small enough to fit in well under a minute on 2 cores; the same values go into the
# Snakemake integration test's config so its outputs can be compared byte for byte.
PARAMS = {
    "formula": "(size + category) * filtered + source + (1|seed) + (1|phenomenon)",
    "family": "binomial",
    "correction": "holm",
    "draws": 150,
    "tune": 200,
    "chains": 2,
    "target_accept": 0.9,
    "seed": 1,
    # two simulated seeds: keep (1|seed) (the default, 3, drops a group term with fewer groups)
    "min_groups": 2,
}


def simulate_into(root: Path, items: int = 60, rng_seed: int = 0) -> list[Path]:
    df = simulate_scores(items=items, rng_seed=rng_seed, steps=(60, 120, 240))
    return write_score_files(df, root)


@functools.lru_cache(maxsize=None)
def simulated_results() -> Path:
    """A results/ folder with scores/, analysis/ and figures/ built by the real CLIs."""
    base = Path(tempfile.mkdtemp(prefix="povstim-analysis-"))
    atexit.register(shutil.rmtree, base, True)
    results = base / "results"
    paths = simulate_into(results)
    rc = main(["analyze", "--scores", *map(str, paths), "--conditions", json.dumps(CONDITIONS),
               "--params", json.dumps(PARAMS), "--out-dir", str(results / "analysis"), "--cores", "2"])
    assert rc == 0
    rc = main(["figures", "--analysis-dir", str(results / "analysis"), "--out-dir", str(results / "figures")])
    assert rc == 0
    return results


def test_simulated_files_follow_the_score_schema(tmp_path):
    import pandas as pd

    from povstim.analysis.tables.tidy import SCORE_COLUMNS

    paths = simulate_into(tmp_path, items=5)
    assert len(paths) == 3 * 2 * 2  # conditions x sizes x seeds
    df = pd.read_parquet(paths[0])
    assert list(df.columns) == SCORE_COLUMNS
    assert df["final"].sum() == 5 * 9  # items x paradigms at the last step only
    # correct is exactly "good scored higher", as the scorer defines it.
    assert ((df["logp_good"] > df["logp_bad"]) == df["correct"]).all()
