"""The lab's core: a test lab's tables as Polars frames, persisted in one DuckDB file.

:class:`LabCore` is what every layer reads and writes: the tables, their store, and the
threshold and verdict methods that need nothing but those tables. The public
:class:`evalnb.Lab` (``evalnb/api/lab.py``) subclasses it and adds the methods whose work
lives higher up (leaderboards, calibration, widgets) as one-line delegations, so this
package imports no other evalnb package.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TypeVar

import polars as pl

from evalnb.lab.errors import EvalnbError, StoreError
from evalnb.lab.files import atomic_path
from evalnb.lab.schema import SCHEMAS, TABLES, conform, empty
from evalnb.lab.store import MERGED, append_rows, commit, read_store
from evalnb.lab.verdicts import current_thresholds, verdicts

if TYPE_CHECKING:
    import weakref
    from collections.abc import Callable, Iterable, Mapping

    import pandas as pd

__all__ = ["LabCore"]

L = TypeVar("L", bound="LabCore")

_KEYS = {
    "cases": ("case_id",),
    "outputs": ("case_id", "model", "sample"),
    "scores": ("case_id", "model", "sample", "evaluator", "metric"),
    "metrics": ("evaluator", "metric"),
    "models": ("model",),
    "info": ("key",),
}

# Catalogue and lab facts: the lab imported first keeps its entry (the same LLM may come
# with another connection key in a second H2O lab).
_FIRST_WINS = {"models", "info"}


class LabCore:
    """A test lab's tables: cases, outputs, scores, metric specs, labels and thresholds.

    Users hold an :class:`evalnb.Lab`, which is a ``LabCore`` with the notebook methods;
    code below the facade takes a ``LabCore`` so that it depends on nothing above it.
    Functions that return a changed lab build it with ``type(lab)(...)``, so a user's
    ``Lab`` comes back as a ``Lab``.

    Examples
    --------
    >>> import polars as pl
    >>> from evalnb.lab import LabCore
    >>> lab = LabCore({"cases": pl.DataFrame({"case_id": ["c1"], "prompt": ["2+2?"]})})
    >>> lab.cases.height, lab.models
    (1, [])
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

    @classmethod
    def view(cls, lab: LabCore) -> Self:
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
        lab._synced = dict(lab._tables)
        return lab

    def _copy(self, tables: Mapping[str, pl.DataFrame] | None = None) -> Self:
        """Return a new lab on the same store and sync state, with ``tables`` replaced in memory."""
        out = _clone(type(self), self)
        out._tables = dict(self._tables)
        out._tables.update({n: f if f is self._tables[n] else conform(f, n)
                            for n, f in (tables or {}).items()})  # fmt: skip
        out._seen, out._synced, out._watchers = dict(self._seen), dict(self._synced), []
        return out

    def _derive(self, tables: Mapping[str, pl.DataFrame]) -> Self:
        """Return a new lab with ``tables`` replaced, written to the store like :meth:`_update`.

        The lab it came from is left as it was (``evaluate`` and ``run_suite`` return a new
        lab and leave their argument alone).
        """
        out = self._copy()
        out._update(tables)
        return out

    def _watch(
        self, tables: Iterable[str], callback: weakref.WeakMethod[Callable[[], None]]
    ) -> None:
        """Call ``callback`` after any of ``tables`` changes in place."""
        self._watchers.append((frozenset(tables), callback))

    def _changed(self, tables: Iterable[str]) -> None:
        changed = set(tables)
        alive = [(names, ref, ref()) for names, ref in self._watchers]
        self._watchers = [(names, ref) for names, ref, fn in alive if fn is not None]
        for names, _, fn in alive:
            if fn is not None and names & changed:
                fn()

    def _update(self, tables: Mapping[str, pl.DataFrame]) -> None:
        """Replace tables in place: the store first (one transaction), then memory, then widgets.

        In the store, append-only tables gain only the rows it lacks and ``info`` only the
        keys changed here; both come back with other processes' rows. Any other table is
        replaced only if no other process replaced it since this lab last synchronised
        (:class:`~evalnb.lab.errors.StoreConflict` otherwise, with nothing written).
        """
        frames = {name: conform(frame, name) for name, frame in tables.items()}
        if self.path is not None:
            snapshot = commit(self.path, frames, base=self._seen, previous=self._synced)
            frames.update(snapshot.tables)
            self._seen.update(snapshot.versions)
            self._synced.update(frames)
        self._tables.update(frames)
        self._changed(tables)

    def _append(self, table: str, rows: pl.DataFrame) -> None:
        """Append rows to an append-only table (labels, thresholds), committed before returning.

        With a store, the table is then re-read in the same transaction, so it also holds
        the rows other reviewers appended meanwhile.
        """
        if self.path is not None:
            whole = append_rows(self.path, table, rows)
            self._synced[table] = whole
        else:
            whole = pl.concat([self._tables[table], conform(rows, table)])
        self._tables[table] = whole
        self._changed([table])

    @property
    def cases(self) -> pl.DataFrame:
        """One row per test case."""
        return self._tables["cases"]

    @property
    def outputs(self) -> pl.DataFrame:
        """One row per (case, model, sample): the model's answer, context, cost, duration."""
        return self._tables["outputs"]

    @property
    def scores(self) -> pl.DataFrame:
        """Long table of evaluator results, one row per (output, evaluator, metric)."""
        return self._tables["scores"]

    @property
    def metrics(self) -> pl.DataFrame:
        """One row per (evaluator, metric): range, direction, default threshold."""
        return self._tables["metrics"]

    @property
    def labels(self) -> pl.DataFrame:
        """Append-only human verdicts."""
        return self._tables["labels"]

    @property
    def thresholds(self) -> pl.DataFrame:
        """Threshold versions per (evaluator, metric)."""
        return self._tables["thresholds"]

    @property
    def model_table(self) -> pl.DataFrame:
        """The model catalogue: name, source key and source metadata (JSON)."""
        return self._tables["models"]

    @property
    def models(self) -> list[str]:
        """Model names: those of the catalogue first, then any others with outputs."""
        names = list(self._tables["models"]["model"])
        seen = set(names)
        for name in self.outputs["model"].unique(maintain_order=True):
            if name not in seen:
                names.append(name)
                seen.add(name)
        return names

    @property
    def info(self) -> dict[str, object]:
        """Lab-level facts: name, description, source format and what the source kept."""
        info = self._tables["info"]
        return {k: json.loads(v) for k, v in zip(info["key"], info["value"], strict=True)}

    def table(self, name: str) -> pl.DataFrame:
        """Return the table called ``name`` (one of ``evalnb.TABLES``)."""
        if name not in self._tables:
            msg = f"no table {name!r}; expected one of {list(TABLES)}"
            raise KeyError(msg)
        return self._tables[name]

    def rows(self) -> pl.DataFrame:
        """Join outputs with their cases: one row per (case, model, sample)."""
        return self.outputs.join(self.cases, on="case_id", how="left", suffix="_case").rename(
            {"extra": "output_extra", "extra_case": "case_extra"}
        )

    def to_pandas(self, table: str = "rows") -> pd.DataFrame:
        """Return a table (or the joined ``"rows"`` view) as a pandas DataFrame."""
        frame = self.rows() if table == "rows" else self.table(table)
        return frame.to_pandas()

    def save(self, path: str | Path) -> Path:
        """Write the lab to the DuckDB file at ``path`` in one transaction.

        Saving to the store this lab came from (or was last saved to) keeps what other
        processes committed there: labels and thresholds are merged, ``info`` gains the keys
        changed here, and a table changed both here and by another process raises
        :class:`~evalnb.lab.errors.StoreConflict` instead of overwriting it. Saving to any
        other file replaces its content. On any error the file is left unchanged.
        """
        target = Path(path)
        if self.path is not None and target.exists() and _same_file(target, self.path):
            self._update({n: f for n, f in self._tables.items()
                          if n in MERGED or f is not self._synced.get(n)})  # fmt: skip
            return target
        if target.exists():
            snapshot = commit(target, self._tables, base=None)  # one transaction in the file
        else:  # a new store appears whole or not at all
            with atomic_path(target) as tmp:
                try:
                    snapshot = commit(tmp, self._tables, base=None)
                except StoreError as exc:  # name the file the user asked for
                    raise StoreError(str(exc).replace(str(tmp), str(target))) from exc
        self.path = target
        self._seen = dict(snapshot.versions)
        self._synced = dict(self._tables)
        return target

    def equals(self, other: LabCore) -> bool:
        """Whether every table of ``other`` equals this lab's, row order included."""
        return all(self._tables[n].equals(other._tables[n]) for n in TABLES)

    def merge(self, other: LabCore) -> Self:
        """Return a lab with the rows of both; a key present in both must hold equal rows.

        Raises
        ------
        EvalnbError
            When both labs hold different rows under one key (e.g. one case id with two
            prompts, or a second answer for the same case, model and sample).
        """
        merged: dict[str, pl.DataFrame] = {}
        for name in TABLES:
            mine, theirs = self._tables[name], other._tables[name]
            keys = _KEYS.get(name)
            if keys is None:  # labels and thresholds are append-only histories
                merged[name] = pl.concat([mine, theirs]) if theirs.height else mine
                continue
            new = theirs.join(mine, on=list(keys), how="anti", nulls_equal=True)
            if name in _FIRST_WINS:
                merged[name] = pl.concat([mine, new]) if new.height else mine
                continue
            # Rows under a shared key must be identical; compare whole-row hashes because
            # Polars cannot join on list columns.
            shared = theirs.join(mine.select(keys), on=list(keys), how="semi", nulls_equal=True)
            clash = shared.filter(~shared.hash_rows().is_in(mine.hash_rows().implode()))
            if clash.height:
                first = clash.row(0, named=True)
                msg = (
                    f"cannot merge table {name!r}: key "
                    f"{ {k: first[k] for k in keys} } is already in the lab with other "
                    f"content ({clash.height} such rows); expected the same rows or new "
                    "keys. Import into a new store, or rename the models/cases."
                )
                raise EvalnbError(msg)
            merged[name] = pl.concat([mine, new]) if new.height else mine
        # Unchanged tables keep their frames, so saving the merge writes only what it adds.
        return self._copy(merged)

    def set_threshold(self, evaluator: str, metric: str, value: float, *,
                      source: str = "user") -> Self:  # fmt: skip
        """Set the pass threshold of one metric (a new version; older ones are kept).

        Everything derived (verdicts, problems, insights, charts, report) follows at once;
        no score is recomputed. Written through to the lab's store when it has one.
        """
        spec = self.metric_spec(evaluator, metric)  # a KeyError naming the known metrics
        low, high = spec.get("min"), spec.get("max")
        value = float(value)
        if (
            math.isnan(value)
            or (low is not None and value < low)
            or (high is not None and value > high)
        ):
            msg = (
                f"threshold {value} for {evaluator}/{metric} is outside the metric's range "
                f"[{low}, {high}]: no score could pass or fail by it; pass a value in that range"
            )
            raise ValueError(msg)
        row = pl.DataFrame([{"evaluator": evaluator, "metric": metric, "threshold": value,
                             "source": source, "created_at": dt.datetime.now(dt.UTC)}],
                           schema=SCHEMAS["thresholds"])  # fmt: skip
        self._append("thresholds", row)
        return self

    def current_thresholds(self) -> pl.DataFrame:
        """Return the threshold in force for every metric, with its source (default/user/calibrated)."""
        return current_thresholds(self.metrics, self.thresholds)

    def metric_spec(self, evaluator: str, metric: str) -> dict[str, Any]:
        """One metric's spec and the threshold in force (a ``current_thresholds`` row)."""
        row = self.current_thresholds().filter(
            (pl.col("evaluator") == evaluator) & (pl.col("metric") == metric)
        )
        if row.is_empty():
            pairs = sorted(set(self.metrics.select("evaluator", "metric").iter_rows()))
            msg = f"no metric {metric!r} of evaluator {evaluator!r} in this lab (evaluate it first); known: {pairs}"
            raise KeyError(msg)
        return row.row(0, named=True)

    def verdicts(self) -> pl.DataFrame:
        """Every score with its threshold and ``passed`` (null where the value is)."""
        return verdicts(self.scores, self.metrics, self.thresholds)

    def summary(self) -> pl.DataFrame:
        """Row counts per table."""
        return pl.DataFrame(
            {"table": list(TABLES), "rows": [self._tables[n].height for n in TABLES]}
        )

    def __repr__(self) -> str:
        name = self.info.get("name") or "unnamed"
        return (
            f"<{type(self).__name__} {name!s}: {self.cases.height} cases, {len(self.models)} models, "
            f"{self.outputs.height} outputs, {self.scores.height} scores, "
            f"{self.labels.height} labels>"
        )


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:  # one of them is gone: not the same store any more
        return False


def _clone(cls: type[L], lab: LabCore) -> L:
    """Return a ``cls`` instance sharing ``lab``'s attributes (no table copied or conformed)."""
    out = cls.__new__(cls)
    out.__dict__.update(vars(lab))
    return out
