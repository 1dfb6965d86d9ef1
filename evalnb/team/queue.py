"""A review queue on a PostgreSQL server: items reserved for a lease, exactly N reviewers each.

The queue's state lives in the server, so reviewers work from their own machines and
kernels. The guarantees are the database's, not the client's:

- **At most ``per_item`` reviewers hold or labelled an item, under any concurrency.** An
  assignment of item *i* is written only by a transaction holding *i*'s row lock
  (``SELECT ... FOR UPDATE SKIP LOCKED``: reviewers asking at once take different items;
  only when every open item is locked that instant does a reviewer wait, for one lock,
  so "nothing left" is never said of an item that was merely busy). After the lock is taken the holders are counted again in a new statement,
  whose snapshot (READ COMMITTED) sees every assignment committed by an earlier lock holder;
  the count of the first, lock-free scan only narrows the candidates.
- **A reviewer never gets an item twice**: an assignment is keyed by (queue, item, reviewer).
- **An expired lease returns the item**: leases past ``lease_until`` are not counted; the
  late reviewer may still submit while the item has room, and is told plainly when not.
- **Nothing acknowledged is lost or doubled**: a label is committed before ``submit``
  returns; each carries a key (the client's idempotency key, e.g. from an outbox), unique
  in the table, so a resend after a lost reply is a no-op. Labels are never updated:
  an edit is a new row, and :meth:`ReviewQueue.history` shows who changed what when.
- **Blind review**: :meth:`ReviewQueue.next` gives the item's content only, never the others'
  labels.

No password or other secret of the connection string is kept anywhere but the connection
pool: not in the queue's tables, the lab, a repr or an error.
"""

from __future__ import annotations

import math
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

import polars as pl

from evalnb.team.agreement import agreement_table
from evalnb.team.connection import (
    ReviewError,
    ReviewUnavailable,
    check_name,
    clean_text,
    connect,
    guarded,
    payload_json,
    safe_dsn,
)

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg_pool import ConnectionPool

__all__ = [
    "Remaining",
    "ReviewError",
    "ReviewItem",
    "ReviewQueue",
    "ReviewUnavailable",
    "check_name",
    "payload_json",
    "safe_dsn",
]

MAX_NOTE = 20_000  # characters of a note
OVERALL = "(all reviewers)"
"""The ``reviewer`` of :meth:`ReviewQueue.progress`'s last row, the whole queue's."""
_MAX_WAIT_S = 86_400.0  # the longest next(wait=...)
_POLL_S = 1.0  # how often next(wait=...) looks again when no lease end is known

# For one reviewer: items open to them now, items others hold on leases that may end (and
# could then come to them), and the seconds until the first of those leases ends.
_REMAINING = """
WITH mine AS (
  SELECT i.item_id, evalnb.holders(i.queue, i.item_id, %(r)s) AS held,
         (SELECT min(a.lease_until) FROM evalnb.assignments a
          WHERE a.queue = i.queue AND a.item_id = i.item_id AND a.state = 'leased'
            AND a.lease_until > clock_timestamp()) AS first_end
  FROM evalnb.items i
  WHERE i.queue = %(q)s AND NOT i.done
    AND NOT EXISTS (SELECT 1 FROM evalnb.assignments a
                    WHERE a.queue = i.queue AND a.item_id = i.item_id AND a.reviewer = %(r)s
                      AND (a.state <> 'leased' OR a.lease_until > clock_timestamp()))
)
SELECT count(*) FILTER (WHERE held < %(n)s),
       count(*) FILTER (WHERE held >= %(n)s AND first_end IS NOT NULL),
       extract(epoch FROM min(first_end) FILTER (WHERE held >= %(n)s) - clock_timestamp())
FROM mine
"""
_SCAN = """
SELECT i.item_id FROM evalnb.items i
WHERE i.queue = %(q)s AND NOT i.done
  AND NOT EXISTS (SELECT 1 FROM evalnb.assignments a
                  WHERE a.queue = i.queue AND a.item_id = i.item_id AND a.reviewer = %(r)s
                    AND (a.state <> 'leased' OR a.lease_until > clock_timestamp()))
  AND (SELECT count(*) FROM evalnb.assignments a
       WHERE a.queue = i.queue AND a.item_id = i.item_id
         AND (a.state = 'submitted'
              OR (a.state = 'leased' AND a.lease_until > clock_timestamp()))) < %(n)s
ORDER BY i.priority, i.item_id
LIMIT 1
FOR UPDATE OF i"""
# Count the item's other holders and, when there is room, reserve it and return its content:
# one statement, one round trip (the count is this statement's, after the lock was taken).
_RESERVE = """
WITH held AS (
  SELECT count(*) AS n FROM evalnb.assignments
  WHERE queue = %(q)s AND item_id = %(i)s AND reviewer <> %(r)s
    AND (state = 'submitted' OR (state = 'leased' AND lease_until > clock_timestamp()))
), reserved AS (
  INSERT INTO evalnb.assignments AS a (queue, item_id, reviewer, state, lease_until)
  SELECT %(q)s, %(i)s, %(r)s, 'leased', clock_timestamp() + make_interval(secs => %(s)s)
  FROM held WHERE held.n < %(n)s
  ON CONFLICT (queue, item_id, reviewer) DO UPDATE SET state = 'leased'
  WHERE a.state = 'leased' AND a.lease_until <= clock_timestamp()
  RETURNING item_id, lease_until
)
SELECT i.case_id, i.model, i.sample, r.lease_until, i.payload
FROM reserved r JOIN evalnb.items i ON i.queue = %(q)s AND i.item_id = r.item_id
"""


