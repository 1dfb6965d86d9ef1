"""One DuckDB file holds a whole lab; every write is a single transaction."""

from __future__ import annotations

import contextlib
import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import duckdb
import polars as pl

from evalnb.lab.connection import connect, reason, retrying, run
from evalnb.lab.errors import StoreConflict, StoreError
from evalnb.lab.parts import (
    Part,
    PartChange,
    apply_changes,
    ensure_manifest,
    parts_dir,
    read_manifest,
    remove_parts,
    unshard,
)
from evalnb.lab.schema import SCHEMAS, TABLES, conform, empty, sql_type

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence

T = TypeVar("T")

__all__ = [
    "APPEND_ONLY",
    "KEYED",
    "MERGED",
    "Snapshot",
    "append_rows",
    "commit",
    "is_store",
    "read_store",
    "seal",
]

# Bumped whenever a table's columns change; a store of another version is refused with a
# message instead of being misread.
SCHEMA_VERSION = 2
PARTS_SCHEMA_VERSION = 3
"""A store keeping a table as Parquet parts: an evalnb that cannot read them refuses it."""
_READABLE = (SCHEMA_VERSION, PARTS_SCHEMA_VERSION)
_META = "evalnb_meta"
# One row per table: how many times it was replaced. A writer states the version it read,
# so a stale copy is refused instead of overwriting another process's work.
_VERSIONS = "evalnb_versions"

APPEND_ONLY: dict[str, tuple[str, ...] | None] = {
    "labels": ("label_id",),
    "thresholds": None,
    "curation": ("curation_id",),
    "workflow_events": ("event_id",),
}
"""Tables whose rows are never updated or deleted, with the key naming a row (None: all columns).

Writing one inserts only the rows the store lacks, so no copy can remove another's rows."""
KEYED: dict[str, tuple[str, ...]] = {"info": ("key",), "metrics": ("evaluator", "metric")}
"""Keyed tables: a writer writes only the keys it changed since it last synchronised.

``metrics`` is one: two processes scoring different evaluators of a lab each write their
own evaluators' metric specs, and neither undoes the other's."""
MERGED = frozenset(APPEND_ONLY) | frozenset(KEYED)


def _ddl(table: str) -> str:
    cols = ", ".join(f'"{n}" {sql_type(d)}' for n, d in SCHEMAS[table].items())
    return f'CREATE TABLE IF NOT EXISTS "{table}" ({cols})'


@contextlib.contextmanager
def _transaction(path: str | Path, what: str) -> Iterator[duckdb.DuckDBPyConnection]:
    """One committed transaction on the store: everything inside lands, or nothing does."""
    con = connect(path, read_only=False)
    try:
        run(con, "BEGIN TRANSACTION")
        try:
            _ensure_schema(con, path)
            yield con
            run(con, "COMMIT")
        except BaseException:
            # A failed COMMIT (a full disk) has already ended the transaction: its own error
            # is the one to report, not ROLLBACK's "no transaction is active".
            with contextlib.suppress(duckdb.Error):
                run(con, "ROLLBACK")
            raise
    except duckdb.Error as exc:
        msg = f"{path}: could not {what}: {reason(exc)}"
        raise StoreError(msg) from exc
    finally:
        con.close()


@dataclass(frozen=True)
class Snapshot:
    """Tables read from (or written to) a store, with the version of each one there."""

    tables: dict[str, pl.DataFrame]
    versions: dict[str, int]
    parts: dict[str, tuple[Part, ...]] = dataclasses.field(default_factory=dict)
    """The tables kept as Parquet parts, with their parts (their frames are not read)."""


def commit(
    path: str | Path,
    tables: Mapping[str, pl.DataFrame],
    *,
    base: Mapping[str, int] | None,
    previous: Mapping[str, pl.DataFrame] | None = None,
    parts: Mapping[str, PartChange] | None = None,
    root: Path | None = None,
) -> Snapshot:
    """Write ``tables`` to the store at ``path`` in one transaction, losing no one's rows.

    Parameters
    ----------
    path
        The DuckDB store (created when missing).
    tables
        The tables to write; others are left as they are.
    base
        The versions the writer last read or wrote (``Snapshot.versions``), or None to
        replace the named tables whole (saving a lab to a store it did not come from).
    previous
        The writer's copy of each keyed table (``info``, ``metrics``) when it last synchronised: only
        keys added, changed or removed since then are written.
    parts
        Parquet parts to add to (and drop from) tables kept as parts, already written under
        the store's parts folder. Dropped parts' files are deleted once the swap is
        committed; on any error the added ones are, and the list stays as it was.
    root
        The parts folder (default: beside ``path``; another one while a new store is
        written under a temporary name).

    Returns
    -------
    Snapshot
        The store's new version of every table written, and the content now in the store
        of the append-only and keyed tables written (they may hold other writers' rows).

    Raises
    ------
    StoreConflict
        When a replaced-whole table changed in the store since ``base``; nothing is written.
    StoreError
        When the store cannot be opened, is locked past the wait, or the write fails.
    """
    frames = {name: conform(frame, name) for name, frame in tables.items()}
    changes = dict(parts or {})
    folder = root or parts_dir(path)
    gone: list[Part] = []
    try:
        snapshot = retrying(
            _in_transaction(
                path,
                "write the lab store",
                lambda con: _commit(con, path, frames, base, previous, (changes, folder, gone)),
            )
        )
    except BaseException:
        remove_parts(folder, [p for c in changes.values() for p in c.add])
        raise
    remove_parts(folder, gone)
    _remember_own_writes(path, snapshot.versions)
    return snapshot


