"""Parquet shards of a table: whole or not at all, bounded in rows, never over another set."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl
import pytest

from evalnb.lab.errors import StoreError
from evalnb.lab.shards import write_shards

if TYPE_CHECKING:
    from pathlib import Path


def test_shards_hold_the_table_in_order_in_bounded_files(tmp_path: Path) -> None:
    frame = pl.DataFrame(
        {
            "i": range(2_500),
            "text": [f"row {i}" for i in range(2_500)],
            "ctx": [[f"c{i}"] for i in range(2_500)],
        }
    )
    files = write_shards(frame, tmp_path / "s", rows=1_000)
    assert [f.name for f in files] == [
        "part-00000.parquet",
        "part-00001.parquet",
        "part-00002.parquet",
    ]
    assert [pl.read_parquet(f).height for f in files] == [1_000, 1_000, 500]
    assert pl.read_parquet(tmp_path / "s" / "*.parquet").equals(frame)
    assert [p.name for p in tmp_path.iterdir()] == ["s"]  # no temporary folder left


def test_an_empty_table_keeps_its_schema_and_an_existing_folder_is_refused(tmp_path: Path) -> None:
    frame = pl.DataFrame(schema={"i": pl.Int64, "text": pl.String})
    (only,) = write_shards(frame, tmp_path / "s")
    assert pl.read_parquet(only).schema == frame.schema
    with pytest.raises(StoreError, match="exists already"):
        write_shards(frame, tmp_path / "s")
