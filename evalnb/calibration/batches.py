"""A reviewer's labelling batches of one metric: drawn, recorded, resumed, labelled, undone.

A batch is a seeded :func:`~evalnb.calibration.sampling.calibration_sample` of the lab's
scored rows, recorded in the lab's ``info`` table (its items, how each was drawn, whether
the reviewer labelled blind) before the first label, so it survives a restart as the labels
do. :class:`Batches` holds the rules the labeler widget (:mod:`evalnb.widgets.labeler`)
follows and nothing of its view:

- a reviewer opening the labeler again resumes their latest unfinished batch of the metric;
- an item this reviewer has a verdict on, wherever it was made, is never asked again;
- undo retracts this reviewer's latest label of the batch (a retraction row, never a delete).
"""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from evalnb.calibration.labels import BATCH_KEY, add_label, current_labels, new_batch_id
from evalnb.calibration.sampling import calibration_sample

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = ["Batches", "batch_items"]

_KEYS = ["case_id", "model", "sample"]


def batch_items(record: dict[str, Any]) -> pl.DataFrame:
    """Return a batch record's items (case, model, sample) in their order."""
    return pl.DataFrame(
        record["items"],
        schema={"case_id": pl.String, "model": pl.String, "sample": pl.Int64},
        orient="row",
    )


class Batches:
    """One reviewer's batches of one metric of ``lab`` (see the module's description)."""

    def __init__(
        self,
        lab: LabCore,
        evaluator: str,
        metric: str,
        *,
        reviewer: str,
        n: int,
        strategy: str,
        seed: int,
        blind: bool,
    ) -> None:
        self.lab, self.evaluator, self.metric, self.reviewer = lab, evaluator, metric, reviewer
        self.n, self.strategy, self.seed, self.blind = n, strategy, seed, blind
        self.batch_id = ""
        self.items = pl.DataFrame(
            schema={"case_id": pl.String, "model": pl.String, "sample": pl.Int64}
        )

    def records(self) -> list[dict[str, Any]]:
        """Every batch recorded in the lab (any reviewer, any metric)."""
        info = self.lab.table("info").filter(pl.col("key").str.starts_with(BATCH_KEY))
        return [json.loads(v) for v in info["value"]]

    def resume(self, batch_id: str | None = None) -> None:
        """Open ``batch_id``, else this reviewer's latest unfinished batch, else a new one."""
        batches = self.records()
        if batch_id is not None:
            found = [b for b in batches if b["batch_id"] == batch_id]
            if not found:
                known = [b["batch_id"] for b in batches]
                msg = f"no labelling batch {batch_id!r} in this lab; known: {known}"
                raise KeyError(msg)
            self.batch_id, self.items = batch_id, batch_items(found[0])
            return
        mine = [b for b in batches if self._mine(b)]
        if mine:
            last = max(mine, key=lambda b: b["created_at"])
            items = batch_items(last)
            if self.labelled(items).sum() < items.height:
                self.batch_id, self.items = last["batch_id"], items
                return
        self.draw(len(mine))

    def next(self) -> None:
        """Draw this reviewer's next batch (active sampling uses every label so far)."""
        self.draw(len([b for b in self.records() if b["reviewer"] == self.reviewer]))

    def draw(self, number: int) -> None:
        """Draw and record batch ``number`` of this reviewer (its seed follows the number)."""
        rows = calibration_sample(
            self.lab,
            self.evaluator,
            self.metric,
            n=self.n,
            strategy=self.strategy,
            seed=self.seed + number,
        )
        batch_id = new_batch_id()
        record = {
            "batch_id": batch_id,
            "reviewer": self.reviewer,
            "evaluator": self.evaluator,
            "metric": self.metric,
            "strategy": self.strategy,
            "blind": self.blind,  # whether the reviewer saw the metric's verdict first
            "created_at": dt.datetime.now(dt.UTC).isoformat(),
            "items": rows.select(_KEYS).rows(),
            # how each row came to be asked: corrected estimates weight by it
            "design": rows["design"].to_list(),
            "inclusion": rows["inclusion"].to_list(),
        }
        info = pl.concat(
            [
                self.lab.table("info"),
                pl.DataFrame({"key": [BATCH_KEY + batch_id], "value": [json.dumps(record)]}),
            ]
        )
        self.lab.replace_tables({"info": info})  # the batch survives a restart like the labels
        self.batch_id, self.items = batch_id, batch_items(record)

    def labelled(self, items: pl.DataFrame | None = None) -> np.ndarray:
        """Which items this reviewer has a verdict on (wherever it was made: never ask twice)."""
        items = self.items if items is None else items
        return (
            items.join(
                self._verdicts().select(*_KEYS, "verdict"),
                on=_KEYS,
                how="left",
                maintain_order="left",
            )["verdict"]
            .is_not_null()
            .to_numpy()
        )

    def first_open(self) -> int:
        """Return the position of the first item not labelled yet (the last one when all are)."""
        open_ = np.flatnonzero(~self.labelled())
        return int(open_[0]) if open_.size else max(0, self.items.height - 1)

    def next_open(self, after: int) -> int:
        """Return the first unlabelled position after ``after`` (else the first, else it)."""
        done = self.labelled()
        later = [i for i in range(self.items.height) if not done[i] and i > after]
        anywhere = [i for i in range(self.items.height) if not done[i]]
        return (later or anywhere or [after])[0]

    def table(self) -> pl.DataFrame:
        """Return the batch's items with this reviewer's verdicts and notes so far."""
        return self.items.join(
            self._verdicts().select(*_KEYS, "verdict", "note"),
            on=_KEYS,
            how="left",
            maintain_order="left",
        )

    def label(self, item: dict[str, Any], verdict: str, note: str | None) -> None:
        """Append this reviewer's verdict on ``item`` (committed to the store)."""
        add_label(
            self.lab,
            item["case_id"],
            item["model"],
            self.evaluator,
            self.metric,
            verdict,
            reviewer=self.reviewer,
            note=note or None,
            sample=item["sample"],
            batch_id=self.batch_id,
        )

    def undo(self) -> int | None:
        """Retract this reviewer's latest label of the batch; its position (None: nothing)."""
        mine = self._verdicts().filter(pl.col("batch_id") == self.batch_id).sort("created_at")
        if mine.is_empty():
            return None
        last = mine.row(-1, named=True)
        add_label(
            self.lab,
            last["case_id"],
            last["model"],
            self.evaluator,
            self.metric,
            None,
            reviewer=self.reviewer,
            note="undo",
            sample=last["sample"],
            batch_id=self.batch_id,
        )
        return (
            self.items.select(_KEYS).rows().index((last["case_id"], last["model"], last["sample"]))
        )

    def _verdicts(self) -> pl.DataFrame:
        return current_labels(self.lab.labels, self.evaluator, self.metric).filter(
            pl.col("reviewer") == self.reviewer
        )

    def _mine(self, record: dict[str, Any]) -> bool:
        who = (record["reviewer"], record["evaluator"], record["metric"])
        return who == (self.reviewer, self.evaluator, self.metric)
