"""The human-calibration labeler: one item at a time, keyboard first, every decision stored.

Each decision is appended to the lab's DuckDB ``labels`` table (its own transaction) before
the widget moves on, and the batch being labelled is kept in the store's ``info`` table, so
a killed kernel or a closed browser loses nothing and reopening resumes at the first item
this reviewer has not labelled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np
import polars as pl

from evalnb.calibration.batches import Batches
from evalnb.calibration.recalibrate import calibrate, labelled_points, recalibrate
from evalnb.calibration.reliability import reliability
from evalnb.calibration.sampling import STRATEGIES
from evalnb.lab.verdicts import finite_or_none, is_finite
from evalnb.media.access import panel_media
from evalnb.team.queue import ReviewQueue
from evalnb.transforms.cases import run_steps
from evalnb.widgets.arrow import to_ipc
from evalnb.widgets.labeling import LabelingView
from evalnb.widgets.queue_labeler import QueueLabeler
from evalnb.widgets.relevance_labeler import RelevanceLabeler

if TYPE_CHECKING:
    from pathlib import Path

    from evalnb.lab.core import LabCore

__all__ = ["Labeler", "labeler"]


class Labeler(LabelingView):
    """Label a batch of (case, model) rows of one metric as pass/fail, from the keyboard.

    Keys: ``p``/``f`` pass/fail (``a``/``d`` agree/disagree with the metric's verdict in
    ``mode="agree"``), ``←``/``→`` move, ``n`` write a note, ``u`` undo the last label,
    ``b`` next batch once this one is done. After a batch the widget shows the score
    distribution with the human verdicts, the old and the recalibrated threshold with their
    intervals, and Cohen's κ; ``apply()`` (or the button) stores the new threshold.

    Synced traits
    -------------
    position : int
        Index of the item shown in the current batch.
    reviewer : str
        Who is labelling (stored with every label).
    mode : str
        ``"pass_fail"`` or ``"agree"``.

    Examples
    --------
    >>> import evalnb, polars as pl
    >>> lab = evalnb.load(pl.DataFrame({"prompt": ["a", "b", "c"], "expected": ["x", "y", "z"],
    ...                                 "actual": ["x", "q", "z"]}))
    >>> lab = evalnb.evaluate(lab, ["rouge"], progress=False)
    >>> w = evalnb.labeler(lab, "rouge", "rouge_l", reviewer="ann", n=3, strategy="random")
    >>> w.label("pass"); w.position
    1
    >>> lab.labels["verdict"].to_list()
    ['pass']
    """

    def __init__(
        self,
        lab: LabCore,
        evaluator: str,
        metric: str,
        *,
        reviewer: str,
        n: int = 20,
        strategy: str = "active",
        seed: int = 0,
        mode: str = "pass_fail",
        batch_id: str | None = None,
        blind: bool = True,
    ) -> None:
        if not reviewer:
            msg = "the labeler needs reviewer='<your name>': every label records who decided"
            raise ValueError(msg)
        if strategy not in STRATEGIES:
            msg = f"strategy must be one of {STRATEGIES}; got {strategy!r}"
            raise ValueError(msg)
        lab.metric_spec(evaluator, metric)  # a KeyError naming the known metrics
        self._lab, self._evaluator, self._metric = lab, evaluator, metric
        super().__init__(reviewer=reviewer, mode=mode, blind=blind)
        # The batches' rules live in calibration/; this widget drives them and draws.
        self._batches = Batches(
            lab,
            evaluator,
            metric,
            reviewer=reviewer,
            n=n,
            strategy=strategy,
            seed=seed,
            blind=blind,
        )
        self._batches.resume(batch_id)
        self.observe(lambda _c: self._show(), names=["position", "mode", "blind"])
        self.position = self._batches.first_open()
        self._show()

    # -- actions (Python API; the browser sends the same as messages) ----------------------
    def label(self, verdict: str, note: str | None = None) -> None:
        """Label the item on screen (``pass``/``fail``, or ``agree``/``disagree``) and move on."""
        item = self._item
        if item is None:
            msg = "there is no item to label: the batch is empty"
            raise ValueError(msg)
        verdict = self.resolve(verdict, item["passed"])
        self._batches.label(item, verdict, note)
        nxt = self._batches.next_open(self.position)
        if nxt == self.position:
            self._show()
        else:
            self.position = nxt

    def undo(self) -> None:
        """Retract this reviewer's latest label in the batch (stored as a retraction row)."""
        target = self._batches.undo()
        if target is None:
            self._error = "nothing to undo in this batch"
            return
        if target == self.position:
            self._show()
        else:
            self.position = target

    def go(self, position: int) -> None:
        """Show item ``position`` of the batch (clamped to the batch)."""
        self.position = max(0, min(position, self._batches.items.height - 1))

    def next_batch(self) -> None:
        """Draw the next batch (active sampling uses every label so far)."""
        self._batches.next()
        first = self._batches.first_open()
        if first == self.position:
            self._show()
        else:
            self.position = first

    def apply(self) -> None:
        """Store the recalibrated threshold as a new version (problems, eye, report follow)."""
        recalibrate(self._lab, self._evaluator, self._metric)
        self._show()

    @property
    def item(self) -> dict[str, Any] | None:
        """The item on screen: prompt, expected, answer, context, score, verdicts, note."""
        return None if self._item is None else dict(self._item)

    @property
    def remaining(self) -> int:
        """How many items of the current batch this reviewer has not labelled yet."""
        return int(self._progress["total"] - self._progress["done"])

    @property
    def batch(self) -> pl.DataFrame:
        """The current batch's items with this reviewer's verdicts so far."""
        return self._batches.table()

    # -- view ------------------------------------------------------------------------------
    def _show(self) -> None:
        with self.hold_sync():
            batch = self.batch
            done = int(batch["verdict"].is_not_null().sum())
            self._progress = {
                "done": done,
                "total": batch.height,
                "batch_id": self._batches.batch_id,
                "evaluator": self._evaluator,
                "metric": self._metric,
            }
            self.set_trait("_item", self.shown(self._detail(batch)) if batch.height else None)
            self._show_result(complete=done == batch.height)

    def _detail(self, batch: pl.DataFrame) -> dict[str, Any]:
        row = batch.row(self.position, named=True)
        key = (pl.col("case_id") == row["case_id"]) & (pl.col("model") == row["model"])
        spec = self._lab.metric_spec(self._evaluator, self._metric)
        # One row of each table: read alone from disk when the lab keeps them there.
        score = (
            self._lab.scan("scores")
            .filter(
                key
                & (pl.col("sample") == row["sample"])
                & (pl.col("evaluator") == self._evaluator)
                & (pl.col("metric") == self._metric)
            )
            .collect()
        )
        value = score["value"][0] if score.height else None
        thr = spec["threshold"]
        passed = (
            None
            if value is None or not is_finite(thr)
            else (value >= thr if spec["higher_is_better"] else value <= thr)
        )
        out = (
            self._lab.scan("outputs").filter(key & (pl.col("sample") == row["sample"])).collect()
        ).row(0, named=True)
        case = self._lab.cases.filter(pl.col("case_id") == row["case_id"]).row(0, named=True)
        return {
            "case_id": row["case_id"],
            "model": row["model"],
            "sample": row["sample"],
            "prompt": case["prompt"],
            "expected": case["expected"] or [],
            "actual": out["actual"],
            "context": out["context"] or [],
            # an agent's run: a reviewer judging tool_call_f1 must see the calls
            "steps": run_steps(self._lab, row["case_id"], row["model"], row["sample"]),
            # the image beside the answer: the reviewer sees what the judge was sent
            "media": panel_media(
                self._lab,
                [
                    ("case", case["media"]),
                    ("answer", out["media"]),
                    ("context", out["context_media"]),
                ],
                max_side=320,
            ),
            "value": finite_or_none(value),
            "threshold": finite_or_none(thr),
            "passed": passed,
            "metric_title": spec["title"] or self._metric,
            "human": row["verdict"],
            "note": row["note"],
        }

    def _show_result(self, *, complete: bool) -> None:
        points = labelled_points(self._lab, self._evaluator, self._metric)
        values = self._lab.metric_scores(self._evaluator, self._metric)["value"].drop_nulls()
        finite = values.filter(values.is_finite()).to_numpy()
        counts, edges = np.histogram(finite, bins=30) if finite.size else (np.zeros(0), np.zeros(1))
        self._bins = to_ipc(
            pl.DataFrame(
                {"low": edges[:-1], "high": edges[1:], "n": counts},
                schema={"low": pl.Float64, "high": pl.Float64, "n": pl.Int32},
            )
        )
        self._points = to_ipc(points.select("value", "human_pass"))
        if not complete:
            self.set_trait("_result", None)
            return
        try:
            cal = calibrate(self._lab, self._evaluator, self._metric, n_boot=500)
            result = cal.to_dict()
            # Bands of at least five labels: fewer make a line of noise.
            bands = reliability(
                self._lab, self._evaluator, self._metric, bins=max(1, min(6, cal.n_labels // 5))
            )
            self._result = {
                **result,
                "reliability": bands.select(
                    "score", "human_pass_rate", "ci_low", "ci_high", "n"
                ).to_dicts(),
            }
        except ValueError as err:  # too few labels or one verdict only: say so in the view
            self._result = {"message": str(err)}


@overload
def labeler(
    lab: LabCore,
    evaluator: str,
    metric: str,
    *,
    reviewer: str,
    n: int = 20,
    strategy: str = "active",
    seed: int = 0,
    mode: str = "pass_fail",
    batch_id: str | None = None,
    blind: bool | None = None,
) -> Labeler: ...


@overload
def labeler(
    lab: LabCore,
    evaluator: None = None,
    metric: None = None,
    *,
    task: Literal["relevance"],
    reviewer: str,
    k: int = 10,
    documents: object = None,
    blind: bool | None = None,
) -> RelevanceLabeler: ...


@overload
def labeler(
    lab: ReviewQueue,
    evaluator: None = None,
    metric: None = None,
    *,
    reviewer: str,
    mode: str = "pass_fail",
    outbox: str | Path | None = None,
    blind: bool | None = None,
) -> QueueLabeler: ...


def labeler(
    lab: LabCore | ReviewQueue,
    evaluator: str | None = None,
    metric: str | None = None,
    *,
    reviewer: str,
    task: str = "verdicts",
    n: int = 20,
    strategy: str = "active",
    seed: int = 0,
    mode: str = "pass_fail",
    batch_id: str | None = None,
    outbox: str | Path | None = None,
    blind: bool | None = None,
    k: int = 10,
    documents: object = None,
) -> Labeler | QueueLabeler | RelevanceLabeler:
    """Open the labeler on one metric of ``lab`` (see :class:`Labeler`), a review queue, or a pool.

    ``evalnb.labeler(queue, reviewer="ann")`` labels the items a
    :class:`~evalnb.ReviewQueue` reserves for ann, with the same keys; labels wait in a local
    ``outbox`` file while the server is away (:class:`~evalnb.widgets.queue_labeler.QueueLabeler`).

    ``evalnb.labeler(lab, task="relevance", reviewer="ann", k=10)`` grades the retrieved
    documents instead: every retriever's top ``k`` per case not yet graded by a person (a
    TREC pool), 0–3 with the keys ``0``–``3``, each grade committed to ``lab.qrels``
    (:class:`~evalnb.widgets.relevance_labeler.RelevanceLabeler`); ``documents``: where the
    passages' texts are (default: the lab's chunks).

    ``blind`` (the default for all): the metric's value and verdict (a judge's grade, for
    relevance) stay hidden until the item is labelled, so they cannot anchor the label that
    is to check them; recorded with the batch. ``blind=False`` shows them (``mode="agree"``
    needs it). A queue published blind (``evalnb.review(..., blind=True)``) never sent them.
    """
    if task not in ("verdicts", "relevance"):
        msg = f"task: expected 'verdicts' (a metric's pass/fail) or 'relevance' (documents 0-3); got {task!r}"
        raise ValueError(msg)
    if task == "relevance":
        if isinstance(lab, ReviewQueue) or evaluator is not None or metric is not None:
            msg = "labeler(lab, task='relevance', reviewer=...) grades a lab's pool: no queue, evaluator or metric"
            raise TypeError(msg)
        return RelevanceLabeler(
            lab, reviewer=reviewer, k=k, documents=documents, blind=True if blind is None else blind
        )
    if isinstance(lab, ReviewQueue):
        return QueueLabeler(lab, reviewer=reviewer, mode=mode, outbox=outbox, blind=blind)
    if evaluator is None or metric is None:
        msg = "labeler(lab, evaluator, metric, reviewer=...) needs the metric to label"
        raise TypeError(msg)
    return Labeler(
        lab,
        evaluator,
        metric,
        reviewer=reviewer,
        n=n,
        strategy=strategy,
        seed=seed,
        mode=mode,
        batch_id=batch_id,
        blind=mode != "agree" if blind is None else blind,
    )
