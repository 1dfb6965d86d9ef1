"""The review queues' tables on PostgreSQL, and the guards that keep them true.

Every statement is parameterized (``%(name)s``): reviewer names, notes, labels and item
text never become SQL. One schema (``evalnb``) holds every queue; rows carry their queue's
name. The tables are append-mostly: ``labels`` is never updated or deleted (an edit is a
new row; :meth:`ReviewQueue.history` shows old -> new), ``assignments`` records who holds
or held each item.

The queue's invariants are the **server's**, enforced by triggers, so they hold against a
reviewer role writing SQL by hand as much as against evalnb's own client (:data:`GUARDS`):

- an assignment begins as a lease whose length is the queue's, taken under the item's row
  lock only while fewer than ``per_item`` others hold or labelled the item (a full item
  inserts nothing); it then moves only ``leased -> skipped`` or, with a label, to
  ``submitted``; nobody holds a slot without a lease that ends or a label that counts;
- a review label needs the reviewer's assignment on the item (a late or skipped one only
  while the item has room); its number, time and database user are the server's, whatever
  the statement said; its text is ``pass``, ``fail`` or a finite number equal to its value;
- an item's ``done`` is derived (``per_item`` submitted labels), whatever an UPDATE sets;
- an idempotency key is unique per queue and reviewer (item ids restart at 0 per queue).

:data:`VERSION` is stored in ``evalnb.meta``; a server holding an older one is upgraded in
place by the first connection of the tables' owner.
"""

from __future__ import annotations

__all__ = ["CREATE", "GUARDS", "REFUSED", "SCHEMA_LOCK", "VERSION"]

# An advisory lock key: two processes creating the tables at once take turns.
SCHEMA_LOCK = 0x6576616C6E62  # "evalnb"
VERSION = "3"
"""The schema's version: 1 had no guards and global keys; 2 the triggers below; 3 renews a
reviewer's own ended lease (a reviewer killed mid-item takes it back when they return)."""
REFUSED = "EVQ01"
"""The SQLSTATE of a queue rule's refusal (the message is written for the reviewer)."""

CREATE = """
CREATE SCHEMA IF NOT EXISTS evalnb;
CREATE TABLE IF NOT EXISTS evalnb.meta (key text PRIMARY KEY, value text NOT NULL);
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
    key         text NOT NULL,
    db_user     text NOT NULL DEFAULT current_user,
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    FOREIGN KEY (queue, item_id) REFERENCES evalnb.items (queue, item_id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS labels_item ON evalnb.labels (queue, item_id);
CREATE INDEX IF NOT EXISTS assignments_reviewer ON evalnb.assignments (queue, reviewer);
CREATE INDEX IF NOT EXISTS items_open ON evalnb.items (queue, priority, item_id) WHERE NOT done;
"""

