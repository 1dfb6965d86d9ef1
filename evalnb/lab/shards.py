"""Parquet shards: a table cut into files of a bounded number of rows, written whole or not at all.

The Ray engine hands its workers the rows to score as shards: each worker reads Arrow
batches straight from the files, never Python rows through the driver.
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from evalnb.lab.errors import StoreError

if TYPE_CHECKING:
    import polars as pl

__all__ = ["SHARD_ROWS", "write_shards"]

SHARD_ROWS = 100_000
"""Rows per shard by default: files of a few MB, enough of them to spread over workers."""


def write_shards(frame: pl.DataFrame, folder: str | Path, *, rows: int = SHARD_ROWS) -> list[Path]:
    """Write ``frame`` to ``folder`` as ``part-00000.parquet``, ... of at most ``rows`` rows each.

    The files are written into a temporary folder beside ``folder`` and renamed into place
    in one step, so a reader sees all the shards or none (a killed writer leaves no half
    set). ``folder`` must not exist yet.

    Returns
    -------
    list of Path
        The shard files, in row order (an empty frame gives one empty shard, so its schema
        is still there to read).

    Raises
    ------
    StoreError
        When ``folder`` exists already, or a file cannot be written (naming it).
    """
    final = Path(folder)
    if final.exists():
        msg = f"{final}: shard folder exists already; expected a new folder, pass another path"
        raise StoreError(msg)
    if rows < 1:
        msg = f"rows per shard must be at least 1, got {rows}"
        raise ValueError(msg)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.with_name(f".{final.name}.{uuid.uuid4().hex[:8]}.tmp")
    tmp.mkdir()
    try:
        starts = range(0, max(frame.height, 1), rows)
        for i, start in enumerate(starts):
            frame.slice(start, rows).write_parquet(tmp / f"part-{i:05d}.parquet", statistics=True)
        tmp.rename(final)
    except OSError as exc:
        msg = f"{final}: could not write the Parquet shards: {exc}"
        raise StoreError(msg) from exc
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return sorted(final.glob("part-*.parquet"))