# The versions of each store's tables that this process wrote, whatever Lab object wrote
# them: a stale copy refused because of one of them was outdated by a sibling object here
# (the lab returned by ``apply_curation()`` or ``evaluate()``), not by another process, and
# the error must say so. Keyed by process id too, as a forked child inherits the dict.
_OWN_WRITES: dict[tuple[int, str], dict[str, set[int]]] = {}


def _store_key(path: str | Path) -> tuple[int, str]:
    return os.getpid(), str(Path(path).resolve())


def _remember_own_writes(path: str | Path, versions: Mapping[str, int]) -> None:
    # Merged tables (labels, info ...) come back at the store's version, which may be another
    # process's; they never conflict, so recording them changes no message.
    written = _OWN_WRITES.setdefault(_store_key(path), {})
    for name, version in versions.items():
        written.setdefault(name, set()).add(version)


def _commit(
    con: duckdb.DuckDBPyConnection,
    path: str | Path,
    frames: Mapping[str, pl.DataFrame],
    base: Mapping[str, int] | None,
    previous: Mapping[str, pl.DataFrame] | None,
    parted: tuple[Mapping[str, PartChange], Path, list[Part]],
) -> Snapshot:
    changes, root, gone = parted
    merged: dict[str, pl.DataFrame] = {}
    stored = _versions(con)
    if base is not None:
        stale = [n for n in frames if n not in MERGED and stored.get(n, 0) != base.get(n, 0)]
        if stale:
            _conflict(path, stale, stored, base)
    gone.clear()  # a retried attempt starts over
    for name in frames:  # a table written as rows stops being kept as parts
        dropped = unshard(con, name)
        if dropped:
            gone.extend(dropped)
            run(con, _ddl(name))
    for name, frame in frames.items():
        if base is None:
            run(con, f'DELETE FROM "{name}"')
            _insert(con, name, frame)
        elif name in APPEND_ONLY:
            _insert(con, name, _missing(con, name, frame))
        elif name in KEYED:
            _upsert(con, name, frame, (previous or {}).get(name))
        else:
            run(con, f'DELETE FROM "{name}"')
            _insert(con, name, frame)
        if base is None or name not in MERGED:
            stored[name] = stored.get(name, 0) + 1
            run(con, f'INSERT OR REPLACE INTO "{_VERSIONS}" VALUES (?, ?)', [name, stored[name]])
        if name in MERGED:
            merged[name] = conform(_select(con, name), name)
    kept, left = apply_changes(con, path, changes, root) if changes else (read_manifest(con), [])
    gone.extend(left)
    for name in changes:  # a copy of the table read before this change is now stale
        stored[name] = stored.get(name, 0) + 1
        run(con, f'INSERT OR REPLACE INTO "{_VERSIONS}" VALUES (?, ?)', [name, stored[name]])
    if changes:
        run(con, f'UPDATE "{_META}" SET schema_version = ?', [PARTS_SCHEMA_VERSION])
    return Snapshot(merged, {n: stored.get(n, 0) for n in [*frames, *changes]}, kept)


def _conflict(
    path: str | Path, stale: list[str], stored: Mapping[str, int], base: Mapping[str, int]
) -> None:
    changes = ", ".join(
        f"{n!r} (read at version {base.get(n, 0)}, now {stored.get(n, 0)})" for n in stale
    )
    own = _OWN_WRITES.get(_store_key(path), {})
    if all(stored.get(n, 0) in own.get(n, set()) for n in stale):
        msg = (
            f"{path}: this Lab object is older than its store: {changes} was changed since "
            "it was read, by this process through another Lab object (a call such as "
            "apply_curation(), evaluate(), run_suite() or set_topics() returns a new lab and "
            "leaves its argument as it was). Nothing was written. Use the lab that call "
            "returned, or reopen the store with evalnb.open(path)."
        )
        raise StoreConflict(msg)
    msg = (
        f"{path}: another process changed {changes} since this lab read them; writing this "
        "copy would undo that work, so nothing was written. Reopen the lab "
        "(evalnb.open(path)) and redo the change, or save it to another file."
    )
    raise StoreConflict(msg)


