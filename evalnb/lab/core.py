"""The lab's core: a test lab's tables as Polars frames, persisted in one DuckDB file.

:class:`LabCore` is what every layer reads and writes: the tables, their store
(:class:`~evalnb.lab.synced.SyncedTables`), and the threshold and verdict methods that
need nothing but those tables. The public :class:`evalnb.Lab` (``evalnb/api/lab.py``)
subclasses it and adds the methods whose work lives higher up (leaderboards, calibration,
widgets) as one-line delegations, so this package imports no other evalnb package.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from typing import TYPE_CHECKING, Any, Self

import numpy as np
import polars as pl

from evalnb.lab.errors import EvalnbError
from evalnb.lab.parts import read_batches
from evalnb.lab.schema import SCHEMAS, TABLES
from evalnb.lab.synced import SyncedTables
from evalnb.lab.verdicts import current_thresholds, verdicts

if TYPE_CHECKING:
    from collections.abc import Iterator

    import pandas as pd

__all__ = ["LabCore"]

_KEYS = {
    "cases": ("case_id",),
    "outputs": ("case_id", "model", "sample"),
    "scores": ("case_id", "model", "sample", "evaluator", "metric"),
    "metrics": ("evaluator", "metric"),
    "models": ("model",),
    "info": ("key",),
}

BATCH_ROWS = 500_000
"""Rows per batch when a lab is gone through in batches: a few hundred MB of answers."""

# Catalogue and lab facts: the lab imported first keeps its entry (the same LLM may come
# with another connection key in a second H2O lab).
_FIRST_WINS = {"models", "info"}


class LabCore(SyncedTables):
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

    @property
    def cases(self) -> pl.DataFrame:
        """One row per test case."""
        return self._frame("cases")

    @property
    def outputs(self) -> pl.DataFrame:
        """One row per (case, model, sample): the model's answer, context, cost, duration."""
        return self._frame("outputs")

    @property
    def scores(self) -> pl.DataFrame:
        """Long table of evaluator results, one row per (output, evaluator, metric)."""
        return self._frame("scores")

    @property
    def metrics(self) -> pl.DataFrame:
        """One row per (evaluator, metric): range, direction, default threshold."""
        return self._frame("metrics")

    @property
    def labels(self) -> pl.DataFrame:
        """Append-only human verdicts."""
        return self._frame("labels")

    @property
    def steps(self) -> pl.DataFrame:
        """Agents' steps: messages and tool calls of each output, in order."""
        return self._frame("steps")

    @property
    def reference_calls(self) -> pl.DataFrame:
        """The tool calls each case should see, in order."""
        return self._frame("reference_calls")

    @property
    def thresholds(self) -> pl.DataFrame:
        """Threshold versions per (evaluator, metric)."""
        return self._frame("thresholds")

    @property
    def model_table(self) -> pl.DataFrame:
        """The model catalogue: name, source key and source metadata (JSON)."""
        return self._frame("models")

    @property
    def models(self) -> list[str]:
        """Model names: those of the catalogue first, then any others with outputs."""
        names = list(self.model_table["model"])
        seen = set(names)
        found = self.scan("outputs").select(pl.col("model").unique(maintain_order=True))
        for name in found.collect().get_column("model"):
            if name not in seen:
                names.append(name)
                seen.add(name)
        return names

    @property
    def info(self) -> dict[str, object]:
        """Lab-level facts: name, description, source format and what the source kept."""
        info = self._frame("info")
        return {k: json.loads(v) for k, v in zip(info["key"], info["value"], strict=True)}

    def rows(self) -> pl.DataFrame:
        """Join outputs with their cases: one row per (case, model, sample)."""
        return with_cases(self.outputs, self.cases)

    def row_batches(self, rows: int = BATCH_ROWS) -> Iterator[pl.DataFrame]:
        """Yield :meth:`rows` a batch of about ``rows`` rows at a time.

        Outputs kept on disk are read a file at a time, so a lab larger than memory is
        gone through with one batch in memory (``evaluate`` does this).
        """
        cases = self.cases
        if "outputs" in self._parts and "outputs" not in self._tables:
            assert self.path is not None  # parts belong to a store
            batches = read_batches(self.path, "outputs", self._parts["outputs"], rows)
        else:
            whole = self.outputs
            batches = (whole.slice(i, rows) for i in range(0, whole.height, rows))
        for batch in batches:
            yield with_cases(batch, cases)

    def metric_scores(self, evaluator: str, metric: str) -> pl.DataFrame:
        """Return one metric's scores, read alone from disk when the table is kept there."""
        return (
            self.scan("scores")
            .filter((pl.col("evaluator") == evaluator) & (pl.col("metric") == metric))
            .collect()
        )

    def outputs_of(self, rows: pl.DataFrame, *columns: str) -> pl.DataFrame:
        """Return ``columns`` of the outputs of ``rows`` (by case, model and sample) only.

        The outputs of a lab kept on disk are read for those rows alone.
        """
        keys = ["case_id", "model", "sample"]
        wanted = rows.lazy().select(keys).unique()
        return (
            self.scan("outputs")
            .select(*keys, *[c for c in columns if c not in keys])
            .join(wanted, on=keys, how="semi")
            .collect()
        )

    def to_pandas(self, table: str = "rows") -> pd.DataFrame:
        """Return a table (or the joined ``"rows"`` view) as a pandas DataFrame."""
        frame = self.rows() if table == "rows" else self.table(table)
        return frame.to_pandas()

    def equals(self, other: LabCore) -> bool:
        """Whether every table of ``other`` equals this lab's, row order included."""
        return all(self.table(n).equals(other.table(n)) for n in TABLES)

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
            mine, theirs = self.table(name), other.table(name)
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

    def set_threshold(
        self, evaluator: str, metric: str, value: float, *, source: str = "user"
    ) -> Self:
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
        row = pl.DataFrame(
            [
                {
                    "evaluator": evaluator,
                    "metric": metric,
                    "threshold": value,
                    "source": source,
                    "created_at": dt.datetime.now(dt.UTC),
                }
            ],
            schema=SCHEMAS["thresholds"],
        )
        self.append_rows("thresholds", row)
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
        return verdicts(self.scan("scores"), self.metrics, self.thresholds)

    def summary(self) -> pl.DataFrame:
        """Row counts per table."""
        return pl.DataFrame({"table": list(TABLES), "rows": [self.height(n) for n in TABLES]})

    def __repr__(self) -> str:
        name = self.info.get("name") or "unnamed"
        return (
            f"<{type(self).__name__} {name!s}: {self.cases.height} cases, {len(self.models)} models, "
            f"{self.height('outputs')} outputs, {self.height('scores')} scores, "
            f"{self.labels.height} labels>"
        )


