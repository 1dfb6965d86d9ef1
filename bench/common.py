"""Timing helpers shared by the benchmarks: warm medians and cold whole-process runs."""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import polars as pl

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["ROOT", "cold_seconds", "warm_median", "write_pairs"]

ROOT = Path(__file__).resolve().parents[1]
T = TypeVar("T")


def warm_median(fn: Callable[[], T], runs: int) -> tuple[float, T]:
    """Median seconds of ``runs`` calls (the caller warms up first) and the last result."""
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result  # type: ignore[return-value]


def write_pairs(cands: list[str], refs: list[str]) -> Path:
    """Write the pairs to a Parquet file both sides of a cold run read."""
    path = Path(tempfile.mkdtemp(prefix="evalnb-bench-")) / "pairs.parquet"
    pl.DataFrame({"actual": cands, "expected": refs}).write_parquet(path)
    return path


def cold_seconds(code: str, data: Path, runs: int = 3) -> float:
    """Median wall seconds of a fresh interpreter running ``code`` (imports included).

    ``code`` reads the pairs from the path in ``DATA`` (a Parquet file of ``actual`` and
    ``expected``), as both sides of a cold comparison do.
    """
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", f"DATA = {str(data)!r}\n{code}"], check=True, cwd=ROOT
        )
        times.append(time.perf_counter() - start)
    return statistics.median(times)
