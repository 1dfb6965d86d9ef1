"""Tables kept on disk as Parquet parts beside the store: labs larger than memory.

A store may keep its two big tables, ``outputs`` and ``scores``, as *parts* instead of
DuckDB rows: folders of Parquet files under ``LAB.duckdb.parts/``, listed in the store's
``evalnb_parts`` table. Files are written once and never changed; a change writes new
parts and swaps the list in one DuckDB transaction, so a reader sees the old list or the
new one, never half of either. Readers scan the files lazily (Polars), so a leaderboard
or the eye's index reads only the columns and rows it needs. In the DuckDB file the table
is a view over the same files, so any DuckDB client can query it with SQL.

Each part of ``scores`` records which evaluators' rows it holds: a process that rescores
one evaluator replaces only the parts holding it, and two processes scoring different
evaluators of one lab never conflict.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl
import pyarrow.parquet as pq

from evalnb.lab.errors import StoreConflict, StoreError
from evalnb.lab.schema import SCHEMAS, conform, empty, sql_type
from evalnb.lab.shards import ShardWriter, write_shards

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Sequence

    import duckdb

__all__ = [
    "PARTS_TABLE",
    "SHARDABLE",
    "Part",
    "PartChange",
    "PartWriter",
    "apply_changes",
    "copy_part",
    "ensure_manifest",
    "memory_budget",
    "new_part_folder",
    "part_from_folder",
    "parts_dir",
    "read_batches",
    "read_manifest",
    "remove_parts",
    "scan_parts",
    "unshard",
    "write_part",
]

PARTS_TABLE = "evalnb_parts"
SHARDABLE = ("outputs", "scores", "steps")
"""The tables a store can keep as Parquet parts (the others stay small).