def _label(value: object) -> tuple[str, float]:
    """Return a label as (text, number): pass/fail (True/False) or a finite number."""
    if isinstance(value, bool):
        return ("pass", 1.0) if value else ("fail", 0.0)
    if isinstance(value, str) and value in ("pass", "fail"):
        return value, 1.0 if value == "pass" else 0.0
    if isinstance(value, int | float):
        try:
            number = float(value)
        except OverflowError:  # an int past a float's range (10**400)
            number = math.inf
        if math.isfinite(number):
            return repr(number), number
    shown = (
        f"{value!r:.80}"
        if not isinstance(value, int)
        else f"an integer of {value.bit_length()} bits"
    )
    msg = f"a label is 'pass', 'fail', True, False or a finite number; got {shown}"
    raise ReviewError(msg)


def _note(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        msg = f"a note is text; got {type(value).__name__}"
        raise ReviewError(msg)
    return clean_text(value[:MAX_NOTE])  # PostgreSQL text holds no NUL, UTF-8 no surrogate


@dataclass(frozen=True)
class Remaining:
    """What is left of a queue for one reviewer (:meth:`ReviewQueue.remaining`)."""

    open: int
    """Items this reviewer could take now."""
    held: int
    """Items others hold on leases that may end, and then come to this reviewer."""
    next_in_s: float | None
    """Seconds until the first of those leases ends (None when there are none)."""

    @property
    def finished(self) -> bool:
        """Nothing can come to this reviewer any more: every item is complete or was theirs."""
        return self.open == 0 and self.held == 0


@dataclass(frozen=True)
class ReviewItem:
    """One item reserved for a reviewer until ``lease_until`` (what they need to judge it)."""

    queue: str
    item_id: int
    reviewer: str
    case_id: str
    model: str
    sample: int
    lease_until: Any
    content: dict[str, Any] = field(repr=False)


class ReviewQueue:
    """A review queue on a PostgreSQL server (make one with :func:`evalnb.review`).

    Open an existing one from any machine with :meth:`open`. Reviewers call :meth:`next`,
    :meth:`submit` and :meth:`skip`; the lead :meth:`progress`, :meth:`agreement`,
    :meth:`disagreements`, :meth:`adjudicate` and :meth:`history`, and pulls the labels into
    a lab with ``lab.calibration.pull_labels(queue)``.
    """

    def __init__(self, pool: ConnectionPool[Any], name: str, where: str) -> None:
        self._pool = pool
        self.name = name
        self.where = where
        spec = self._fetch_one(
            "SELECT evaluator, metric, per_item, lease_s, strategy, batch_id, spec "
            "FROM evalnb.queues WHERE name = %(q)s",
            {"q": name},
        )
        if spec is None:
            pool.close()
            msg = f"no review queue named {name!r} at {where}; make one with evalnb.review(...)"
            raise ReviewError(msg)
        self.evaluator, self.metric, self.per_item, self.lease_s = spec[:4]
        self.strategy, self.batch_id, self.spec = spec[4], spec[5], spec[6]

    # -- connecting ------------------------------------------------------------------------

    @classmethod
    def open(cls, dsn: str, name: str, *, timeout_s: float = 10.0) -> ReviewQueue:
        """Open the queue ``name`` on the server of ``dsn`` (any machine that reaches it)."""
        pool = connect(dsn, timeout_s=timeout_s)
        return cls(pool, check_name(name, "queue name"), safe_dsn(dsn))

    def close(self) -> None:
        """Close the connections."""
        self._pool.close()

    def __enter__(self) -> ReviewQueue:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"ReviewQueue({self.name!r} at {self.where}: {self.evaluator}.{self.metric}, "
            f"{self.per_item} reviewers an item)"
        )

    # -- reviewers --------------------------------------------------------------------------

    def next(self, reviewer: str, *, wait: float = 0.0) -> ReviewItem | None:
        """Reserve the next item for ``reviewer`` until its lease ends; None when none is left.

        Never an item this reviewer labelled, skipped or holds; never one that ``per_item``
        others hold or labelled. An item whose lease this reviewer let end unlabelled (the
        notebook was killed mid-item, or they were slow) is theirs to take again while it
        has room: without that, a reviewer killed and back under their name could never
        finish it, and with few reviewers an item could be left short of ``per_item``. When nothing is free now but others hold
        items whose leases may end (a reviewer gone mid-item), ``wait`` seconds are spent
        waiting for one to come back; None then means "not now", and
        :meth:`remaining` tells *finished for you* (``finished``) from *come back at*
        ``next_at``. A loop that must reach every item's ``per_item`` labels waits::

            while (item := queue.next(me, wait=queue.lease_s)) is not None: ...
        """
        reviewer = check_name(reviewer, "reviewer")
        if not (isinstance(wait, int | float) and 0 <= wait <= _MAX_WAIT_S):
            msg = f"wait is seconds in [0, {_MAX_WAIT_S:g}]; got {wait!r:.40}"
            raise ReviewError(msg)
        deadline = time.monotonic() + float(wait)
        while True:
            item = self._reserve(reviewer)
            if item is not None or wait <= 0:
                return item
            left = self.remaining(reviewer)
            now = time.monotonic()
            if left.finished or now >= deadline:
                return None
            # Until the earliest lease of another reviewer ends (at least a moment: a
            # label or a skip may free an item earlier), never past the deadline.
            pause = _POLL_S if left.next_in_s is None else min(max(left.next_in_s, 0.05), 2.0)
            time.sleep(max(0.0, min(pause, deadline - now)))

    def _reserve(self, reviewer: str) -> ReviewItem | None:
        args = {"q": self.name, "r": reviewer, "n": self.per_item, "s": float(self.lease_s)}
        with self._conn() as conn:
            while True:
                found = conn.execute(_SCAN + " SKIP LOCKED", args).fetchone()
                if found is None:
                    # Nothing free, or everything open is locked this instant (another
                    # reviewer reserving or submitting it): wait for one lock, then decide.
                    found = conn.execute(_SCAN, args).fetchone()
                if found is None:
                    return None
                # The item is locked by this transaction; this statement's snapshot is
                # newer than the lock, so it counts every earlier holder's assignment.
                row = conn.execute(_RESERVE, {**args, "i": found[0]}).fetchone()
                if row is not None:
                    return ReviewItem(self.name, found[0], reviewer, *row)
                # it filled up meanwhile (or this reviewer took it in another session):
                # scan again, with a snapshot that now excludes it

    @overload
    def remaining(self) -> int: ...
    @overload
    def remaining(self, reviewer: str) -> Remaining: ...
    def remaining(self, reviewer: str | None = None) -> int | Remaining:
        """How much is left: items lacking labels, or what is left *for* ``reviewer``.

        Without ``reviewer``: the number of items that still lack their ``per_item``
        labels. With one: a :class:`Remaining` — ``open`` (items this reviewer could take
        now), ``held`` (items others hold on leases that may end and come back),
        ``next_in_s`` (seconds until the first of those leases ends), ``finished`` (nothing
        can ever come to this reviewer again: every item is complete or was theirs).
        """
        if reviewer is None:
            row = self._fetch_one(
                "SELECT count(*) FROM evalnb.items WHERE queue = %(q)s AND NOT done",
                {"q": self.name},
            )
            return int(row[0]) if row else 0
        reviewer = check_name(reviewer, "reviewer")
        row = self._fetch_one(_REMAINING, {"q": self.name, "r": reviewer, "n": self.per_item})
        open_, held, next_in = (int(row[0]), int(row[1]), row[2]) if row else (0, 0, None)
        return Remaining(open_, held, None if next_in is None else float(next_in))

    def submit(
        self,
        item: ReviewItem | int,
        label: object,
        *,
        reviewer: str,
        note: str | None = None,
        key: str | None = None,
    ) -> None:
        """Record ``reviewer``'s label on an item they reserved; committed when this returns.

        ``label``: ``"pass"``/``"fail"`` (or True/False) or a number. Submitting again is an
        edit (a new row; the old one stays in :meth:`history`). ``key`` makes a resend a
        no-op (the outbox of an offline widget sends each label with its own key); a key is
        this reviewer's on this queue, and a key already used for another item or label is
        refused, never taken for a resend. The server checks the reservation, the lease and
        the room left (:mod:`evalnb.team.schema`), so a client cannot skip them.
        """
        reviewer = check_name(reviewer, "reviewer")
        text, value = _label(label)
        item_id = item.item_id if isinstance(item, ReviewItem) else int(item)
        key = check_name(key, "key") if key is not None else uuid.uuid4().hex
        args = {"q": self.name, "i": item_id, "r": reviewer, "k": key}
        with self._conn() as conn:
            if self._sent_before(conn, args, text):
                return  # sent before: its reply was lost
            added = conn.execute(
                "INSERT INTO evalnb.labels (queue, item_id, reviewer, kind, label, value, "
                "note, key) VALUES (%(q)s, %(i)s, %(r)s, 'review', %(l)s, %(v)s, %(n)s, %(k)s) "
                "ON CONFLICT (queue, reviewer, key) DO NOTHING RETURNING label_no",
                {**args, "l": text, "v": value, "n": _note(note)},
            ).fetchone()
            if added is None:  # the same key, committed by a concurrent send meanwhile
                self._sent_before(conn, args, text)

    def _sent_before(self, conn: Connection[Any], args: dict[str, Any], text: str) -> bool:
        """Whether this key was recorded already; raise when it names another label."""
        held = conn.execute(
            "SELECT item_id, label FROM evalnb.labels "
            "WHERE queue = %(q)s AND reviewer = %(r)s AND key = %(k)s",
            args,
        ).fetchone()
        if held is None:
            return False
        if (int(held[0]), str(held[1])) != (int(args["i"]), text):
            msg = (
                f"the key {args['k']!r:.60} of {args['r']!r} on queue {self.name!r} was used "
                f"for item {held[0]} labelled {held[1]!r}; a key names one label: use a new "
                "key for a new label"
            )
            raise ReviewError(msg)
        return True

    def skip(self, item: ReviewItem | int, *, reviewer: str | None = None) -> None:
        """Give an item back unlabelled; this reviewer will not be offered it again.

        ``reviewer`` defaults to the one the item was reserved for.
        """
        if reviewer is None and isinstance(item, ReviewItem):
            reviewer = item.reviewer
        reviewer = check_name(reviewer, "reviewer")
        item_id = item.item_id if isinstance(item, ReviewItem) else int(item)
        with self._conn() as conn:
            self._lock_item(conn, item_id)
            conn.execute(
                "UPDATE evalnb.assignments SET state = 'skipped' WHERE queue = %(q)s "
                "AND item_id = %(i)s AND reviewer = %(r)s AND state = 'leased'",
                {"q": self.name, "i": item_id, "r": reviewer},
            )

    # -- the lead ---------------------------------------------------------------------------

    def adjudicate(
        self, item: ReviewItem | int, label: object, *, reviewer: str, note: str | None = None
    ) -> None:
        """Record the lead's final label on an item (kept apart from the reviewers' labels)."""
        reviewer = check_name(reviewer, "reviewer")
        text, value = _label(label)
        item_id = item.item_id if isinstance(item, ReviewItem) else int(item)
        with self._conn() as conn:
            self._lock_item(conn, item_id)
            conn.execute(
                "INSERT INTO evalnb.labels (queue, item_id, reviewer, kind, label, value, "
                "note, key) VALUES (%(q)s, %(i)s, %(r)s, 'adjudication', %(l)s, %(v)s, "
                "%(n)s, %(k)s)",
                {
                    "q": self.name,
                    "i": item_id,
                    "r": reviewer,
                    "l": text,
                    "v": value,
                    "n": _note(note),
                    "k": uuid.uuid4().hex,
                },
            )

    def history(self) -> pl.DataFrame:
        """Every label ever given, oldest first: who, when, the item, old -> new."""
        rows = self._fetch_all(
            "SELECT l.label_no, l.item_id, i.case_id, i.model, i.sample, l.reviewer, l.kind, "
            "lag(l.label) OVER (PARTITION BY l.item_id, l.reviewer, l.kind "
            "ORDER BY l.label_no) AS old, l.label AS new, l.value, l.note, l.db_user, "
            "l.created_at FROM evalnb.labels l JOIN evalnb.items i "
            "ON i.queue = l.queue AND i.item_id = l.item_id WHERE l.queue = %(q)s "
            "ORDER BY l.label_no",
            {"q": self.name},
        )
        return pl.DataFrame(rows, schema=_HISTORY, orient="row")

    def labels(self) -> pl.DataFrame:
        """Return the label in force per item and reviewer (their latest), adjudications apart."""
        history = self.history()
        return (
            history.sort("label_no")
            .group_by(["item_id", "reviewer", "kind"], maintain_order=True)
            .last()
            .rename({"new": "label"})
            .drop("old")
        )

    def items(self) -> pl.DataFrame:
        """Return the queue's items: their lab keys and how each was drawn (design, inclusion)."""
        rows = self._fetch_all(
            "SELECT item_id, case_id, model, sample, priority, design, inclusion, done "
            "FROM evalnb.items WHERE queue = %(q)s ORDER BY item_id",
            {"q": self.name},
        )
        return pl.DataFrame(rows, schema=_ITEMS, orient="row")

    def progress(self) -> pl.DataFrame:
        """Per reviewer, then the whole queue: labelled, skipped, holding, items.

        The last row (``overall`` true, ``reviewer`` "(all reviewers)") sums the reviewers
        and adds the items, those complete and the labels the queue needs.
        """
        rows = self._fetch_all(
            "SELECT reviewer, count(*) FILTER (WHERE state = 'submitted'), "
            "count(*) FILTER (WHERE state = 'skipped'), "
            "count(*) FILTER (WHERE state = 'leased' AND lease_until > clock_timestamp()) "
            "FROM evalnb.assignments WHERE queue = %(q)s GROUP BY reviewer ORDER BY reviewer",
            {"q": self.name},
        )
        per = pl.DataFrame(rows, schema=_PROGRESS[:1] + _PROGRESS[2:5], orient="row")
        counted = self._fetch_one(
            "SELECT count(*), count(*) FILTER (WHERE done) FROM evalnb.items WHERE queue = %(q)s",
            {"q": self.name},
        )
        n_items, complete = (int(counted[0]), int(counted[1])) if counted else (0, 0)
        overall = pl.DataFrame(
            [
                {
                    "reviewer": OVERALL,
                    "overall": True,
                    "labelled": int(per["labelled"].sum()),
                    "skipped": int(per["skipped"].sum()),
                    "holding": int(per["holding"].sum()),
                    "items": n_items,
                    "complete": complete,
                    "labels_needed": n_items * int(self.per_item),
                }
            ],
            schema=dict(_PROGRESS),
        )
        return pl.concat(
            [
                per.with_columns(
                    overall=pl.lit(value=False),
                    items=pl.lit(None, pl.Int64),
                    complete=pl.lit(None, pl.Int64),
                    labels_needed=pl.lit(None, pl.Int64),
                ).select([name for name, _ in _PROGRESS]),
                overall,
            ]
        )

    def agreement(
        self, *, level: str | None = None, n_boot: int = 1000, seed: int = 0
    ) -> pl.DataFrame:
        """Krippendorff's α, Fleiss' κ and pairwise Cohen's κ of the labels in force.

        ``level``: ``nominal`` for pass/fail, ``interval`` for numbers (the default follows
        the labels). Each with a bootstrap interval over items
        (:mod:`evalnb.team.agreement`).
        """
        votes = self.labels().filter(pl.col("kind") == "review")
        numeric = votes.filter(~pl.col("label").is_in(["pass", "fail"])).height > 0
        level = level or ("interval" if numeric else "nominal")
        column = "value" if level == "interval" else "label"
        return agreement_table(
            votes, unit="item_id", value=column, level=level, n_boot=n_boot, seed=seed
        )

    def disagreements(self) -> pl.DataFrame:
        """Items whose reviewers' labels in force differ, with the labels and any adjudication."""
        votes = self.labels()
        review = votes.filter(pl.col("kind") == "review")
        split = (
            review.group_by("item_id", "case_id", "model", "sample")
            .agg(
                labels=pl.col("label").sort_by("reviewer"),
                reviewers=pl.col("reviewer").sort(),
                n_distinct=pl.col("label").n_unique(),
            )
            .filter(pl.col("n_distinct") > 1)
            .drop("n_distinct")
        )
        final = votes.filter(pl.col("kind") == "adjudication").sort("label_no")
        final = final.group_by("item_id").agg(adjudicated=pl.col("label").last())
        return split.join(final, on="item_id", how="left").sort("item_id")

    # -- plumbing ---------------------------------------------------------------------------

    def _conn(self) -> Any:  # noqa: ANN401 - psycopg's context manager
        return guarded(self._pool, self.where)

    def _lock_item(self, conn: Connection[Any], item_id: int) -> None:
        found = conn.execute(
            "SELECT 1 FROM evalnb.items WHERE queue = %(q)s AND item_id = %(i)s FOR UPDATE",
            {"q": self.name, "i": item_id},
        ).fetchone()
        if found is None:
            msg = f"queue {self.name!r} has no item {item_id}"
            raise ReviewError(msg)

    def _fetch_one(self, sql: str, args: dict[str, object]) -> tuple[Any, ...] | None:
        with self._conn() as conn:
            return conn.execute(sql, args).fetchone()  # type: ignore[no-any-return]

    def _fetch_all(self, sql: str, args: dict[str, object]) -> list[tuple[Any, ...]]:
        with self._conn() as conn:
            return conn.execute(sql, args).fetchall()  # type: ignore[no-any-return]


_HISTORY: dict[str, pl.DataType | type[pl.DataType]] = {
    "label_no": pl.Int64,
    "item_id": pl.Int64,
    "case_id": pl.String,
    "model": pl.String,
    "sample": pl.Int64,
    "reviewer": pl.String,
    "kind": pl.String,
    "old": pl.String,
    "new": pl.String,
    "value": pl.Float64,
    "note": pl.String,
    "db_user": pl.String,
    "created_at": pl.Datetime("us", "UTC"),
}
_ITEMS: dict[str, pl.DataType | type[pl.DataType]] = {
    "item_id": pl.Int64,
    "case_id": pl.String,
    "model": pl.String,
    "sample": pl.Int64,
    "priority": pl.Int64,
    "design": pl.String,
    "inclusion": pl.Float64,
    "done": pl.Boolean,
}
_PROGRESS: list[tuple[str, pl.DataType | type[pl.DataType]]] = [
    ("reviewer", pl.String),
    ("overall", pl.Boolean),
    ("labelled", pl.Int64),
    ("skipped", pl.Int64),
    ("holding", pl.Int64),
    ("items", pl.Int64),
    ("complete", pl.Int64),
    ("labels_needed", pl.Int64),
]
