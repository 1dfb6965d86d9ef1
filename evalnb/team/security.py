"""Row-level security for review queues: each reviewer a PostgreSQL role of their own.

:func:`secure` (run once per server by its owner, the lead) makes two group roles and the
policies that bind them:

- ``evalnb_reviewer``: reads the items and who holds them (the per-item count needs it),
  writes assignments and labels **only under its own role name** (a label's ``reviewer``
  must equal ``current_user``), and reads only its own labels — blind review, held by the
  server, not by the client;
- ``evalnb_lead``: reads and writes everything (adjudicates, pulls, measures agreement).

What a reviewer may write is narrowed further by the triggers of
:mod:`evalnb.team.schema`, which hold for every role: an assignment is a lease of the
queue's length taken while the item has room, a label needs a reservation, and an item's
``done``, a label's number, time and database user are the server's.

A reviewer's login role is a member of ``evalnb_reviewer`` (:func:`grant`); their queue
calls use their role name as the reviewer name. Role names go into SQL as quoted
identifiers (``psycopg.sql.Identifier``), never as text pasted into a statement.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalnb.team.connection import check_name, connect, guarded, safe_dsn

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

__all__ = ["LEAD", "REVIEWER", "grant", "secure"]

REVIEWER = "evalnb_reviewer"
LEAD = "evalnb_lead"

_SETUP = """
DO $$ BEGIN
  CREATE ROLE evalnb_reviewer NOLOGIN;
EXCEPTION WHEN duplicate_object THEN NULL; END $$;
DO $$ BEGIN
  CREATE ROLE evalnb_lead NOLOGIN;
EXCEPTION WHEN duplicate_object THEN NULL; END $$;
GRANT USAGE ON SCHEMA evalnb TO evalnb_reviewer, evalnb_lead;
GRANT SELECT ON evalnb.meta, evalnb.queues, evalnb.items, evalnb.assignments
  TO evalnb_reviewer;
-- Only so that a reviewer can lock an item (SELECT ... FOR UPDATE needs an UPDATE grant):
-- the items_guard trigger derives `done`, whatever the UPDATE sets.
GRANT UPDATE (done) ON evalnb.items TO evalnb_reviewer;
GRANT INSERT, UPDATE (state) ON evalnb.assignments TO evalnb_reviewer;
GRANT SELECT, INSERT ON evalnb.labels TO evalnb_reviewer;
GRANT USAGE ON SEQUENCE evalnb.labels_label_no_seq TO evalnb_reviewer, evalnb_lead;
GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA evalnb TO evalnb_lead;
ALTER TABLE evalnb.labels ENABLE ROW LEVEL SECURITY;
ALTER TABLE evalnb.assignments ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS lead_all ON evalnb.labels;
CREATE POLICY lead_all ON evalnb.labels TO evalnb_lead USING (true) WITH CHECK (true);
DROP POLICY IF EXISTS own_labels ON evalnb.labels;
CREATE POLICY own_labels ON evalnb.labels TO evalnb_reviewer
  USING (reviewer = current_user) WITH CHECK (reviewer = current_user AND kind = 'review');
DROP POLICY IF EXISTS lead_all ON evalnb.assignments;
CREATE POLICY lead_all ON evalnb.assignments TO evalnb_lead USING (true) WITH CHECK (true);
DROP POLICY IF EXISTS see_holders ON evalnb.assignments;
CREATE POLICY see_holders ON evalnb.assignments FOR SELECT TO evalnb_reviewer USING (true);
DROP POLICY IF EXISTS own_assignments ON evalnb.assignments;
CREATE POLICY own_assignments ON evalnb.assignments FOR INSERT TO evalnb_reviewer
  WITH CHECK (reviewer = current_user);
DROP POLICY IF EXISTS own_updates ON evalnb.assignments;
CREATE POLICY own_updates ON evalnb.assignments FOR UPDATE TO evalnb_reviewer
  USING (reviewer = current_user) WITH CHECK (reviewer = current_user);
"""


def secure(dsn: str) -> None:
    """Turn on row-level security for every queue on the server of ``dsn`` (its owner).

    Idempotent. The table owner (who ran it) keeps full access, as do members of
    ``evalnb_lead``.
    """
    pool: ConnectionPool[Any] = connect(dsn)
    try:
        with guarded(pool, safe_dsn(dsn)) as conn:
            conn.execute(_SETUP)
    finally:
        pool.close()


def grant(dsn: str, role: str, *, lead: bool = False) -> None:
    """Make the existing login ``role`` a reviewer (or, with ``lead``, a lead) of every queue."""
    from psycopg import sql  # noqa: PLC0415 - optional dependency

    role = check_name(role, "role")
    pool: ConnectionPool[Any] = connect(dsn)
    try:
        with guarded(pool, safe_dsn(dsn)) as conn:
            conn.execute(
                sql.SQL("GRANT {} TO {}").format(
                    sql.Identifier(LEAD if lead else REVIEWER), sql.Identifier(role)
                )
            )
    finally:
        pool.close()