GUARDS = """
-- Version 1 kept keys unique over the whole table: a second queue's "ann:0" was dropped.
ALTER TABLE evalnb.labels DROP CONSTRAINT IF EXISTS labels_key_key;
CREATE UNIQUE INDEX IF NOT EXISTS labels_scoped_key ON evalnb.labels (queue, reviewer, key);

-- Who holds a slot on an item now: a live lease or a label (other than `who`'s own).
CREATE OR REPLACE FUNCTION evalnb.holders(q text, i integer, who text) RETURNS bigint
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT count(*) FROM evalnb.assignments
  WHERE queue = q AND item_id = i AND reviewer <> who
    AND (state = 'submitted' OR (state = 'leased' AND lease_until > clock_timestamp()))
$$;

-- The item's row lock (who holds it decides alone), or the queue's plain refusal.
CREATE OR REPLACE FUNCTION evalnb.lock_item(q text, i integer) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM 1 FROM evalnb.items WHERE queue = q AND item_id = i FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'EVQ01', MESSAGE = format('queue %L has no item %s', q, i);
  END IF;
END $$;

CREATE OR REPLACE FUNCTION evalnb.item_done(q text, i integer) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT count(*) >= (SELECT per_item FROM evalnb.queues WHERE name = q)
  FROM evalnb.assignments WHERE queue = q AND item_id = i AND state = 'submitted'
$$;

-- `done` is derived: an UPDATE may name it (a reviewer needs the column grant to lock an
-- item with SELECT ... FOR UPDATE) but never decides it.
CREATE OR REPLACE FUNCTION evalnb.items_guard() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  NEW.done := evalnb.item_done(NEW.queue, NEW.item_id);
  RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS items_guard ON evalnb.items;
CREATE TRIGGER items_guard BEFORE UPDATE ON evalnb.items
  FOR EACH ROW EXECUTE FUNCTION evalnb.items_guard();

CREATE OR REPLACE FUNCTION evalnb.assignments_guard() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  q record;
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF NEW.state <> 'leased' THEN
      RAISE EXCEPTION USING ERRCODE = 'EVQ01', MESSAGE = format(
        'an assignment begins as a lease (state leased); got %L: take items with '
        'queue.next(reviewer)', NEW.state);
    END IF;
    SELECT per_item, lease_s INTO q FROM evalnb.queues WHERE name = NEW.queue;
    PERFORM evalnb.lock_item(NEW.queue, NEW.item_id);
    -- Counted after the lock: every earlier holder's assignment is committed and seen.
    IF evalnb.holders(NEW.queue, NEW.item_id, NEW.reviewer) >= q.per_item THEN
      RETURN NULL;  -- full: nothing reserved (the caller's RETURNING is empty)
    END IF;
    NEW.leased_at := clock_timestamp();
    NEW.lease_until := NEW.leased_at + make_interval(secs => q.lease_s);
    RETURN NEW;
  END IF;
  -- Renewal: a reviewer's own lease that ended unlabelled (they were killed, or slow) is
  -- theirs again when the item still has room; the new lease times are the server's.
  IF OLD.state = 'leased' AND NEW.state = 'leased'
     AND (NEW.queue, NEW.item_id, NEW.reviewer) IS NOT DISTINCT FROM
         (OLD.queue, OLD.item_id, OLD.reviewer)
     AND OLD.lease_until <= clock_timestamp() THEN
    SELECT per_item, lease_s INTO q FROM evalnb.queues WHERE name = NEW.queue;
    PERFORM evalnb.lock_item(NEW.queue, NEW.item_id);
    IF evalnb.holders(NEW.queue, NEW.item_id, NEW.reviewer) >= q.per_item THEN
      RETURN NULL;  -- others filled it meanwhile: nothing renewed
    END IF;
    NEW.leased_at := clock_timestamp();
    NEW.lease_until := NEW.leased_at + make_interval(secs => q.lease_s);
    RETURN NEW;
  END IF;
  IF (NEW.queue, NEW.item_id, NEW.reviewer, NEW.leased_at, NEW.lease_until)
     IS DISTINCT FROM (OLD.queue, OLD.item_id, OLD.reviewer, OLD.leased_at, OLD.lease_until) THEN
    RAISE EXCEPTION USING ERRCODE = 'EVQ01',
      MESSAGE = 'only an assignment''s state changes (leased -> skipped or submitted)';
  END IF;
  IF NEW.state = OLD.state OR (OLD.state = 'leased' AND NEW.state = 'skipped') THEN
    RETURN NEW;
  END IF;
  IF NEW.state = 'submitted' AND EXISTS (
       SELECT 1 FROM evalnb.labels WHERE queue = NEW.queue AND item_id = NEW.item_id
         AND reviewer = NEW.reviewer AND kind = 'review') THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION USING ERRCODE = 'EVQ01', MESSAGE = format(
    'an assignment goes leased -> skipped, or to submitted once its label is recorded; '
    'got %s -> %s', OLD.state, NEW.state);
END $$;
DROP TRIGGER IF EXISTS assignments_guard ON evalnb.assignments;
CREATE TRIGGER assignments_guard BEFORE INSERT OR UPDATE ON evalnb.assignments
  FOR EACH ROW EXECUTE FUNCTION evalnb.assignments_guard();

CREATE OR REPLACE FUNCTION evalnb.assignments_done() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  UPDATE evalnb.items SET done = false  -- items_guard sets the truth
  WHERE queue = NEW.queue AND item_id = NEW.item_id;
  RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS assignments_done ON evalnb.assignments;
CREATE TRIGGER assignments_done AFTER INSERT OR UPDATE OF state ON evalnb.assignments
  FOR EACH ROW EXECUTE FUNCTION evalnb.assignments_done();

-- The caller's own: who (current_user), when and the row's number are the server's.
CREATE OR REPLACE FUNCTION evalnb.labels_stamp() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.label_no := nextval('evalnb.labels_label_no_seq');
  NEW.db_user := current_user;
  NEW.created_at := clock_timestamp();
  IF NEW.label IN ('pass', 'fail') THEN
    NEW.value := CASE WHEN NEW.label = 'pass' THEN 1 ELSE 0 END;
    RETURN NEW;
  END IF;
  -- Nested, not one OR: SQL does not promise the order, and the cast needs the pattern.
  IF NEW.label ~ '^[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]{1,3})?$'
     AND NEW.value IS NOT NULL AND NEW.value::text NOT IN ('NaN', 'Infinity', '-Infinity') THEN
    IF NEW.label::double precision = NEW.value THEN
      RETURN NEW;
    END IF;
  END IF;
  RAISE EXCEPTION USING ERRCODE = 'EVQ01', MESSAGE = format(
    'a label is pass, fail or a finite number equal to its value; got %L (value %s)',
    left(NEW.label, 80), NEW.value);
END $$;
DROP TRIGGER IF EXISTS labels_1_stamp ON evalnb.labels;
CREATE TRIGGER labels_1_stamp BEFORE INSERT ON evalnb.labels
  FOR EACH ROW EXECUTE FUNCTION evalnb.labels_stamp();

CREATE OR REPLACE FUNCTION evalnb.labels_guard() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  per integer;
  mine record;
  held bigint;
BEGIN
  PERFORM evalnb.lock_item(NEW.queue, NEW.item_id);
  IF NEW.kind <> 'review' THEN
    RETURN NEW;
  END IF;
  SELECT state, lease_until > clock_timestamp() AS live INTO mine FROM evalnb.assignments
  WHERE queue = NEW.queue AND item_id = NEW.item_id AND reviewer = NEW.reviewer;
  IF NOT FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'EVQ01', MESSAGE = format(
      '%L never reserved item %s of queue %L; take items with queue.next(reviewer)',
      NEW.reviewer, NEW.item_id, NEW.queue);
  END IF;
  -- A lease that ended, or an item skipped, went back to the queue: a label now counts
  -- only while the item still has room.
  IF mine.state = 'skipped' OR (mine.state = 'leased' AND NOT mine.live) THEN
    SELECT per_item INTO per FROM evalnb.queues WHERE name = NEW.queue;
    held := evalnb.holders(NEW.queue, NEW.item_id, NEW.reviewer);
    IF held >= per THEN
      RAISE EXCEPTION USING ERRCODE = 'EVQ01', MESSAGE = format(
        'item %s went back to the queue (%L %s) and %s other reviewer(s) took it; the label '
        'was not recorded', NEW.item_id, NEW.reviewer,
        CASE WHEN mine.state = 'skipped' THEN 'skipped it' ELSE 'held it past the lease' END,
        held);
    END IF;
  END IF;
  RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS labels_2_guard ON evalnb.labels;
CREATE TRIGGER labels_2_guard BEFORE INSERT ON evalnb.labels
  FOR EACH ROW EXECUTE FUNCTION evalnb.labels_guard();

CREATE OR REPLACE FUNCTION evalnb.labels_count() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  UPDATE evalnb.assignments SET state = 'submitted'
  WHERE queue = NEW.queue AND item_id = NEW.item_id AND reviewer = NEW.reviewer
    AND state <> 'submitted';
  RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS labels_count ON evalnb.labels;
CREATE TRIGGER labels_count AFTER INSERT ON evalnb.labels
  FOR EACH ROW WHEN (NEW.kind = 'review') EXECUTE FUNCTION evalnb.labels_count();

INSERT INTO evalnb.meta VALUES ('schema', '3') ON CONFLICT (key) DO UPDATE SET value = '3';
"""
