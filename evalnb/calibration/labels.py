"""Human labels: append-only rows, the verdict in force, agreement between reviewers.

The ``labels`` table is never updated in place. A reviewer's verdict on an item (one case,
model, sample, evaluator and metric) is their latest row for it; a row with a null verdict
retracts the earlier ones (undo). Several reviewers on one item vote: the majority wins and
a tie leaves the item without a human verdict (listed by :func:`disagreements`).
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from evalnb.lab.schema import SCHEMAS

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = [
    "BATCH_KEY",
    "ITEM",
    "VERDICTS",
    "add_label",
    "cohen_kappa",
    "current_labels",
    "disagreements",
    "human_verdicts",
    "label_row",
    "new_batch_id",
    "reviewer_agreement",
]

BATCH_KEY = "labeler_batch/"
"""The ``info`` key prefix of a labelling batch's record (its items, design, inclusion)."""
ITEM = ["case_id", "model", "sample", "evaluator", "metric"]
"""The columns that name one labelled item."""
VERDICTS = ("pass", "fail")


def label_row(
    item: dict[str, object],
    verdict: str | None,
    *,
    reviewer: str,
    note: str | None = None,
    batch_id: str | None = None,
) -> pl.DataFrame:
    """One ``labels`` row; ``verdict`` None retracts the reviewer's earlier label (undo)."""
    if verdict is not None and verdict not in VERDICTS:
        msg = f"a human verdict is one of {VERDICTS} (or None to retract); got {verdict!r}"
        raise ValueError(msg)
    if not reviewer:
        msg = "labels need a reviewer name (who decided); got an empty one"
        raise ValueError(msg)
    missing = [k for k in ITEM if k not in item]
    if missing:
        msg = f"a label names its item by {ITEM}; missing {missing} in {item!r}"
        raise ValueError(msg)
    return pl.DataFrame(
        [
            {
                **{k: item[k] for k in ITEM},
                "label_id": uuid.uuid4().hex,
                "verdict": verdict,
                "reviewer": reviewer,
                "note": note,
                "created_at": dt.datetime.now(dt.UTC),
                "batch_id": batch_id,
            }
        ],
        schema=SCHEMAS["labels"],
    )


def add_label(
    lab: LabCore,
    case_id: str,
    model: str,
    evaluator: str,
    metric: str,
    verdict: str | None,
    *,
    reviewer: str,
    note: str | None = None,
    sample: int = 0,
    batch_id: str | None = None,
) -> pl.DataFrame:
    """Record a human verdict (``"pass"``/``"fail"``; None retracts the last one).

    Appended to the ``labels`` table — and to the lab's store, committed, before this
    returns — never updated in place. Returns the new row.
    """
    item = {
        "case_id": case_id,
        "model": model,
        "sample": sample,
        "evaluator": evaluator,
        "metric": metric,
    }
    row = label_row(item, verdict, reviewer=reviewer, note=note, batch_id=batch_id)
    lab.append_rows("labels", row)
    return row


def new_batch_id() -> str:
    """Return a fresh id for one labelling batch."""
    return uuid.uuid4().hex[:12]


def current_labels(labels: pl.DataFrame, evaluator: str, metric: str) -> pl.DataFrame:
    """Each reviewer's verdict in force per item of one metric (retracted ones dropped)."""
    return (
        labels.filter((pl.col("evaluator") == evaluator) & (pl.col("metric") == metric))
        .with_row_index("_order")
        .sort("created_at", "_order")
        .group_by([*ITEM, "reviewer"], maintain_order=True)
        .last()
        .drop("_order")
        .filter(pl.col("verdict").is_not_null())
    )


def human_verdicts(labels: pl.DataFrame, evaluator: str, metric: str) -> pl.DataFrame:
    """One human verdict per item: ``human_pass`` by majority of reviewers (ties: null)."""
    votes = current_labels(labels, evaluator, metric)
    return (
        votes.group_by(ITEM, maintain_order=True)
        .agg(
            n_pass=(pl.col("verdict") == "pass").sum(),
            n_reviewers=pl.len(),
            last=pl.col("created_at").max(),
        )
        .with_columns(
            human_pass=pl.when(pl.col("n_pass") * 2 == pl.col("n_reviewers"))
            .then(None)
            .otherwise(pl.col("n_pass") * 2 > pl.col("n_reviewers"))
        )
    )