def _missing(con: duckdb.DuckDBPyConnection, name: str, frame: pl.DataFrame) -> pl.DataFrame:
    """Rows of ``frame`` the store's append-only table does not hold yet."""
    if frame.is_empty():
        return frame
    keys = list(APPEND_ONLY[name] or frame.columns)
    have = conform(_select(con, name), name).select(keys)
    return frame.join(have, on=keys, how="anti", nulls_equal=True)


def _upsert(
    con: duckdb.DuckDBPyConnection, name: str, frame: pl.DataFrame, previous: pl.DataFrame | None
) -> None:
    """Write the keys of a keyed table that changed since ``previous``; leave the rest."""
    keys = list(KEYED[name])
    before = conform(previous, name) if previous is not None else frame.clear()
    changed = frame.join(before, on=frame.columns, how="anti", nulls_equal=True)
    removed = before.join(frame.select(keys), on=keys, how="anti", nulls_equal=True)
    where = " AND ".join(f'"{k}" IS NOT DISTINCT FROM ?' for k in keys)
    for row in pl.concat([changed.select(keys), removed.select(keys)]).unique().iter_rows():
        run(con, f'DELETE FROM "{name}" WHERE {where}', list(row))
    _insert(con, name, changed)


def seal(path: str | Path, tables: Mapping[str, pl.DataFrame], *, shown_as: str | Path) -> None:
    """Move a freshly written store's WAL into its file, then check that it reads back whole.

    Before a new store is renamed into place: DuckDB checkpoints on close and a failed
    checkpoint there is silent, so on a nearly full disk the committed rows stayed in the
    ``.wal`` beside an empty file, and the rename moved the empty file into place (and the
    WAL was deleted). Here the checkpoint is explicit (its failure is an error), the WAL must
    be gone after it, and the file, reopened, must hold every table with its row count.

    Raises
    ------
    StoreError
        If the checkpoint fails (a full disk says "no space left"), the WAL stays, or the
        file reads back other than written; the message names ``shown_as``.
    """
    try:
        con = connect(path, read_only=False)
        try:
            run(con, "CHECKPOINT")
        finally:
            con.close()
    except (duckdb.Error, StoreError) as exc:
        why = reason(exc) if isinstance(exc, duckdb.Error) else str(exc)
        why = why.replace(f"{path}: ", "").replace(str(path), str(shown_as))
        msg = f"{shown_as}: could not write the lab store: {why}; nothing was written"
        raise StoreError(msg) from exc
    wal = Path(f"{path}.wal")
    if wal.exists() and wal.stat().st_size > 0:
        msg = (
            f"{shown_as}: could not write the lab store: DuckDB's checkpoint left "
            f"{wal.stat().st_size} bytes in its write-ahead log (a full disk?); nothing was "
            "written. Free some space and retry."
        )
        raise StoreError(msg)
    try:
        con = connect(path, read_only=True)
        try:
            _check_version(con, shown_as)
            known = {r[0] for r in run(con, "SELECT table_name FROM duckdb_tables()")}
            for name, frame in tables.items():
                count = run(con, f'SELECT count(*) FROM "{name}"')[0][0] if name in known else 0
                if count != frame.height:
                    msg = (
                        f"{shown_as}: the lab store read back {count} rows of {name!r} where "
                        f"{frame.height} were written; nothing was written. Retry; if it "
                        "persists, check the disk."
                    )
                    raise StoreError(msg)
        finally:
            con.close()
    except duckdb.Error as exc:
        msg = (
            f"{shown_as}: the new lab store does not read back ({reason(exc)}); nothing was written"
        )
        raise StoreError(msg) from exc


