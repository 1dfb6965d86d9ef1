"""Publish a lab's rows of one metric as a review queue, and pull its labels back.

:func:`review` (``evalnb.review``) draws the rows with the labeler's sampling (``random``, ``stratified`` or
``uncertainty`` — nearest the pass/fail boundary), gives each item everything a reviewer
needs (prompt, expected answer, the model's answer, its contexts, the agent's steps, the
metric's value and threshold) and records how each was drawn, so PPI-corrected pass rates
can weight the labels later. :func:`pulled_labels` turns the queue's labels into rows of
the lab's ``labels`` table under a stated rule.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from typing import TYPE_CHECKING, Any

import polars as pl

from evalnb.calibration.labels import BATCH_KEY, new_batch_id
from evalnb.calibration.sampling import calibration_sample
from evalnb.lab.schema import SCHEMAS
from evalnb.team.connection import ReviewError, check_name, connect, payload_json, safe_dsn
from evalnb.team.queue import ReviewQueue
from evalnb.transforms.cases import run_steps

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = ["RULES", "STRATEGIES", "pull_labels", "pulled_labels", "review"]

# The queue's names for the labeler's strategies ("uncertainty" is its "active").
STRATEGIES = {
    "uncertainty": "active",
    "active": "active",
    "random": "random",
    "stratified": "stratified",
}
RULES = ("majority", "adjudicated", "all")
# What a pulled label keeps of the queue's label rows, whichever rule chose it.
_CHOSEN = (
    "item_id",
    "case_id",
    "model",
    "sample",
    "reviewer",
    "label",
    "note",
    "label_no",
    "created_at",
)
# Characters of one text a reviewer is sent (the rest is named, not sent): a reviewer
# reads an answer, not megabytes, and a row of the server's jsonb stays small.
MAX_TEXT = 100_000
MAX_LEASE_S = 7 * 86_400.0  # the longest lease: a reviewer gone holds an item at most a week


def _cut(text: str | None) -> str | None:
    if text is None or len(text) <= MAX_TEXT:
        return text
    return text[:MAX_TEXT] + f"… ({len(text) - MAX_TEXT:,} more characters not shown)"


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
    blind: bool = True,
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
    blind
        Leave the metric's value, threshold and verdict out of what reviewers are sent (the
        default): labels that calibrate a metric must not be anchored by it, and what the
        server never holds, no reviewer's SQL can read. Recorded with the queue and with
        the labels pulled from it.

    Returns
    -------
    ReviewQueue
        The published queue (``queue.next(reviewer)``, ``queue.submit(...)``, ...).
    """
    name = check_name(name, "queue name")
    if strategy not in STRATEGIES:
        msg = f"strategy must be one of {sorted(STRATEGIES)}; got {strategy!r}"
        raise ValueError(msg)
    if isinstance(per_item, bool) or not isinstance(per_item, int) or not 1 <= per_item <= 100:
        msg = f"per_item is how many reviewers label each item (1 to 100); got {per_item!r:.40}"
        raise ValueError(msg)
    if not isinstance(lease_s, int | float) or not 0 < lease_s <= MAX_LEASE_S:
        msg = (
            f"lease_s is a lease's length in seconds (more than 0, at most {MAX_LEASE_S:,.0f}, "
            f"a week); got {lease_s!r:.40}"
        )
        raise ValueError(msg)
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        msg = f"n is how many rows to publish (1 or more, or None for all); got {n!r:.40}"
        raise ValueError(msg)
    scored = lab.scores.filter(
        (pl.col("evaluator") == evaluator) & (pl.col("metric") == metric)
    ).height
    if not scored:
        msg = f"the lab has no scores of {evaluator}.{metric}: evaluate it before a review"
        raise ReviewError(msg)
    rows = calibration_sample(
        lab, evaluator, metric, n=n or scored, strategy=STRATEGIES[strategy], seed=seed
    )
    items = [
        _item(lab, row, priority, blind=blind)
        for priority, row in enumerate(rows.iter_rows(named=True))
    ]
    pool = connect(dsn)
    where = safe_dsn(dsn)
    batch_id = new_batch_id()
    spec = {
        "evaluator": evaluator,
        "metric": metric,
        "strategy": strategy,
        "seed": seed,
        "blind": bool(blind),
    }
    try:
        with pool.connection() as conn:
            exists = conn.execute("SELECT 1 FROM evalnb.queues WHERE name = %s", (name,)).fetchone()
            if exists:
                msg = (
                    f"a review queue named {name!r} exists at {where}; open it with "
                    "evalnb.ReviewQueue.open(dsn, name) or choose another name"
                )
                raise ReviewError(msg)
            conn.execute(
                "INSERT INTO evalnb.queues (name, evaluator, metric, per_item, lease_s, "
                "strategy, batch_id, spec) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                (
                    name,
                    evaluator,
                    metric,
                    per_item,
                    float(lease_s),
                    strategy,
                    batch_id,
                    json.dumps(spec),
                ),
            )
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO evalnb.items (queue, item_id, case_id, model, sample, "
                    "priority, design, inclusion, payload) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s::jsonb)",
                    [(name, *item) for item in items],
                )
    except Exception:
        pool.close()
        raise
    return ReviewQueue(pool, name, where)


