"""Shared pytest fixtures.

``shared_data`` is the real public data beside the checkout (../shared/data);
tests that need it skip with a reason when it is absent (a fresh clone elsewhere).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("POVSTIM_SHARED_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data folder {SHARED_DATA} is absent (set POVSTIM_SHARED_DATA to point at it)")
    return SHARED_DATA
