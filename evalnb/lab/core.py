"""The Lab: a test lab's tables as Polars frames, persisted in one DuckDB file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from evalnb.analysis.derived import Analysis
from evalnb.lab.errors import EvalnbError
from evalnb.api.lab import Labelling
from evalnb.lab.schema import TABLES, conform, empty
from evalnb.lab.store import append_rows, read_tables, write_tables

if TYPE_CHECKING:
    import weakref
    from collections.abc import Callable, Iterable, Mapping

    import pandas as pd

__all__ = ["Lab", "open_lab"]

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


class Lab(Analysis, Labelling):
    """A test lab: cases, model outputs, scores, metric specs, human labels and thresholds.

    Build one with :func:`evalnb.load` (from a file or frame) or :func:`evalnb.open` (from a
    DuckDB store). The tables are Polars frames with fixed schemas (``docs/architecture.md``).

    Examples
    --------
    >>> import evalnb, polars as pl
    >>> lab = evalnb.load(pl.DataFrame({"prompt": ["2+2?"], "expected": ["4"], "actual": ["4"]}))
    >>> lab.cases.height, lab.models
    (1, ['model'])
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
        """Replace tables in place: the store first (one transaction), then memory, then widgets."""
        if self.path is not None:
            write_tables(self.path, tables)
        self._tables.update({name: conform(frame, name) for name, frame in tables.items()})
        self._changed(tables)

    def _append(self, table: str, rows: pl.DataFrame) -> None:
        """Append rows to an append-only table (labels, thresholds), committed before returning."""
        if self.path is not None:
            append_rows(self.path, table, rows)
        self._tables[table] = pl.concat([self._tables[table], conform(rows, table)])
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
        """Write every table to the DuckDB file at ``path`` in one transaction.

        The file's previous content is replaced; on any error it is left unchanged.
        """
        target = Path(path)
        write_tables(target, self._tables)
        self.path = target
        return target

    def export(self, path: str | Path, format: str = "h2o_lab") -> Path:  # noqa: A002
        """Write the lab to ``path`` in a source format others read.

        Parameters
        ----------
        path
            The file to write (replaced whole; written to a temporary file first).
        format
            ``"h2o_lab"`` (H2O Eval Studio test lab JSON) or ``"tencent"`` (Tencent TI
            evaluation-only JSONL). Importing the file back gives equal cases and outputs.
        """
        from evalnb.io.h2o_export import h2o_lab_document  # noqa: PLC0415
        from evalnb.io.tencent_export import tencent_records  # noqa: PLC0415

        if format == "h2o_lab":
            text = json.dumps(h2o_lab_document(self), indent=4, ensure_ascii=False)
        elif format == "tencent":
            text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in tencent_records(self))
        else:
            msg = f"cannot export to {format!r}; expected 'h2o_lab' or 'tencent'"
            raise ValueError(msg)
        target = Path(path)
        tmp = target.with_name(target.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(target)  # atomic: a reader never sees half a file
        return target

    def equals(self, other: Lab) -> bool:
        """Whether every table of ``other`` equals this lab's, row order included."""
        return all(self._tables[n].equals(other._tables[n]) for n in TABLES)

    def merge(self, other: Lab) -> Lab:
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
                merged[name] = pl.concat([mine, theirs])
                continue
            new = theirs.join(mine, on=list(keys), how="anti", nulls_equal=True)
            if name in _FIRST_WINS:
                merged[name] = pl.concat([mine, new])
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
            merged[name] = pl.concat([mine, new])
        return Lab(merged, path=self.path)

    def summary(self) -> pl.DataFrame:
        """Row counts per table."""
        return pl.DataFrame(
            {"table": list(TABLES), "rows": [self._tables[n].height for n in TABLES]}
        )

    def __repr__(self) -> str:
        name = self.info.get("name") or "unnamed"
        return (
            f"<Lab {name!s}: {self.cases.height} cases, {len(self.models)} models, "
            f"{self.outputs.height} outputs, {self.scores.height} scores, "
            f"{self.labels.height} labels>"
        )


def open_lab(path: str | Path) -> Lab:
    """Open a lab stored in a DuckDB file by :meth:`Lab.save` or ``evalnb import``.

    Examples
    --------
    >>> import evalnb, polars as pl, tempfile, pathlib
    >>> lab = evalnb.load(pl.DataFrame({"prompt": ["hi"], "actual": ["hello"]}))
    >>> path = lab.save(pathlib.Path(tempfile.mkdtemp()) / "lab.duckdb")
    >>> evalnb.open(path).equals(lab)
    True
    """
    target = Path(path)
    return Lab(read_tables(target), path=target)
