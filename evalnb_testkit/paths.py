"""Where the repository and the optional H2O reference data are, and the mark for tests that need them."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

__all__ = ["ROOT", "SHARED", "h2o_files", "needs_shared", "script_module"]

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "h2o"


def h2o_files() -> list[Path]:
    """Return the H2O reference labs, none when ``../shared`` is absent."""
    return sorted(SHARED.glob("*.json")) if SHARED.is_dir() else []


needs_shared = pytest.mark.skipif(
    not SHARED.is_dir(), reason=f"H2O reference data not found at {SHARED} (../shared absent)"
)


def script_module(name: str) -> ModuleType:
    """Import ``scripts/<name>.py`` (not a package: the scripts run as files) as a module."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