def with_cases(outputs: pl.DataFrame, cases: pl.DataFrame) -> pl.DataFrame:
    aligned = _aligned(outputs, cases)
    if aligned is None:
        joined = outputs.join(cases, on="case_id", how="left", suffix="_case")
    else:
        # The left join's columns, gathered by position: no hashing of the case ids.
        extra = cases.drop("case_id")
        extra = extra.rename({c: f"{c}_case" for c in extra.columns if c in outputs.columns})
        joined = outputs.hstack(extra[aligned] if aligned.size else extra)
    # Both tables have ``extra`` and ``media``: each row says whose.
    return joined.rename(
        {
            "extra": "output_extra",
            "extra_case": "case_extra",
            "media": "answer_media",
            "media_case": "case_media",
        },
        strict=False,
    )


def _aligned(outputs: pl.DataFrame, cases: pl.DataFrame) -> np.ndarray | None:
    """Positions in ``cases`` of each output when the outputs follow the cases' order.

    Labs loaded from a file keep their outputs in their cases' order: one block of all the
    cases per model (or sample), or each case's answers side by side. Then the join with the
    cases is a gather by position (at 20k rows, 0.3 ms where the hash join took 3-7 ms). An
    empty array means the outputs are the cases exactly once (no gather at all); None: not
    in order, join.
    """
    n, m = cases.height, outputs.height
    if n == 0 or m == 0 or m % n:
        return None
    ids, keys, k = outputs.get_column("case_id"), cases.get_column("case_id"), m // n
    if all(ids.slice(at, n).equals(keys) for at in range(0, m, n)):
        return np.zeros(0, dtype=np.int64) if k == 1 else np.tile(np.arange(n), k)
    if all(ids.gather_every(k, offset=j).equals(keys) for j in range(k)):
        return np.repeat(np.arange(n), k)
    return None