def _item(lab: LabCore, row: dict[str, Any], priority: int, *, blind: bool) -> tuple[object, ...]:
    key = (row["case_id"], row["model"], row["sample"])
    content: dict[str, Any] = {
        "prompt": _cut(row["prompt"]),
        "expected": [_cut(e) for e in row["expected"] or []],
        "answer": _cut(row["actual"]),
        "contexts": [_cut(c) for c in row["context"] or []],
        "steps": run_steps(lab, *key),
    }
    if not blind:
        content |= {"value": row["value"], "threshold": row["threshold"], "passed": row["passed"]}
    return (
        priority,
        *key,
        priority,
        row["design"],
        row["inclusion"],
        payload_json(content),
    )


def pull_labels(lab: LabCore, queue: ReviewQueue, rule: str = "majority") -> pl.DataFrame:
    """Write a review queue's labels into ``lab``'s ``labels`` table (and store, committed).

    ``rule``: ``"majority"`` (one label per item, the reviewers' majority; ties give none)
    or ``"all"`` (every reviewer's label; the lab's own majority rule then decides); under
    either, an item the lead adjudicated carries the lead's label alone, and no later pull
    retracts it (``"adjudicated"`` names the same as ``"majority"``). The rule and the queue
    are recorded with the batch, and how each item was drawn, so ``recalibrate``, the
    PPI-corrected pass rates, judge alignment and the calibration bundle use the labels
    unchanged. The queue speaks in the lab with one voice, the latest pull's: pulling again
    (with this rule or another) adds what is new and retracts what the rule no longer gives
    (a majority an edit turned into a tie, another rule's labels). Returns the rows added
    (retractions have a null verdict).
    """
    rows, (key, record) = pulled_labels(lab, queue, rule)
    info = lab.table("info")
    info = pl.concat(
        [info.filter(pl.col("key") != key), pl.DataFrame({"key": [key], "value": [record]})]
    )
    # The batch record first: labels without it would count as drawn outside a batch.
    lab.replace_tables({"info": info})
    if rows.height:
        lab.append_rows("labels", rows)
    return rows


