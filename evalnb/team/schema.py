"""The review queues' tables on PostgreSQL, and the statements that read and write them.

Every statement is parameterized (``%(name)s``): reviewer names, notes, labels and item
text never become SQL. One schema (``evalnb``) holds every queue; rows carry their queue's
name. The tables are append-mostly: ``labels`` is never updated or deleted (an edit is a
new row; :meth:`ReviewQueue.history` shows old -> new), ``assignments`` records who holds
or held each item.
"""

from __future__ import annotations

__all__ = ["CREATE", "SCHEMA_LOCK"]

# An advisory lock key: two processes creating the tables at once take turns.
SCHEMA_LOCK = 0x6576616C6E62  # "evalnb"

CREATE = """
CREATE SCHEMA IF NOT EXISTS evalnb;
CREATE TABLE IF NOT EXISTS evalnb.queues (
    name        text PRIMARY KEY,
    evaluator   text NOT NULL,
    metric      text NOT NULL,
    per_item    integer NOT NULL CHECK (per_item >= 1),
    lease_s     double precision NOT NULL CHECK (lease_s > 0),
    strategy    text NOT NULL,
    batch_id    text NOT NULL,
    spec        jsonb NOT NULL,
    created_by  text NOT NULL DEFAULT current_user,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS evalnb.items (
    queue      text NOT NULL REFERENCES evalnb.queues (name) ON DELETE CASCADE,
    item_id    integer NOT NULL,
    case_id    text NOT NULL,
    model      text NOT NULL,
    sample     bigint NOT NULL,
    priority   integer NOT NULL,
    done       boolean NOT NULL DEFAULT false,
    design     text,
    inclusion  double precision,
    payload    jsonb NOT NULL,
    PRIMARY KEY (queue, item_id)
);
CREATE TABLE IF NOT EXISTS evalnb.assignments (
    queue        text NOT NULL,
    item_id      integer NOT NULL,
    reviewer     text NOT NULL,
    state        text NOT NULL CHECK (state IN ('leased', 'submitted', 'skipped')),
    leased_at    timestamptz NOT NULL DEFAULT now(),
    lease_until  timestamptz NOT NULL,
    PRIMARY KEY (queue, item_id, reviewer),
    FOREIGN KEY (queue, item_id) REFERENCES evalnb.items (queue, item_id) ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS evalnb.labels (
    label_no    bigserial PRIMARY KEY,
    queue       text NOT NULL,
    item_id     integer NOT NULL,
    reviewer    text NOT NULL,
    kind        text NOT NULL CHECK (kind IN ('review', 'adjudication')),
    label       text NOT NULL,
    value       double precision,
    note        text,
    key         text NOT NULL UNIQUE,
    db_user     text NOT NULL DEFAULT current_user,
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    FOREIGN KEY (queue, item_id) REFERENCES evalnb.items (queue, item_id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS labels_item ON evalnb.labels (queue, item_id);
CREATE INDEX IF NOT EXISTS assignments_reviewer ON evalnb.assignments (queue, reviewer);
CREATE INDEX IF NOT EXISTS items_open ON evalnb.items (queue, priority, item_id) WHERE NOT done;
"""
