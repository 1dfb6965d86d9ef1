"""One DuckDB file holds a whole lab; every write is a single transaction."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import polars as pl

from evalnb.lab.errors import StoreError
from evalnb.lab.schema import SCHEMAS, TABLES, conform

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

__all__ = ["append_rows", "read_tables", "write_tables"]

# Bumped whenever a table's columns change; a store of another version is refused with a
# message instead of being misread.
SCHEMA_VERSION = 2
_META = "evalnb_meta"


def _sql_type(dtype: pl.DataType) -> str:
    if dtype == pl.String():
        return "VARCHAR"
    if dtype == pl.List(pl.String()):
        return "VARCHAR[]"
    if dtype == pl.Float64():
        return "DOUBLE"
    if dtype == pl.Int64():
        return "BIGINT"
    if dtype == pl.Boolean():
        return "BOOLEAN"
    if isinstance(dtype, pl.Datetime):
        return "TIMESTAMPTZ"
    msg = f"no DuckDB type for Polars dtype {dtype!r}; extend `_sql_type`"
    raise TypeError(msg)


def _run(
    con: duckdb.DuckDBPyConnection, sql: str, params: list[object] | None = None
) -> list[tuple[object, ...]]:
    """Execute and fetch everything: DuckDB refuses new work while a result is unfetched."""
    return con.execute(sql, params).fetchall()


def _ddl(table: str) -> str:
    cols = ", ".join(f'"{n}" {_sql_type(d)}' for n, d in SCHEMAS[table].items())
    return f'CREATE TABLE IF NOT EXISTS "{table}" ({cols})'


@contextlib.contextmanager
def _transaction(path: str | Path, what: str) -> Iterator[duckdb.DuckDBPyConnection]:
    """One committed transaction on the store: everything inside lands, or nothing does."""
    con = _connect(path, read_only=False)
    try:
        _run(con, "BEGIN TRANSACTION")
        try:
            _ensure_schema(con, path)
            yield con
            _run(con, "COMMIT")
        except BaseException:
            _run(con, "ROLLBACK")
            raise
    except duckdb.Error as exc:
        msg = f"{path}: could not {what}: {exc}"
        raise StoreError(msg) from exc
    finally:
        con.close()


def write_tables(path: str | Path, tables: Mapping[str, pl.DataFrame]) -> None:
    """Replace the content of the store at ``path`` with ``tables``, atomically.

    Tables not named in ``tables`` are left as they are. Either every table lands or, on any
    error, none does: the store keeps its previous content.

    Raises
    ------
    StoreError
        If the file is not a DuckDB database, is locked, or is an evalnb store of another
        schema version.
    """
    frames = {name: conform(frame, name) for name, frame in tables.items()}
    with _transaction(path, "write the lab store") as con:
        for name, frame in frames.items():
            _run(con, f'DELETE FROM "{name}"')
            if frame.height:
                _insert(con, name, frame)


def append_rows(path: str | Path, table: str, rows: pl.DataFrame) -> None:
    """Append ``rows`` to ``table`` of the store at ``path`` in one committed transaction.

    For append-only tables (human labels): when this returns, the rows are in the file and
    survive the process being killed; if it raises, none of them is.
    """
    frame = conform(rows, table)
    with _transaction(path, f"append to {table!r}") as con:
        _insert(con, table, frame)


def _insert(con: duckdb.DuckDBPyConnection, name: str, frame: pl.DataFrame) -> None:
    arrow = frame.to_arrow()
    con.register("_evalnb_src", arrow)
    try:
        cols = ", ".join(f'"{c}"' for c in frame.columns)
        _run(con, f'INSERT INTO "{name}" ({cols}) SELECT {cols} FROM _evalnb_src')
    finally:
        con.unregister("_evalnb_src")


def read_tables(path: str | Path) -> dict[str, pl.DataFrame]:
    """Read every table of the store at ``path`` into Polars frames with the fixed schemas.

    Raises
    ------
    StoreError
        If ``path`` does not exist or is not an evalnb store of this schema version.
    """
    if not Path(path).is_file():
        msg = (
            f"{path}: no such lab store; expected a DuckDB file written by `Lab.save` or "
            "`evalnb import`. Import a source first: `evalnb import FILE --to LAB.duckdb`."
        )
        raise StoreError(msg)
    con = _connect(path, read_only=True)
    try:
        _check_version(con, path)
        return {name: conform(_select(con, name), name) for name in TABLES}
    except duckdb.Error as exc:
        msg = f"{path}: could not read the lab store: {exc}"
        raise StoreError(msg) from exc
    finally:
        con.close()


def _select(con: duckdb.DuckDBPyConnection, name: str) -> pl.DataFrame:
    # Through Arrow rather than `.pl()`: the same frame, about five times faster here.
    frame = pl.from_arrow(con.sql(f'SELECT * FROM "{name}"').arrow().read_all())
    assert isinstance(frame, pl.DataFrame)  # a table always converts to a frame
    return frame


def _connect(path: str | Path, *, read_only: bool) -> duckdb.DuckDBPyConnection:
    try:
        return duckdb.connect(str(path), read_only=read_only)
    except duckdb.Error as exc:
        msg = (
            f"{path}: cannot open as a DuckDB lab store ({exc}); expected a file written by "
            "evalnb, not open for writing in another process"
        )
        raise StoreError(msg) from exc


def _ensure_schema(con: duckdb.DuckDBPyConnection, path: str | Path) -> None:
    _run(con, f'CREATE TABLE IF NOT EXISTS "{_META}" (schema_version BIGINT)')
    row = next(iter(_run(con, f'SELECT schema_version FROM "{_META}"')), None)
    if row is None:
        _run(con, f'INSERT INTO "{_META}" VALUES (?)', [SCHEMA_VERSION])
    elif row[0] != SCHEMA_VERSION:
        _version_error(path, row[0])
    for name in TABLES:
        _run(con, _ddl(name))


def _check_version(con: duckdb.DuckDBPyConnection, path: str | Path) -> None:
    known = {r[0] for r in _run(con, "SELECT table_name FROM duckdb_tables()")}
    if _META not in known:
        msg = (
            f"{path}: this DuckDB file is not an evalnb lab store (no {_META!r} table); "
            "expected a file written by `Lab.save` or `evalnb import`"
        )
        raise StoreError(msg)
    row = next(iter(_run(con, f'SELECT schema_version FROM "{_META}"')), None)
    if row is None or row[0] != SCHEMA_VERSION:
        _version_error(path, None if row is None else row[0])


def _version_error(path: str | Path, found: object) -> None:
    msg = (
        f"{path}: lab store schema version {found!r}, expected {SCHEMA_VERSION}; "
        "open it with the evalnb version that wrote it and export it to JSON"
    )
    raise StoreError(msg)
