"""``evalnb.review``: publish a lab's rows of one metric as a review queue on PostgreSQL."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalnb.review.publish import publish

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore
    from evalnb.review.queue import ReviewQueue

__all__ = ["review"]


def review(
    lab: LabCore,
    dsn: str,
    name: str,
    *,
    evaluator: str,
    metric: str,
    per_item: int = 3,
    n: int | None = None,
    strategy: str = "uncertainty",
    lease_s: float = 600.0,
    seed: int = 0,
) -> ReviewQueue:
    """Publish rows of one metric for several reviewers to label from their own machines.

    Parameters
    ----------
    lab
        The lab whose scored rows are reviewed.
    dsn
        A PostgreSQL connection string (``"postgresql://lead@db.example/evalnb"``); the
        password, if any, is used to connect and kept nowhere else (a ``~/.pgpass`` file
        or ``PGPASSWORD`` keeps it out of notebooks).
    name
        The queue's name, unique on the server; reviewers open it with
        ``evalnb.ReviewQueue.open(dsn, name)``.
    evaluator, metric
        The metric whose verdicts the reviewers check.
    per_item
        How many distinct reviewers label each item (never more, under any concurrency).
    n
        How many rows to publish (all scored rows when None).
    strategy
        ``"uncertainty"`` (nearest the pass/fail boundary), ``"random"`` or
        ``"stratified"`` (one per score quantile bin); random and stratified items keep
        their inclusion probabilities, so PPI-corrected pass rates can use the labels.
    lease_s
        How long a reviewer holds an item before it returns to the queue.
    seed
        The sampling seed.

    Returns
    -------
    ReviewQueue
        The published queue (``queue.next(reviewer)``, ``queue.submit(...)``, ...).
    """
    return publish(
        lab,
        dsn,
        name,
        evaluator=evaluator,
        metric=metric,
        per_item=per_item,
        n=n,
        strategy=strategy,
        lease_s=lease_s,
        seed=seed,
    )
