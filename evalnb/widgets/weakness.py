"""The weakness grid widget: a metric by topic, by question type, and on their bivariate grid.

The kernel computes every table (:mod:`evalnb.transforms`) and sends Arrow IPC bytes; the
browser draws, shows n / mean / CI on hover and reports the clicked cell back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl
import traitlets

from evalnb.lab.verdicts import finite_or_none
from evalnb.transforms import (
    cell_dots,
    grid_cells,
    restrict,
    univariate,
    weakness_index,
    weaknesses,
)
from evalnb.widgets.arrow import to_ipc
from evalnb.widgets.base import EvalWidget

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = ["Weakness", "weakness"]


class Weakness(EvalWidget):
    """Weakness detection for one metric (seed 003 "Weakness detection").

    Two univariate charts (mean with its 95 % interval per topic and per question type,
    threshold marked) and the bivariate grid: one cell per (topic, question type) coloured
    by mean score. ``axes`` changes the two axes: any text column of the cases, or
    ``"tool"`` (the tools an agent's run called: a run counts under each) or ``"retrieval"``
    (whether the answer's retriever brought a relevant document into its top 10), e.g.
    ``axes=("tool", "topic")``. Cells are coloured with the cases as dots coloured by score; cells with fewer than
    ``min_n`` cases are hatched. Hover a cell for n, mean and CI; click it to select its
    cases (``selected_cell`` and :meth:`selection`). Weak cells — whole interval on the
    failing side of the threshold — are listed under the grid.

    Synced traits
    -------------
    selected_cell : list of str
        ``[row value, column value]`` of the clicked cell (topic and question type by
        default), or empty.
    models : list of str
        Models whose rows are shown (empty: all).

    Examples
    --------
    >>> import evalnb, polars as pl
    >>> lab = evalnb.load(pl.DataFrame({"prompt": ["a", "b"], "expected": ["x y", "y"],
    ...                                 "actual": ["x y", "z"], "topic": ["t", "t"]}))
    >>> w = evalnb.weakness(evalnb.evaluate(lab, ["rouge"], progress=False), "rouge", "rouge_l")
    >>> w.selected_cell = ["t", "(none)"]
    >>> w.selection().height
    2
    """

    _bundle = "weakness"
    selected_cell = traitlets.List(traitlets.Unicode()).tag(sync=True)
    """``[topic, question_type]`` of the selected cell (empty: none)."""
    models = traitlets.List(traitlets.Unicode()).tag(sync=True)
    """Models shown (empty: all of them)."""
    _cells = traitlets.Bytes(b"").tag(sync=True)
    _topics = traitlets.Bytes(b"").tag(sync=True)
    _qtypes = traitlets.Bytes(b"").tag(sync=True)
    _dots = traitlets.Bytes(b"").tag(sync=True)
    _weak = traitlets.Bytes(b"").tag(sync=True)
    _meta = traitlets.Dict().tag(sync=True)

    def __init__(
        self,
        lab: LabCore,
        evaluator: str,
        metric: str,
        *,
        min_n: int = 5,
        max_dots: int = 3000,
        models: list[str] | None = None,
        axes: tuple[str, str] = ("topic", "question_type"),
    ) -> None:
        self._lab, self._evaluator, self._metric = lab, evaluator, metric
        self._axes = (axes[0], axes[1])
        self._min_n, self._max_dots = min_n, max_dots
        super().__init__(models=list(models or []))
        self.observe(lambda _c: self.refresh(), names=["models"])
        self.refresh()

    @traitlets.validate("selected_cell")
    def _valid_cell(self, proposal: dict[str, Any]) -> list[str]:
        cell = list(proposal["value"])
        if not cell:
            return cell
        known = set(self._grid.select("topic", "question_type").iter_rows())
        if len(cell) != 2 or tuple(cell) not in known:
            msg = f"selected_cell is [] or [topic, question_type] of a grid cell; got {cell!r}"
            raise traitlets.TraitError(msg)
        return cell

    def refresh(self, lab: LabCore | None = None) -> None:
        """Recompute every table (new thresholds, or new scores/topics with ``lab``)."""
        if lab is not None or not hasattr(self, "_base"):
            self._lab = lab or self._lab
            # The join of scores to topics is the costly step: done once per lab, then
            # model filters and thresholds are cut from it.
            self._base = weakness_index(
                self._lab, self._evaluator, self._metric, min_n=self._min_n, axes=self._axes
            )
        spec = self._lab.metric_spec(self._evaluator, self._metric)
        thr = spec["threshold"]
        self._index = restrict(
            self._base, models=list(self.models) or None, threshold=finite_or_none(thr)
        )
        self._grid = grid_cells(self._index)
        with self.hold_sync():
            self._cells = to_ipc(self._grid)
            self._topics = to_ipc(univariate(self._index, "topic"))
            self._qtypes = to_ipc(univariate(self._index, "question_type"))
            self._dots = to_ipc(cell_dots(self._index, max_dots=self._max_dots))
            self._weak = to_ipc(weaknesses(self._index))
            self._meta = {
                "evaluator": self._evaluator,
                "metric": self._metric,
                "title": spec["title"] or self._metric,
                "threshold": self._index.threshold,
                "higher_is_better": self._index.higher_is_better,
                "min_n": self._min_n,
                "n": self._index.rows.height,
                "axes": [_label(a) for a in self._axes],
            }
            if self.selected_cell and tuple(self.selected_cell) not in set(
                self._grid.select("topic", "question_type").iter_rows()
            ):
                self.selected_cell = []

    def weaknesses(self) -> pl.DataFrame:
        """Return the weak cells (worst first), as listed under the grid."""
        return weaknesses(self._index)

    def selection(self) -> pl.DataFrame:
        """Return the selected cell's rows with prompt and answer (every row when none)."""
        rows = self._index.rows
        if self.selected_cell:
            topic, qtype = self.selected_cell
            rows = rows.filter((pl.col("topic") == topic) & (pl.col("question_type") == qtype))
        keys = ["case_id", "model", "sample"]
        return rows.join(
            self._lab.cases.select("case_id", "prompt"), on="case_id", how="left"
        ).join(self._lab.outputs_of(rows, "actual"), on=keys, how="left")


def weakness(
    lab: LabCore,
    evaluator: str,
    metric: str,
    *,
    min_n: int = 5,
    max_dots: int = 3000,
    models: list[str] | None = None,
    axes: tuple[str, str] = ("topic", "question_type"),
) -> Weakness:
    """Open the weakness grid for one metric of ``lab`` (see :class:`Weakness`)."""
    return Weakness(
        lab, evaluator, metric, min_n=min_n, max_dots=max_dots, models=models, axes=axes
    )


def _label(axis: str) -> str:
    """Name an axis for people: ``question_type`` → "question type"."""
    return axis.replace("_", " ")
