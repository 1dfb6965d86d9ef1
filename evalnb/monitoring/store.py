"""The monitor's DuckDB file: requests, scores, checkpoints, samples, labels, alerts.

``quarantine`` keeps what a source held that could not be read — a line torn by a killed
collector, a file that is not JSON lines, a line past the size limit, a span that came
after its trace was scored — with its file, line and reason, committed with the checkpoint
that moved past it: reading goes on, and nothing is dropped unsaid.

Every write is one transaction: a batch of new requests, their scores, the spans still
waiting for their root and the source file's new checkpoint commit together, so a process
killed at any point leaves the file as it was before the batch or after it — never with
requests whose scores are missing, nor with a checkpoint past requests it does not hold. A
trace id is the table's key: seen twice, it is kept (and scored) once.
"""

from __future__ import annotations

import datetime as dt
from contextlib import contextmanager
from typing import TYPE_CHECKING, TypeVar, cast

import polars as pl

from evalnb.lab.connection import connect, retrying, run

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    import duckdb

__all__ = ["SCHEMA_SQL", "MonitorStore", "frame_of", "registered", "utc_now"]

T = TypeVar("T")

SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE IF NOT EXISTS bundles (
    bundle_hash VARCHAR PRIMARY KEY, bundle VARCHAR, since TIMESTAMPTZ);
CREATE TABLE IF NOT EXISTS checkpoints (
    source VARCHAR PRIMARY KEY, path VARCHAR, "offset" BIGINT, tail_hash VARCHAR,
    lines BIGINT, updated_at TIMESTAMPTZ);
CREATE TABLE IF NOT EXISTS pending (trace_id VARCHAR, span VARCHAR, source VARCHAR);
CREATE TABLE IF NOT EXISTS traces (
    trace_id VARCHAR PRIMARY KEY, "at" TIMESTAMPTZ, model VARCHAR, prompt VARCHAR,
    actual VARCHAR, context VARCHAR[], expected VARCHAR[], condition VARCHAR, error VARCHAR,
    source VARCHAR,
    bundle_hash VARCHAR, ingested_at TIMESTAMPTZ);
CREATE TABLE IF NOT EXISTS scores (
    trace_id VARCHAR, evaluator VARCHAR, metric VARCHAR, value DOUBLE, passed BOOLEAN,
    detail VARCHAR, bundle_hash VARCHAR);
CREATE TABLE IF NOT EXISTS samples (
    sample_id VARCHAR, every VARCHAR, window_start TIMESTAMPTZ, trace_id VARCHAR,
    strategy VARCHAR, evaluator VARCHAR, metric VARCHAR, probability DOUBLE,
    window_traces BIGINT, created_at TIMESTAMPTZ);
CREATE TABLE IF NOT EXISTS labels (
    label_id VARCHAR PRIMARY KEY, trace_id VARCHAR, evaluator VARCHAR, metric VARCHAR,
    verdict VARCHAR, reviewer VARCHAR, created_at TIMESTAMPTZ);
CREATE TABLE IF NOT EXISTS alerts (
    alert_id VARCHAR PRIMARY KEY, every VARCHAR, window_start TIMESTAMPTZ, evaluator VARCHAR,
    metric VARCHAR, kind VARCHAR, value DOUBLE, level DOUBLE, detail VARCHAR,
    created_at TIMESTAMPTZ, sent_at TIMESTAMPTZ);
CREATE TABLE IF NOT EXISTS embeddings (trace_id VARCHAR PRIMARY KEY, vector FLOAT[]);
CREATE TABLE IF NOT EXISTS quarantine (
    source VARCHAR, path VARCHAR, line BIGINT, reason VARCHAR, preview VARCHAR,
    seen_at TIMESTAMPTZ, PRIMARY KEY (source, line, reason));
