"""Where the repository and the optional H2O reference data are, and the mark for tests that need them."""

from __future__ import annotations

from pathlib import Path

import pytest

__all__ = ["ROOT", "SHARED", "h2o_files", "needs_shared"]

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "h2o"


def h2o_files() -> list[Path]:
    """Return the H2O reference labs, none when ``../shared`` is absent."""
    return sorted(SHARED.glob("*.json")) if SHARED.is_dir() else []


needs_shared = pytest.mark.skipif(
    not SHARED.is_dir(), reason=f"H2O reference data not found at {SHARED} (../shared absent)"
)
