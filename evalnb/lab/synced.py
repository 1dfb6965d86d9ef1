"""A lab's tables and their store: what is in memory, what is on disk, what was synced.

:class:`SyncedTables` holds the tables of a lab and keeps them in step with its DuckDB
store: opening and saving, writing changed tables in one transaction without undoing
other processes' work, and the tables kept on disk as Parquet parts (read through scans,
loaded only within the memory budget). :class:`~evalnb.lab.core.LabCore` adds what a lab
means on top: the tables by name, thresholds, verdicts, merging.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Self, TypeVar

import polars as pl

from evalnb.lab.errors import StoreError, TableTooLarge
from evalnb.lab.files import atomic_path
from evalnb.lab.parts import (
    SHARDABLE,
    Part,
    PartChange,
    copy_part,
    memory_budget,
    parts_dir,
    remove_parts,
    scan_parts,
    write_part,
)
from evalnb.lab.schema import TABLES, conform, empty
from evalnb.lab.store import MERGED, append_rows, commit, read_store, seal

if TYPE_CHECKING:
    import weakref
    from collections.abc import Callable, Iterable, Mapping

__all__ = ["SyncedTables"]

S = TypeVar("S", bound="SyncedTables")


class SyncedTables:
    """A lab's tables, in memory or on disk, and what this copy last synced with its store.

    The base of :class:`~evalnb.lab.core.LabCore`; code takes a ``LabCore``.

    Every write to a lab goes through five methods (the write protocol); each writes the
    store first, in one transaction that never undoes another process's committed rows,
    then memory, then tells the widgets watching the tables:

    * :meth:`with_tables`: a new lab with tables replaced (this one left as it was);
    * :meth:`replace_tables`: the same, in place;
    * :meth:`append_rows`: rows added to an append-only table (labels, thresholds, events);
    * :meth:`with_parts`: a new lab with Parquet parts swapped in (a lab kept on disk;
      :class:`~evalnb.lab.score_parts.ScoreParts` writes the parts);
    * :meth:`watch`: a callback run after given tables change in place.
    """

    def __init__(
        self, tables: Mapping[str, pl.DataFrame] | None = None, *, path: Path | None = None
    ) -> None:
        given = dict(tables or {})
        unknown = sorted(set(given) - set(TABLES))
        if unknown:
            msg = f"unknown lab tables {unknown}; expected a subset of {list(TABLES)}"
            raise ValueError(msg)
        self._tables = {
            name: conform(given[name], name) if name in given else empty(name) for name in TABLES
        }
        self.path = path
        """The DuckDB store this lab was opened from or last saved to, if any."""
        # Open widgets redraw when tables they show change in place (a threshold set, topics
        # written); held weakly so a closed widget is not kept alive by its lab.
        self._watchers: list[tuple[frozenset[str], weakref.WeakMethod[Callable[[], None]]]] = []
        # What this lab last read from or wrote to its store: each table's version there
        # (a replaced-whole table is written only over that version) and the frames as they
        # were then (a table still identical to its synced frame has nothing to write).
        self._seen: dict[str, int] = {}
        self._synced: dict[str, pl.DataFrame] = {}
        # Tables the store keeps as Parquet parts (labs larger than memory): read through
        # `scan`, and loaded into `_tables` only when a caller needs the frame.
        self._parts: dict[str, tuple[Part, ...]] = {}

    @classmethod
    def view(cls, lab: SyncedTables) -> Self:
        """Return ``lab`` as an instance of ``cls``: the same tables, store and watchers.

        Nothing is copied or checked again (the tables were conformed when ``lab`` was
        built); this is how an entry point hands the user an :class:`evalnb.Lab` for a lab
        a lower layer built.
        """
        return lab if isinstance(lab, cls) else _clone(cls, lab)

    @classmethod
    def open(cls, path: str | Path) -> Self:
        """Open a lab stored in a DuckDB file by :meth:`save` or ``evalnb import``."""
        target = Path(path)
        snapshot = read_store(target)
        lab = cls(snapshot.tables, path=target)
        lab._seen = dict(snapshot.versions)
        lab._set_parts(snapshot.parts)
        for name in lab._parts:
            del lab._tables[name]
        lab._synced = dict(lab._tables)
        return lab

    @property
    def on_disk(self) -> tuple[str, ...]:
        """The tables this lab's store keeps as Parquet parts, read lazily (see :meth:`scan`)."""
        return tuple(self._parts)

    def scan(self, name: str) -> pl.LazyFrame:
        """Return the table called ``name`` as a Polars query, read from disk when kept as parts.

        On a lab whose store keeps ``outputs`` and ``scores`` as Parquet parts
        (``lab.save(path, on_disk=...)``) this is the way to query them without loading
        them: filters and column choices run inside the Parquet reader.

        Examples
        --------
        >>> import evalnb, polars as pl
        >>> lab = evalnb.load(pl.DataFrame({"prompt": ["a"], "actual": ["b"]}))
        >>> lab.scan("outputs").select("actual").collect()["actual"].to_list()
        ['b']
        """
        if name in self._parts and name not in self._tables:
            assert self.path is not None  # parts belong to a store
            return scan_parts(self.path, name, self._parts[name])
        return self.table(name).lazy()  # in memory (a KeyError naming the tables otherwise)

    def height(self, name: str) -> int:
        """Rows of the table called ``name``, counted without loading a table kept on disk."""
        if name in self._parts and name not in self._tables:
            return sum(p.rows for p in self._parts[name])
        return self.table(name).height

    def parts_of(self, name: str) -> tuple[Part, ...]:
        """Return the Parquet parts holding table ``name`` (none when kept as DuckDB rows)."""
        return self._parts.get(name, ())

    def table(self, name: str) -> pl.DataFrame:
        """Return the table called ``name`` (one of ``evalnb.TABLES``)."""
        if name not in TABLES:
            msg = f"no table {name!r}; expected one of {list(TABLES)}"
            raise KeyError(msg)
        return self._frame(name)

    def _frame(self, name: str) -> pl.DataFrame:
        """Return the table as a frame, loaded from its parts (once) when kept on disk."""
        frame = self._tables.get(name)
        if frame is not None:
            return frame
        parts = self._parts[name]
        need, budget = sum(p.nbytes for p in parts), memory_budget()
        if need > budget:
            msg = (
                f"{self.path}: the {name!r} table is kept on disk as Parquet parts "
                f"({self.height(name):,} rows, about {_size(need)} in memory) and "
                f"does not fit the memory budget of {_size(budget)} (half the "
                "memory available; EVALNB_MEMORY_BUDGET_GB sets it), so it was not loaded. "
                "On disk, the leaderboard, problems, the eye, the weakness grid, the labeler, "
                "calibration and evalnb.evaluate work as usual; query it yourself with "
                f"lab.scan({name!r}) (a Polars "
                "LazyFrame) or SQL on the store's view of the same name."
            )
            raise TableTooLarge(msg)
        frame = conform(self.scan(name).collect(), name)
        self._tables[name] = self._synced[name] = frame
        return frame

    def _copy(self, tables: Mapping[str, pl.DataFrame] | None = None) -> Self:
        """Return a new lab on the same store and sync state, with ``tables`` replaced in memory."""
        out = _clone(type(self), self)
        out._tables = dict(self._tables)
        out._tables.update(
            {n: f if f is self._tables.get(n) else conform(f, n) for n, f in (tables or {}).items()}
        )
        out._seen, out._synced, out._watchers = dict(self._seen), dict(self._synced), []
        out._parts = dict(self._parts)
        return out

    def with_tables(self, tables: Mapping[str, pl.DataFrame]) -> Self:
        """Return a new lab with ``tables`` replaced, written to the store like :meth:`replace_tables`.

        The lab it came from is left as it was (``evaluate`` and ``run_suite`` return a new
        lab and leave their argument alone).

        Parameters
        ----------
        tables
            Whole tables by name (each conformed to its schema in ``evalnb.TABLES``).

        Returns
        -------
        Self
            The new lab, on the same store.
        """
        out = self._copy()
        out.replace_tables(tables)
        return out

    def watch(
        self, tables: Iterable[str], callback: weakref.WeakMethod[Callable[[], None]]
    ) -> None:
        """Call ``callback`` after any of ``tables`` changes in place.

        Parameters
        ----------
        tables
            Table names to watch.
        callback
            Held weakly, so a closed widget is not kept alive by its lab; dropped once its
            object is gone.
        """
        self._watchers.append((frozenset(tables), callback))

    def _changed(self, tables: Iterable[str]) -> None:
        changed = set(tables)
        alive = [(names, ref, ref()) for names, ref in self._watchers]
        self._watchers = [(names, ref) for names, ref, fn in alive if fn is not None]
        for names, _, fn in alive:
            if fn is not None and names & changed:
                fn()

    def replace_tables(self, tables: Mapping[str, pl.DataFrame]) -> None:
        """Replace tables in place: the store first (one transaction), then memory, then widgets.

        In the store, append-only tables gain only the rows it lacks and ``info`` only the
        keys changed here; both come back with other processes' rows. Any other table is
        replaced only if no other process replaced it since this lab last synchronised
        (:class:`~evalnb.lab.errors.StoreConflict` otherwise, with nothing written).

        Parameters
        ----------
        tables
            Whole tables by name; a table kept as Parquet parts becomes one new part.
        """
        frames = {name: conform(frame, name) for name, frame in tables.items()}
        if self.path is not None:
            # A table kept as parts stays so: the frame becomes its one new part.
            root = parts_dir(self.path)
            written = {n: frames.pop(n) for n in list(frames) if n in self._parts}
            changes = {
                n: PartChange(_new_parts(root, n, f), drop=self._parts[n], seen=self._parts[n])
                for n, f in written.items()
            }
            frames = self._commit(frames, changes, written)
        self._tables.update(frames)
        self._changed(tables)

    def _commit(
        self,
        frames: dict[str, pl.DataFrame],
        changes: Mapping[str, PartChange],
        written: Mapping[str, pl.DataFrame],
    ) -> dict[str, pl.DataFrame]:
        """Write ``frames`` as rows and ``changes`` as parts to this lab's store, in one go.

        Returns the frames now in memory: those written, with the merged tables as the
        store holds them. ``written`` are the frames of the parts just added (they stay
        loaded); any other table whose parts changed (here, or by another process) is
        dropped from memory and read again from disk when next used.
        """
        assert self.path is not None
        snapshot = commit(self.path, frames, base=self._seen, previous=self._synced, parts=changes)
        frames = {**frames, **snapshot.tables}
        self._synced.update(frames)
        self._seen.update(snapshot.versions)
        for name, parts in snapshot.parts.items():
            if name in written:
                self._synced[name] = frames[name] = written[name]
            elif parts != self._parts.get(name):
                self._tables.pop(name, None)
                self._synced.pop(name, None)
        # A table another process turned back into rows is read as rows now.
        back = [n for n in self._parts if n not in snapshot.parts and n not in frames]
        if back:
            frames.update(read_store(self.path, back).tables)
            self._synced.update(frames)
        self._set_parts(snapshot.parts)
        return frames

    def _set_parts(self, parts: Mapping[str, tuple[Part, ...]]) -> None:
        # In place: a view of this lab (`Lab.view`) shares the dict, as it shares `_tables`.
        self._parts.clear()
        self._parts.update(parts)

    def with_parts(
        self, changes: Mapping[str, PartChange], tables: Mapping[str, pl.DataFrame]
    ) -> Self:
        """Return a new lab with parts swapped and ``tables`` replaced, in one transaction.

        ``evaluate`` writes a lab kept on disk this way: new parts of ``scores`` for what
        it scored, the other tables as rows. Raises
        :class:`~evalnb.lab.errors.StoreConflict` (with nothing written, the new parts
        deleted) when another process changed the same evaluators' scores meanwhile.
        """
        out = self._copy()
        frames = out._commit({n: conform(f, n) for n, f in tables.items()}, changes, {})
        out._tables.update(frames)
        out._changed([*tables, *changes])
        return out

    def append_rows(self, table: str, rows: pl.DataFrame) -> None:
        """Append rows to an append-only table (labels, thresholds), committed before returning.

        With a store, the table is then re-read in the same transaction, so it also holds
        the rows other reviewers appended meanwhile.

        Parameters
        ----------
        table
            An append-only table (``labels``, ``thresholds``, ``curation``, ...).
        rows
            The new rows, in the table's columns.
        """
        if self.path is not None:
            whole = append_rows(self.path, table, rows)
            self._synced[table] = whole
        else:
            whole = pl.concat([self._frame(table), conform(rows, table)])
        self._tables[table] = whole
        self._changed([table])

    def save(self, path: str | Path, *, on_disk: Iterable[str] | None = None) -> Path:
        """Write the lab to the DuckDB file at ``path`` in one transaction.

        Saving to the store this lab came from (or was last saved to) keeps what other
        processes committed there: labels and thresholds are merged, ``info`` gains the keys
        changed here, and a table changed both here and by another process raises
        :class:`~evalnb.lab.errors.StoreConflict` instead of overwriting it. Saving to any
        other file replaces its content. On any error the file is left unchanged.

        Parameters
        ----------
        path
            The DuckDB store.
        on_disk
            Tables to keep as Parquet parts in the folder ``<path>.parts`` beside the store
            instead of as DuckDB rows: ``("outputs", "scores")`` for a lab larger than
            memory (see ``docs/workflows/scale.md``); agents' ``steps`` go with ``outputs``. Such tables are read lazily: the
            leaderboard, problems, the eye and ``evaluate`` never load them whole. Default:
            the tables this lab keeps so already; ``()`` writes every table as rows.
        """
        target = Path(path)
        keep = self._keep_on_disk(on_disk)
        if self.path is not None and target.exists() and _same_file(target, self.path):
            root = parts_dir(self.path)
            frames = {
                n: f
                for n, f in self._tables.items()
                if n not in keep and (n in MERGED or f is not self._synced.get(n))
            }
            # Tables leaving the disk become rows.
            frames.update({n: self._frame(n) for n in self._parts if n not in keep})
            written = {
                n: self._frame(n)
                for n in keep
                if n not in self._parts or self._tables.get(n) is not self._synced.get(n)
            }
            changes = {
                n: PartChange(
                    _new_parts(root, n, f), drop=self._parts.get(n, ()), seen=self._parts.get(n, ())
                )
                for n, f in written.items()
            }
            self._tables.update(self._commit(frames, changes, written))
            return target
        root = parts_dir(target)
        changes = {n: PartChange(self._parts_for(n, root)) for n in keep}
        frames = {n: self._frame(n) for n in TABLES if n not in keep}
        try:
            if target.exists():  # one transaction in the file
                snapshot = commit(target, frames, base=None, parts=changes)
            else:  # a new store appears whole or not at all
                with atomic_path(target) as tmp:
                    try:
                        snapshot = commit(tmp, frames, base=None, parts=changes, root=root)
                    except StoreError as exc:  # name the file the user asked for
                        raise StoreError(str(exc).replace(str(tmp), str(target))) from exc
                    seal(tmp, frames, shown_as=target)  # never rename a file that lost rows
        except BaseException:
            remove_parts(root, [p for c in changes.values() for p in c.add])
            raise
        self.path = target
        self._seen = dict(snapshot.versions)
        self._set_parts(snapshot.parts)
        self._synced = dict(self._tables)
        return target

    def _keep_on_disk(self, on_disk: Iterable[str] | None) -> tuple[str, ...]:
        keep = tuple(self._parts) if on_disk is None else tuple(dict.fromkeys(on_disk))
        if "outputs" in keep and "steps" not in keep and self.height("steps"):
            keep = (*keep, "steps")  # an agent's runs are bigger still (a lab without runs: none)
        wrong = [n for n in keep if n not in SHARDABLE]
        if wrong:
            msg = f"on_disk names {wrong}; expected some of {list(SHARDABLE)} (the big tables)"
            raise ValueError(msg)
        return keep

    def _parts_for(self, name: str, root: Path) -> tuple[Part, ...]:
        """Return parts under ``root`` holding table ``name``.

        They link to this store's files when it keeps the table on disk (files never
        change), else hold the frame written as one part.
        """
        unchanged = self._tables.get(name) is self._synced.get(name)  # both None: not loaded
        if name in self._parts and unchanged and self.path is not None:
            return tuple(copy_part(parts_dir(self.path), p, root) for p in self._parts[name])
        return _new_parts(root, name, self._frame(name))


def _new_parts(root: Path, name: str, frame: pl.DataFrame) -> tuple[Part, ...]:
    """``frame`` as the parts of table ``name``: one part, or none for no rows."""
    return (write_part(root, name, frame),) if frame.height else ()


def _size(nbytes: int) -> str:
    return f"{nbytes / 2**30:.1f} GB" if nbytes >= 2**30 else f"{nbytes / 2**20:.1f} MB"


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:  # one of them is gone: not the same store any more
        return False


def _clone(cls: type[S], lab: SyncedTables) -> S:
    """Return a ``cls`` instance sharing ``lab``'s attributes (no table copied or conformed)."""
    out = cls.__new__(cls)
    out.__dict__.update(vars(lab))
    return out