ALTER TABLE alerts ADD COLUMN IF NOT EXISTS last_error VARCHAR;
"""


def utc_now() -> dt.datetime:
    """Return the time now, in UTC (what every row of the store records)."""
    return dt.datetime.now(dt.UTC)


@contextmanager
def registered(con: duckdb.DuckDBPyConnection, frames: dict[str, pl.DataFrame]) -> Iterator[None]:
    """Make the frames queryable by name on ``con`` for the block, and only for it."""
    for name, frame in frames.items():
        con.register(name, frame)
    try:
        yield
    finally:
        for name in frames:
            con.unregister(name)


def frame_of(
    con: duckdb.DuckDBPyConnection, sql: str, params: list[object] | None = None
) -> pl.DataFrame:
    """Return the query's rows as a Polars frame (through Arrow: the fastest way out of DuckDB)."""
    table = con.sql(sql, params=params).to_arrow_table()
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)  # a table gives a frame
    return frame


class MonitorStore:
    """The monitor's file; each method one short connection (another process may wait)."""

    def __init__(self, path: Path) -> None:
        self.path = path

        def create() -> None:
            con = connect(path, read_only=False)
            try:
                con.execute(SCHEMA_SQL)
            finally:
                con.close()

        retrying(create)

    def _open(self) -> duckdb.DuckDBPyConnection:
        con = connect(self.path, read_only=False)
        # Windows are cut in UTC whatever the machine's zone.
        con.execute("SET TimeZone = 'UTC'")
        return con

    def with_connection(self, body: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        """Run ``body`` on a connection of its own (reads; writes go through :meth:`write`)."""

        def attempt() -> T:
            con = self._open()
            try:
                return body(con)
            finally:
                con.close()

        return retrying(attempt)

    def read(self, sql: str, params: list[object] | None = None) -> pl.DataFrame:
        """Run a query and return its rows as a frame."""
        return self.with_connection(lambda con: frame_of(con, sql, params))

    def read_with(self, sql: str, **frames: pl.DataFrame) -> pl.DataFrame:
        """Run a query that joins the given frames, each registered under its keyword."""

        def body(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
            with registered(con, frames):
                return frame_of(con, sql)

        return self.with_connection(body)

    def ids(self, ids: list[str]) -> pl.DataFrame:
        """Return a one-column frame of trace ids, to join with (:meth:`read_with`)."""
        return pl.DataFrame({"trace_id": ids}, schema={"trace_id": pl.String()})

    def rows(self, sql: str, params: list[object] | None = None) -> list[tuple[object, ...]]:
        """Run a query and return its rows as tuples."""
        return self.with_connection(lambda con: run(con, sql, params))

    def write(self, body: Callable[[duckdb.DuckDBPyConnection], None]) -> None:
        """Run ``body`` in one transaction: all of its writes commit, or none."""

        def attempt() -> None:
            con = self._open()
            try:
                con.execute("BEGIN TRANSACTION")
                try:
                    body(con)
                except BaseException:
                    con.execute("ROLLBACK")
                    raise
                con.execute("COMMIT")
            finally:
                con.close()

        retrying(attempt)

    def insert_new(self, table: str, frame: pl.DataFrame, key: str | None) -> int:
        """Insert the rows of ``frame`` whose ``key`` the table lacks (one transaction); count them.

        With ``key`` None, every row is inserted.
        """
        counted: list[int] = []

        def body(con: duckdb.DuckDBPyConnection) -> None:
            with registered(con, {"new_rows": frame}):
                before = cast("int", run(con, f"SELECT count(*) FROM {table}")[0][0])
                new = f"WHERE {key} NOT IN (SELECT {key} FROM {table})" if key else ""
                con.execute(f"INSERT INTO {table} SELECT * FROM new_rows {new}")
                counted.append(
                    cast("int", run(con, f"SELECT count(*) FROM {table}")[0][0]) - before
                )

        self.write(body)
        return counted[0]

    def known(self, con: duckdb.DuckDBPyConnection, table: str, ids: list[str]) -> set[str]:
        """Which of ``ids`` the table holds (by ``trace_id``)."""
        if not ids:
            return set()
        frame = pl.DataFrame({"trace_id": ids}, schema={"trace_id": pl.String()})
        con.register("wanted_ids", frame)
        try:
            found = run(
                con,
                f"SELECT DISTINCT t.trace_id FROM {table} t JOIN wanted_ids w USING (trace_id)",
            )
        finally:
            con.unregister("wanted_ids")
        return {str(r[0]) for r in found}
