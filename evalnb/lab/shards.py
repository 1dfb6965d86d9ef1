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

__all__ = ["SHARD_ROWS", "ShardWriter", "write_shards"]

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
    writer = ShardWriter(folder, rows=rows)
    writer.write(frame, keep_empty=True)
    return writer.close()


class ShardWriter:
    """Write a table's shards a frame at a time, then publish the folder whole.

    For rows that never sit in memory together: ``evaluate`` on a lab kept on disk writes
    the rows to score a batch at a time, and the Ray engine reads them all in one run.
    """

    def __init__(self, folder: str | Path, *, rows: int = SHARD_ROWS) -> None:
        self.folder = Path(folder)
        if self.folder.exists():
            msg = f"{self.folder}: shard folder exists already; expected a new folder, pass another path"
            raise StoreError(msg)
        if rows < 1:
            msg = f"rows per shard must be at least 1, got {rows}"
            raise ValueError(msg)
        self.rows, self.written = rows, 0
        self._tmp = self.folder.with_name(f".{self.folder.name}.{uuid.uuid4().hex[:8]}.tmp")
        self._files = 0

    def write(self, frame: pl.DataFrame, *, keep_empty: bool = False) -> None:
        """Add ``frame``'s rows as the next shard files.

        An empty frame adds none, unless ``keep_empty`` (one empty file keeps its schema).
        """
        self._tmp.mkdir(parents=True, exist_ok=True)
        starts = range(0, max(frame.height, 1 if keep_empty else 0), self.rows)
        try:
            for start in starts:
                target = self._tmp / f"part-{self._files:05d}.parquet"
                frame.slice(start, self.rows).write_parquet(target, statistics=True)
                self._files += 1
        except OSError as exc:
            self.discard()
            msg = f"{self.folder}: could not write the Parquet shards: {exc}"
            raise StoreError(msg) from exc
        self.written += frame.height

    def close(self) -> list[Path]:
        """Publish the folder; return its shard files in row order."""
        try:
            self._tmp.mkdir(parents=True, exist_ok=True)
            self._tmp.rename(self.folder)
        except OSError as exc:
            self.discard()
            msg = f"{self.folder}: could not write the Parquet shards: {exc}"
            raise StoreError(msg) from exc
        return sorted(self.folder.glob("part-*.parquet"))

    def discard(self) -> None:
        """Delete what was written."""
        shutil.rmtree(self._tmp, ignore_errors=True)