def pulled_labels(
    lab: LabCore, queue: ReviewQueue, rule: str
) -> tuple[pl.DataFrame, tuple[str, str]]:
    """Return the ``labels`` rows that make the lab hold the queue's labels under ``rule``.

    ``all``: every reviewer's label in force. ``majority``: one label per item, the
    reviewers' majority (a tie gives none). Under every rule an item the lead adjudicated
    carries the lead's label alone: an adjudication is final, and no later pull retracts it
    (``adjudicated``, the lead's label where there is one and else the majority, is what
    ``majority`` now gives; the name stays). Only pass/fail labels go to a lab.

    The queue speaks in the lab with one voice, the latest pull's: the rows returned add
    what the rule gives now and is not in force yet, and **retract** (a null verdict) what
    an earlier pull put there and the rule no longer gives — a tie that a reviewer's edit
    made, a majority or reviewers' labels replaced by an adjudication, another rule's labels. Pulling again with
    nothing changed adds nothing.
    """
    if rule not in RULES:
        msg = f"rule must be one of {RULES}; got {rule!r}"
        raise ValueError(msg)
    votes = queue.labels()
    numeric = votes.filter(~pl.col("label").is_in(["pass", "fail"]))
    if numeric.height:
        msg = (
            f"queue {queue.name!r} holds labels that are numbers ({numeric.height}); a lab's "
            "labels are pass or fail"
        )
        raise ReviewError(msg)
    _check_cases(lab, queue)
    wanted = _by_rule(votes, queue.name, rule).select(
        "case_id", "model", "sample", "reviewer", "label", "note", "created_at"
    )
    item = ["case_id", "model", "sample", "reviewer"]
    ours = lab.labels.filter(
        (pl.col("batch_id") == queue.batch_id)
        & (pl.col("evaluator") == queue.evaluator)
        & (pl.col("metric") == queue.metric)
    )
    in_force = (
        ours.with_row_index("_order")
        .sort("created_at", "_order", nulls_last=False)
        .group_by(item, maintain_order=True)
        .last()
        .filter(pl.col("verdict").is_not_null())
        .select(*item, held=pl.col("verdict"))
    )
    add = wanted.join(in_force, on=item, how="left").filter(
        pl.col("held").is_null() | (pl.col("held") != pl.col("label"))
    )
    retract = (
        in_force.join(wanted.select(item), on=item, how="anti")
        .with_columns(
            label=pl.lit(None, pl.String),
            note=pl.lit(f"retracted: no longer the queue's label under rule {rule!r}"),
            created_at=pl.lit(None, pl.Datetime("us", "UTC")),
        )
        .select(wanted.columns)
    )
    # Every row is stamped with the pull's time, so it follows whatever the lab holds of
    # its item (a label re-added after a retraction must come after it); the queue's
    # history keeps when each reviewer labelled.
    now = dt.datetime.now(dt.UTC)
    chosen = pl.concat([add.select(wanted.columns), retract]).with_columns(
        created_at=pl.lit(now, pl.Datetime("us", "UTC"))
    )
    rows = pl.DataFrame(
        {
            "label_id": [uuid.uuid4().hex for _ in range(chosen.height)],
            "case_id": chosen["case_id"],
            "model": chosen["model"],
            "sample": chosen["sample"],
            "evaluator": [queue.evaluator] * chosen.height,
            "metric": [queue.metric] * chosen.height,
            "verdict": chosen["label"],
            "reviewer": chosen["reviewer"],
            "note": chosen["note"],
            "created_at": chosen["created_at"],
            "batch_id": [queue.batch_id] * chosen.height,
        },
        schema=SCHEMAS["labels"],
    )
    items = queue.items()
    record = {
        "batch_id": queue.batch_id,
        "queue": queue.name,
        "rule": rule,
        "evaluator": queue.evaluator,
        "metric": queue.metric,
        "strategy": queue.strategy,
        "blind": bool(queue.spec.get("blind", False)),
        "reviewer": f"queue {queue.name}",
        "created_at": dt.datetime.now(dt.UTC).isoformat(),
        "items": items.select("case_id", "model", "sample").rows(),
        "design": items["design"].to_list(),
        "inclusion": items["inclusion"].to_list(),
    }
    return rows, (BATCH_KEY + queue.batch_id, json.dumps(record))


def _by_rule(votes: pl.DataFrame, queue: str, rule: str) -> pl.DataFrame:
    """Return the labels ``rule`` gives: one row per item and voice (reviewer, majority or lead)."""
    reviewed = votes.filter(pl.col("kind") == "review")
    # The lead's adjudication is the item's final word under every rule: a later pull with
    # another rule never takes it back (it did, once, and the lead's decision was lost).
    lead = (
        votes.filter(pl.col("kind") == "adjudication")
        .sort("label_no")
        .group_by("item_id", maintain_order=True)
        .last()
        .select(_CHOSEN)
    )
    settled = pl.col("item_id").is_in(lead["item_id"].implode())
    if rule == "all":
        return pl.concat([reviewed.filter(~settled).select(_CHOSEN), lead])
    majority = (
        reviewed.group_by("item_id", "case_id", "model", "sample")
        .agg(
            n_pass=(pl.col("label") == "pass").sum(),
            n=pl.len(),
            label_no=pl.col("label_no").max(),
            created_at=pl.col("created_at").max(),
        )
        .filter(pl.col("n_pass") * 2 != pl.col("n"))
        .with_columns(
            label=pl.when(pl.col("n_pass") * 2 > pl.col("n"))
            .then(pl.lit("pass"))
            .otherwise(pl.lit("fail")),
            reviewer=pl.lit(f"{queue} (majority)"),
            note=pl.format("majority of {} reviewers", pl.col("n")),
        )
        .select(_CHOSEN)
    )
    return pl.concat([majority.filter(~settled), lead])


def _check_cases(lab: LabCore, queue: ReviewQueue) -> None:
    """Refuse to pull into a lab that lacks the queue's cases (labels would be orphans)."""
    items = queue.items().select("case_id", "model", "sample").unique()
    have = lab.outputs.select("case_id", "model", "sample").unique()
    missing = items.join(have, on=["case_id", "model", "sample"], how="anti")
    if missing.height:
        shown = ", ".join(f"{r[0]}/{r[1]}" for r in missing.head(3).iter_rows())
        msg = (
            f"the lab lacks {missing.height} of the {items.height} answers queue "
            f"{queue.name!r} reviews (e.g. {shown}): pull into the lab the queue was "
            "published from"
        )
        raise ReviewError(msg)