``steps`` (agents' messages and tool calls) go with ``outputs``: kept on disk when they are.
"""


@dataclass(frozen=True)
class Part:
    """One folder of Parquet files holding rows of one table.

    Attributes
    ----------
    table
        ``"outputs"`` or ``"scores"``.
    folder
        The folder, relative to the store's parts folder (``scores/3f2a9c1e0b7d``).
    evaluators
        For ``scores``: the evaluators whose rows it holds (empty: any of them).
    rows
        Its row count.
    nbytes
        Its uncompressed size, about what its rows take in memory.
    """

    table: str
    folder: str
    evaluators: tuple[str, ...]
    rows: int
    nbytes: int

    def holds(self, evaluator: str) -> bool:
        """Whether the part may hold rows of ``evaluator``."""
        return not self.evaluators or evaluator in self.evaluators


@dataclass(frozen=True)
class PartChange:
    """Parts a writer adds to a table and the parts it drops, checked against what it saw.

    ``touched`` names the evaluators whose rows change (None: the whole table). The write
    is refused when the store's parts that may hold them differ from ``seen``: another
    process changed those rows since this one read them.
    """

    add: tuple[Part, ...]
    drop: tuple[Part, ...] = ()
    seen: tuple[Part, ...] | None = None
    """None: replace the table's parts whatever they are (saving to another store)."""
    touched: frozenset[str] | None = None


def parts_dir(store: str | Path) -> Path:
    """Return the folder holding a store's parts: ``LAB.duckdb.parts`` beside ``LAB.duckdb``."""
    path = Path(store)
    return path.with_name(path.name + ".parts")


def new_part_folder(root: Path, table: str) -> Path:
    """Return a fresh (not yet created) folder for a new part of ``table`` under ``root``."""
    return root / table / uuid.uuid4().hex[:16]


def part_from_folder(root: Path, folder: Path, table: str, evaluators: Iterable[str] = ()) -> Part:
    """Describe a written folder of Parquet files as a part (rows and size from the footers)."""
    rows = nbytes = 0
    for file in _files(folder):
        meta = pq.ParquetFile(file).metadata
        rows += meta.num_rows
        nbytes += sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    return Part(
        table, folder.relative_to(root).as_posix(), tuple(sorted(set(evaluators))), rows, nbytes
    )


def write_part(
    root: Path, table: str, rows: pl.DataFrame | pl.LazyFrame, evaluators: Iterable[str] = ()
) -> Part:
    """Write ``rows`` (conformed to ``table``'s schema) as a new part under ``root``.

    A frame is cut into shard files (:func:`~evalnb.lab.shards.write_shards`); a query is
    streamed into one file, never held whole in memory. Either way the folder appears
    whole or not at all.
    """
    folder = new_part_folder(root, table)
    if isinstance(rows, pl.DataFrame):
        write_shards(rows.select(list(SCHEMAS[table])), folder)
    else:
        with _publishing(folder, "write the Parquet part") as tmp:
            tmp.mkdir()
            rows.select(list(SCHEMAS[table])).sink_parquet(tmp / "part-00000.parquet")
    return part_from_folder(root, folder, table, evaluators)


@contextlib.contextmanager
def _publishing(folder: Path, what: str) -> Iterator[Path]:
    """Yield a temporary folder beside ``folder``, renamed to it when the block succeeds."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = folder.with_name(f".{folder.name}.tmp")
    try:
        yield tmp
        tmp.rename(folder)
    except OSError as exc:
        msg = f"{folder}: could not {what}: {exc}"
        raise StoreError(msg) from exc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class PartWriter:
    """Write one new part a frame at a time (one file each), then publish it whole.

    For a table written in chunks that never sit in memory together: ``evaluate`` on a
    lab kept on disk scores its outputs a chunk at a time and writes each chunk's scores
    here. Nothing is visible until :meth:`close`, which renames the folder into place.
    """

    def __init__(self, root: Path, table: str, evaluators: Iterable[str] = ()) -> None:
        self._root, self._table, self._evaluators = root, table, tuple(evaluators)
        self._shards = ShardWriter(new_part_folder(root, table))

    def write(self, rows: pl.DataFrame) -> None:
        """Add ``rows`` (in the table's columns) as the part's next files; empty ones add none."""
        self._shards.write(rows.select(list(SCHEMAS[self._table])))

    def close(self) -> Part | None:
        """Publish the part and return it; None when nothing was written."""
        if not self._shards.written:
            self._shards.discard()
            return None
        self._shards.close()
        return part_from_folder(self._root, self._shards.folder, self._table, self._evaluators)

    def discard(self) -> None:
        """Delete what was written (the run failed)."""
        self._shards.discard()


def copy_part(source: Path, part: Part, root: Path) -> Part:
    """Return the same part under another store's parts folder ``root``.

    Files are hard-linked where the file system allows (a part's files never change, so
    two stores may share them), else copied; the folder appears whole or not at all.
    """
    folder = new_part_folder(root, part.table)
    with _publishing(folder, f"copy the Parquet part {source / part.folder}") as tmp:
        shutil.copytree(source / part.folder, tmp, copy_function=_link_or_copy)
    return Part(
        part.table, folder.relative_to(root).as_posix(), part.evaluators, part.rows, part.nbytes
    )


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:  # another file system, or links not allowed
        shutil.copy2(src, dst)


def remove_parts(root: Path, parts: Iterable[Part]) -> None:
    """Delete the parts' folders (after they left the list, or when their write failed)."""
    for part in parts:
        shutil.rmtree(root / part.folder, ignore_errors=True)


def scan_parts(store: str | Path, table: str, parts: Sequence[Part]) -> pl.LazyFrame:
    """Return a lazy scan of ``parts``: filters and column choices run inside the Parquet reader.

    Raises
    ------
    StoreError
        When a part's folder is gone (the store was moved without its parts folder).
    """
    root = parts_dir(store)
    files = [f for p in parts for f in _part_files(store, root, p)]
    if not files:
        return empty(table).lazy()
    return pl.scan_parquet(files, schema=SCHEMAS[table])


def read_batches(
    store: str | Path, table: str, parts: Sequence[Part], rows: int
) -> Iterator[pl.DataFrame]:
    """Yield the rows of ``parts`` in order, whole files at a time, about ``rows`` per frame."""
    root, held, n = parts_dir(store), [], 0
    for file in (f for p in parts for f in _part_files(store, root, p)):
        frame = conform(pl.read_parquet(file), table)
        held.append(frame)
        n += frame.height
        if n >= rows:
            yield pl.concat(held)
            held, n = [], 0
    if held:
        yield pl.concat(held)


def _part_files(store: str | Path, root: Path, part: Part) -> list[Path]:
    files = _files(root / part.folder)
    if not files:
        msg = (
            f"{store}: the {part.table!r} table is kept as Parquet parts and {root / part.folder} "
            f"is missing or empty; expected the folder {root.name} beside the store. A store "
            "keeping parts moves together with that folder."
        )
        raise StoreError(msg)
    return files


def _files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.parquet")) if folder.is_dir() else []


# The manifest, read and written inside the store's transactions.


def ensure_manifest(con: duckdb.DuckDBPyConnection) -> None:
    """Create the parts list when missing."""
    con.execute(
        f'CREATE TABLE IF NOT EXISTS "{PARTS_TABLE}" (name VARCHAR, folder VARCHAR, '
        "evaluators VARCHAR[], n_rows BIGINT, nbytes BIGINT)"
    ).fetchall()


def read_manifest(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[Part, ...]]:
    """Every table kept as parts, with its parts in the order they were added."""
    known = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    if PARTS_TABLE not in known:
        return {}
    out: dict[str, list[Part]] = {}
    rows = con.execute(
        f'SELECT name, folder, evaluators, n_rows, nbytes FROM "{PARTS_TABLE}" ORDER BY rowid'
    ).fetchall()
    for name, folder, evaluators, n_rows, nbytes in rows:
        table = str(name)
        listed = out.setdefault(table, [])
        if folder is None:  # the marker of a table kept on disk, with or without parts
            continue
        names = tuple(str(e) for e in evaluators or ())
        part = Part(table, str(folder), names, int(str(n_rows)), int(str(nbytes)))
        listed.append(part)
    return {name: tuple(parts) for name, parts in out.items()}


def apply_changes(
    con: duckdb.DuckDBPyConnection,
    store: str | Path,
    changes: Mapping[str, PartChange],
    root: Path,
) -> tuple[dict[str, tuple[Part, ...]], list[Part]]:
    """Swap the parts of each table in ``changes`` (under ``root``).

    Returns every table's parts after the swap, and the parts that left the list (their
    files are deleted once the transaction commits).

    Raises
    ------
    StoreConflict
        When another process changed the parts a change depends on since it read them.
    """
    ensure_manifest(con)
    stored = read_manifest(con)
    left: list[Part] = []
    for table, change in changes.items():
        now = stored.get(table, ())
        relevant = [p for p in now if _touches(p, change.touched)]
        seen = (
            relevant
            if change.seen is None
            else [p for p in change.seen if _touches(p, change.touched)]
        )
        if {p.folder for p in relevant} != {p.folder for p in seen}:
            what = "the whole table" if change.touched is None else f"{sorted(change.touched)}"
            msg = (
                f"{store}: another process changed the {table!r} rows of {what} since this "
                "lab read them; writing would undo that work, so nothing was written. Reopen "
                "the lab (evalnb.open(path)) and run it again."
            )
            raise StoreConflict(msg)
        if table not in stored:  # the table goes on disk: mark it, for when it has no part
            con.execute(f'INSERT INTO "{PARTS_TABLE}" (name) VALUES (?)', [table]).fetchall()
        gone = {p.folder for p in (now if change.seen is None else change.drop)}
        left.extend(p for p in now if p.folder in gone)
        con.execute(
            f'DELETE FROM "{PARTS_TABLE}" WHERE name = ? AND list_contains(?, folder)',
            [table, sorted(gone)],
        ).fetchall()
        for p in change.add:
            con.execute(
                f'INSERT INTO "{PARTS_TABLE}" VALUES (?, ?, ?, ?, ?)',
                [table, p.folder, list(p.evaluators), p.rows, p.nbytes],
            ).fetchall()
        stored[table] = tuple(p for p in now if p.folder not in gone) + change.add
        _set_view(con, root, table, stored[table])
    return stored, left


def unshard(con: duckdb.DuckDBPyConnection, table: str) -> tuple[Part, ...]:
    """Stop keeping ``table`` as parts (it is about to be written as rows); return its parts.

    Their files are deleted once the transaction commits.
    """
    parts = read_manifest(con).get(table, ())
    if parts:
        con.execute(f'DROP VIEW IF EXISTS "{table}"').fetchall()
        con.execute(f'DELETE FROM "{PARTS_TABLE}" WHERE name = ?', [table]).fetchall()
    return parts


def _touches(part: Part, touched: frozenset[str] | None) -> bool:
    return touched is None or not part.evaluators or bool(touched & set(part.evaluators))


def _set_view(
    con: duckdb.DuckDBPyConnection, root: Path, table: str, parts: Sequence[Part]
) -> None:
    """Make ``table`` in the DuckDB file a view over its parts' files, for SQL users.

    The view names the files by absolute path: a store moved elsewhere gets a right view
    again at its next write (evalnb itself reads the parts list, never the view).
    """
    files = [str(f.resolve()) for p in parts for f in _files(root / p.folder)]
    kinds = {
        r[0]: r[1]
        for r in con.execute(
            "SELECT table_name, 'table' FROM duckdb_tables() UNION ALL "
            "SELECT view_name, 'view' FROM duckdb_views() WHERE NOT internal"
        ).fetchall()
    }
    if kinds.get(table) == "table":
        con.execute(f'DROP TABLE "{table}"').fetchall()
    if files:
        listed = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
        body = f"SELECT * FROM read_parquet([{listed}])"
    else:  # no file yet: an empty view of the right columns
        body = (
            "SELECT "
            + ", ".join(f'CAST(NULL AS {sql_type(d)}) AS "{n}"' for n, d in SCHEMAS[table].items())
            + " WHERE false"
        )
    con.execute(f'CREATE OR REPLACE VIEW "{table}" AS {body}').fetchall()


def memory_budget() -> int:
    """Return the bytes a table may take when loaded whole.

    ``EVALNB_MEMORY_BUDGET_GB`` when set, else half the memory available now (what a lab
    derives from a table takes about as much again).
    """
    given = os.environ.get("EVALNB_MEMORY_BUDGET_GB")
    if given:
        return int(float(given) * 2**30)
    with contextlib.suppress(OSError, ValueError), Path("/proc/meminfo").open() as info:
        for line in info:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024 // 2
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