def cohen_kappa(a: np.ndarray, b: np.ndarray, weights: str | None = None) -> float:
    """Cohen's κ of two raters' labels on the same items (booleans or category codes).

    Observed agreement corrected for the agreement expected by chance from each side's own
    label rates, equal to scikit-learn's ``cohen_kappa_score``, degenerate cases included:
    NaN when there are no items, or when chance agreement is already 1 (both sides gave one
    and the same label to every item: a constant rater's agreement says nothing of its
    judgement, and must not read as a perfect 1.0). The one κ of evalnb: the review queue's
    agreement, the judge card, recalibration and graded relevance all call it.

    ``weights="linear"`` or ``"quadratic"`` gives Cohen's weighted κ for ordered grades
    (relevance 0–3): a disagreement costs its distance between the categories' positions
    in sorted order (squared for quadratic), as scikit-learn weighs them.
    """
    if weights not in (None, "linear", "quadratic"):
        msg = f"weights: expected None, 'linear' or 'quadratic'; got {weights!r}"
        raise ValueError(msg)
    a, b = np.asarray(a), np.asarray(b)
    if a.size == 0:
        return float("nan")
    _, codes = np.unique(np.concatenate([a, b]), return_inverse=True)
    k = int(codes.max()) + 1
    x, y = codes[: a.size], codes[a.size :]
    table = np.bincount(x * k + y, minlength=k * k).reshape(k, k) / a.size
    expected = np.outer(table.sum(axis=1), table.sum(axis=0))
    if weights is None:
        cost = 1.0 - np.eye(k)
    else:
        gap = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
        cost = gap if weights == "linear" else gap**2
    chance = float((cost * expected).sum())
    if chance <= 0.0:  # chance disagreement is nil: both sides constant and alike
        return float("nan")
    return 1.0 - float((cost * table).sum()) / chance


def reviewer_agreement(labels: pl.DataFrame, evaluator: str, metric: str) -> pl.DataFrame:
    """Cohen's κ for every two reviewers over the items both labelled."""
    votes = current_labels(labels, evaluator, metric).select(
        *ITEM, "reviewer", passed=pl.col("verdict") == "pass"
    )
    names = sorted(votes["reviewer"].unique().to_list())
    rows = []
    for i, ra in enumerate(names):
        for rb in names[i + 1 :]:
            both = votes.filter(pl.col("reviewer") == ra).join(
                votes.filter(pl.col("reviewer") == rb), on=ITEM
            )
            a, b = both["passed"].to_numpy(), both["passed_right"].to_numpy()
            rows.append(
                {
                    "reviewer_a": ra,
                    "reviewer_b": rb,
                    "n_items": both.height,
                    "agreement": float(np.mean(a == b)) if a.size else None,
                    "kappa": cohen_kappa(a, b) if a.size else None,
                }
            )
    return pl.DataFrame(
        rows,
        schema={
            "reviewer_a": pl.String,
            "reviewer_b": pl.String,
            "n_items": pl.Int64,
            "agreement": pl.Float64,
            "kappa": pl.Float64,
        },
    )


def disagreements(labels: pl.DataFrame, evaluator: str, metric: str) -> pl.DataFrame:
    """Items whose reviewers gave different verdicts, with who said what and their notes."""
    votes = current_labels(labels, evaluator, metric)
    split = (
        votes.group_by(ITEM).agg(pl.col("verdict").n_unique().alias("_n")).filter(pl.col("_n") > 1)
    )
    return (
        votes.join(split.drop("_n"), on=ITEM, how="semi")
        .select(*ITEM, "reviewer", "verdict", "note", "created_at")
        .sort([*ITEM, "reviewer"])
    )