def append_rows(path: str | Path, table: str, rows: pl.DataFrame) -> pl.DataFrame:
    """Append ``rows`` to an append-only table in one committed transaction; return the table.

    When this returns, the rows are in the file and survive the process being killed; if
    it raises, none of them is. The table comes back whole, with what other processes
    appended, read in the same transaction.
    """
    frame = conform(rows, table)

    def body(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
        # Closing the connection would checkpoint (rewrite the file from the WAL); a process
        # killed then can damage the file under DuckDB 2.0. A label's commit is durable in
        # the WAL already, so the checkpoint is left to the bulk writes.
        run(con, "PRAGMA disable_checkpoint_on_shutdown")
        _insert(con, table, frame)
        return conform(_select(con, table), table)

    return retrying(_in_transaction(path, f"append to {table!r}", body))


def _in_transaction(
    path: str | Path, what: str, body: Callable[[duckdb.DuckDBPyConnection], T]
) -> Callable[[], T]:
    def attempt() -> T:
        with _transaction(path, what) as con:
            return body(con)

    return attempt


def _insert(con: duckdb.DuckDBPyConnection, name: str, frame: pl.DataFrame) -> None:
    if frame.is_empty():
        return
    arrow = frame.to_arrow()
    con.register("_evalnb_src", arrow)
    try:
        cols = ", ".join(f'"{c}"' for c in frame.columns)
        run(con, f'INSERT INTO "{name}" ({cols}) SELECT {cols} FROM _evalnb_src')
    finally:
        con.unregister("_evalnb_src")


def read_store(path: str | Path, tables: Sequence[str] = TABLES) -> Snapshot:
    """Read the tables of the store at ``path`` (all by default), with their versions, in one snapshot.

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
    if not is_store(path):
        msg = (
            f"{path} is not an evalnb lab store (a DuckDB file written by `Lab.save` or "
            "`evalnb import`). To read a source file, use `evalnb.load(path)` or "
            f"`evalnb import {path} --to LAB.duckdb`."
        )
        raise StoreError(msg)
    return retrying(lambda: _read(path, tables))


def is_store(path: str | Path) -> bool:
    """Whether ``path`` is a file that starts like a DuckDB database (magic bytes at offset 8)."""
    if not Path(path).is_file():
        return False
    with Path(path).open("rb") as head:
        return head.read(12)[8:12] == b"DUCK"


def _read(path: str | Path, names: Sequence[str]) -> Snapshot:
    con = connect(path, read_only=True)
    try:
        _check_version(con, path)
        versions = _versions(con)
        parts = read_manifest(con)
        # A store written before a table existed (chunks came later) reads it as empty.
        known = {r[0] for r in run(con, "SELECT table_name FROM duckdb_tables()")}
        tables = {
            name: conform(_select(con, name), name) if name in known else empty(name)
            for name in names
            if name not in parts
        }
        return Snapshot(tables, {n: versions.get(n, 0) for n in names}, parts)
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


def _ensure_schema(con: duckdb.DuckDBPyConnection, path: str | Path) -> None:
    run(con, f'CREATE TABLE IF NOT EXISTS "{_META}" (schema_version BIGINT)')
    row = next(iter(run(con, f'SELECT schema_version FROM "{_META}"')), None)
    if row is None:
        run(con, f'INSERT INTO "{_META}" VALUES (?)', [SCHEMA_VERSION])
    elif row[0] not in _READABLE:
        _version_error(path, row[0])
    run(con, f'CREATE TABLE IF NOT EXISTS "{_VERSIONS}" (name VARCHAR PRIMARY KEY, version BIGINT)')
    _add_new_columns(con)
    for name in TABLES:
        run(con, _ddl(name))  # a table kept as parts is a view already: left alone
    ensure_manifest(con)


def _add_new_columns(con: duckdb.DuckDBPyConnection) -> None:
    """Give tables written by an older evalnb the columns added since (null in old rows).

    Reading conforms such a table already; writing must not fail on a column it lacks.
    Views over Parquet parts are left alone: reading conforms them.
    """
    have: dict[str, set[str]] = {}
    query = (
        "SELECT c.table_name, c.column_name FROM duckdb_columns() c "
        "JOIN duckdb_tables() t USING (database_name, schema_name, table_name)"
    )
    for table, column in run(con, query):
        have.setdefault(str(table), set()).add(str(column))
    for table in TABLES:
        if table not in have:
            continue
        for column, dtype in SCHEMAS[table].items():
            if column not in have[table]:
                run(con, f'ALTER TABLE "{table}" ADD COLUMN "{column}" {sql_type(dtype)}')


def _versions(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Each table's version; a store from before versions existed has them all at 0."""
    known = {r[0] for r in run(con, "SELECT table_name FROM duckdb_tables()")}
    if _VERSIONS not in known:
        return {}
    return {str(n): int(str(v)) for n, v in run(con, f'SELECT name, version FROM "{_VERSIONS}"')}


def _check_version(con: duckdb.DuckDBPyConnection, path: str | Path) -> None:
    known = {r[0] for r in run(con, "SELECT table_name FROM duckdb_tables()")}
    if _META not in known:
        msg = (
            f"{path}: this DuckDB file is not an evalnb lab store (no {_META!r} table); "
            "expected a file written by `Lab.save` or `evalnb import`"
        )
        raise StoreError(msg)
    row = next(iter(run(con, f'SELECT schema_version FROM "{_META}"')), None)
    if row is None or row[0] not in _READABLE:
        _version_error(path, None if row is None else row[0])


def _version_error(path: str | Path, found: object) -> None:
    msg = (
        f"{path}: lab store schema version {found!r}, expected one of {list(_READABLE)}; "
        "open it with the evalnb version that wrote it and export it to JSON"
    )
    raise StoreError(msg)
