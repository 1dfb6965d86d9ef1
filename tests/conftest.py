from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "h2o"
ROOT = Path(__file__).resolve().parents[1]


def h2o_files() -> list[Path]:
    return sorted(SHARED.glob("*.json")) if SHARED.is_dir() else []


needs_shared = pytest.mark.skipif(
    not SHARED.is_dir(), reason=f"H2O reference data not found at {SHARED} (../shared absent)"
)


@pytest.fixture
def h2o_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"H2O reference data not found at {SHARED} (../shared absent)")
    return SHARED
