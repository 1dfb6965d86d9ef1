"""Review queues against a reviewer role writing SQL, torn outboxes and passing refusals (issue 54).

Each test reproduces one defect found by trying the queue as an attacker or an unlucky
operator would, on a real PostgreSQL server with password roles and row-level security.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from typing import TYPE_CHECKING

import polars as pl
import pytest

import evalnb
from evalnb.calibration.labels import human_verdicts
from evalnb.team.agreement import agreement_table
from evalnb.team.connection import payload_json, safe_dsn
from evalnb.team.outbox import Outbox

if TYPE_CHECKING:
    from pathlib import Path

    from evalnb_testkit.pg_server import PgServer

pytestmark = pytest.mark.xdist_group("postgres")
EV = "ragas_string_similarity"


def _lab(n: int = 6, answers: list[str] | None = None) -> evalnb.Lab:
    frame = pl.DataFrame(
        {
            "prompt": [f"question {i}?" for i in range(n)],
            "expected": [f"answer {i}" for i in range(n)],
            "actual": answers or [f"answer {i}" if i % 2 else f"other {i}" for i in range(n)],
            "model": ["m"] * n,
        }
    )
    return evalnb.evaluate(evalnb.load(frame), [EV], progress=False)


def _queue(lab: evalnb.Lab, dsn: str, **options: object) -> evalnb.ReviewQueue:
    name = f"h-{uuid.uuid4().hex[:8]}"
    return evalnb.review(lab, dsn, name, evaluator=EV, metric=EV, **options)  # type: ignore[arg-type] - options as the test passes them


def _role(server: PgServer, name: str) -> str:
    from evalnb.team.security import grant, secure

    server.psql(
        f"DO $$ BEGIN CREATE ROLE {name} LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$"
    )
    secure(server.dsn())
    grant(server.dsn(), name)
    return server.dsn(name)


def _sql_as(dsn: str, sql: str, args: dict[str, object] | None = None) -> list[tuple[object, ...]]:
    """Run one statement as that role, by hand (what a reviewer with psql can do)."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        cur = conn.execute(sql, args or {})  # type: ignore[arg-type] - the test's own SQL
        return cur.fetchall() if cur.description else []


def test_an_answer_holding_the_text_backslash_u0000_publishes(pg_server: PgServer) -> None:
    answers = ["prints \\u0000 to end", "a real NUL\x00here", "ok", "fine"]
    queue = _queue(_lab(4, answers), pg_server.dsn(), per_item=1, strategy="random")
    seen = set()
    while (item := queue.next("ann")) is not None:
        seen.add(item.content["answer"])
    assert "prints \\u0000 to end" in seen  # the six characters, kept as text
    assert "a real NUL\ufffdhere" in seen
    assert json.loads(payload_json({"a": ["x\\u0000", {"k\x00": "\udfff"}]})) == {
        "a": ["x\\u0000", {"k\ufffd": "\ufffd"}]
    }
    queue.close()


def test_idempotency_keys_belong_to_a_queue_and_a_reviewer(pg_server: PgServer) -> None:
    lab = _lab(2)
    one, two = (_queue(lab, pg_server.dsn(), per_item=2) for _ in range(2))
    for queue in (one, two):
        for reviewer in ("ann", "bob"):
            item = queue.next(reviewer)
            assert item is not None
            queue.submit(item, "pass", reviewer=reviewer, key=f"k:{item.item_id}")
    # item ids restart at 0 per queue: the same key in another queue or from another
    # reviewer is another label, and every one was stored
    assert one.history().height == two.history().height == 2
    first = one.labels().row(0, named=True)
    with pytest.raises(evalnb.ReviewError, match="a key names one label"):
        one.submit(
            first["item_id"], "fail", reviewer=first["reviewer"], key=f"k:{first['item_id']}"
        )
    one.submit(first["item_id"], "pass", reviewer=first["reviewer"], key=f"k:{first['item_id']}")
    assert one.history().height == 2  # a true resend: nothing new
    one.close()
    two.close()


def test_a_reviewer_role_writing_sql_cannot_bend_the_queue(pg_server: PgServer) -> None:
    queue = _queue(_lab(3), pg_server.dsn(), per_item=2, lease_s=60)
    mal = _role(pg_server, "mallory")
    _role(pg_server, "ann")
    q = {"q": queue.name}
    # 3: emptying the queue: `done` is derived, whatever the UPDATE says
    _sql_as(mal, "UPDATE evalnb.items SET done = true WHERE queue = %(q)s", q)
    assert queue.remaining() == 3
    # 4: phantom holders: a slot needs a lease of the queue's length, or a label
    with pytest.raises(Exception, match="begins as a lease"):
        _sql_as(
            mal,
            "INSERT INTO evalnb.assignments (queue, item_id, reviewer, state, lease_until) "
            "VALUES (%(q)s, 0, 'mallory', 'submitted', 'infinity')",
            q,
        )
    _sql_as(
        mal,
        "INSERT INTO evalnb.assignments (queue, item_id, reviewer, state, lease_until) "
        "SELECT %(q)s, item_id, 'mallory', 'leased', 'infinity' FROM evalnb.items "
        "WHERE queue = %(q)s",
        q,
    )
    until = _sql_as(
        mal,
        "SELECT max(lease_until - leased_at) FROM evalnb.assignments "
        "WHERE queue = %(q)s AND reviewer = 'mallory'",
        q,
    )[0][0]
    assert until.total_seconds() == pytest.approx(60)  # type: ignore[attr-defined]
    with pytest.raises(Exception, match="leased -> skipped"):
        _sql_as(
            mal,
            "UPDATE evalnb.assignments SET state = 'submitted' "
            "WHERE queue = %(q)s AND reviewer = 'mallory'",
            q,
        )
    # 5: forged numbers, users and times; labels on items never reserved; 'maybe'
    _sql_as(
        mal,
        "INSERT INTO evalnb.labels (label_no, queue, item_id, reviewer, kind, label, value, key, "
        "db_user, created_at) VALUES (999999, %(q)s, 0, 'mallory', 'review', 'pass', 1, 'x', "
        "'lead', '2000-01-01')",
        q,
    )
    forged = _sql_as(
        pg_server.dsn(),
        "SELECT label_no, db_user, created_at > now() - interval '1 minute' FROM evalnb.labels "
        "WHERE queue = %(q)s AND reviewer = 'mallory'",
        q,
    )
    assert forged[0][0] != 999999 and forged[0][1] == "mallory" and forged[0][2] is True
    with pytest.raises(Exception, match="finite number"):
        _sql_as(
            mal,
            "INSERT INTO evalnb.labels (queue, item_id, reviewer, kind, label, value, key) "
            "VALUES (%(q)s, 1, 'mallory', 'review', 'maybe', 1, 'y')",
            q,
        )
    ann = evalnb.ReviewQueue.open(pg_server.dsn("ann"), queue.name)
    with pytest.raises(evalnb.ReviewError, match="never reserved"):
        ann.submit(2, "pass", reviewer="ann")
    with pytest.raises(Exception, match="never reserved"):
        _sql_as(
            mal,
            "INSERT INTO evalnb.labels (queue, item_id, reviewer, kind, label, value, key) "
            "VALUES (%(q)s, 0, 'ann', 'review', 'pass', 1, 'z')",
            q,
        )
    # everyone else still labels: the label numbers are the sequence's, no collision
    while (item := ann.next("ann")) is not None:
        ann.submit(item, "fail", reviewer="ann")
    assert sorted(queue.labels().filter(pl.col("reviewer") == "ann")["item_id"]) == [0, 1, 2]
    # item 0 holds mallory's label (her lease, taken by hand, was a lease like any) and
    # ann's; 1 and 2 wait for their second label
    assert queue.remaining() == 2
    pulled = _lab(3)
    pulled.calibration.pull_labels(queue, rule="all")  # 'maybe' never got in to block a pull
    ann.close()
    queue.close()


def test_a_torn_outbox_line_does_not_swallow_the_next_label(tmp_path: Path) -> None:
    box = Outbox(tmp_path / "box.jsonl")
    first = box.put(0, "pass", reviewer="ann", note=None)
    with box.path.open("ab") as f:  # a kill mid-write: half a line, no newline
        f.write(b'{"op": "label", "key": "torn", "item_')
    second = box.put(1, "fail", reviewer="ann", note="lone \udc80 surrogate")
    with box.path.open("a", encoding="utf-8") as f:
        f.write('{"op": "sent"}\n[1, 2]\n"text"\n{"op": "label", "key": 3}\n')
    assert [e["key"] for e in box.pending()] == [first, second]
    assert box.pending()[1]["note"] == "lone \ufffd surrogate"
    assert box.damaged() == 5  # the torn line and four that are JSON but not entries


def test_a_passing_refusal_leaves_the_label_waiting_then_it_is_sent(tmp_path: Path) -> None:
    from evalnb_testkit.pg_server import start_server

    server = start_server()
    try:
        queue = _queue(_lab(2), server.dsn(), per_item=1)
        item = queue.next("ann")
        assert item is not None
        box = Outbox(tmp_path / "box.jsonl")
        box.put(item.item_id, "pass", reviewer="ann", note=None)
        # a failover: the server takes no writes for a moment
        server.psql("ALTER SYSTEM SET default_transaction_read_only = on")
        server.psql("SELECT pg_reload_conf()")
        time.sleep(0.3)
        with pytest.raises(evalnb.ReviewUnavailable, match="read-only"):
            queue.submit(item, "fail", reviewer="ann")
        done = box.flush(queue)
        assert (done.sent, done.waiting, done.refused) == (0, 1, [])
        server.psql("ALTER SYSTEM RESET default_transaction_read_only")
        server.psql("SELECT pg_reload_conf()")
        time.sleep(0.3)
        done = box.flush(queue)
        assert (done.sent, done.waiting, done.refused) == (1, 0, [])
        assert queue.labels()["label"].to_list() == ["pass"]
        queue.close()
    finally:
        server.stop(remove=True)


def test_two_flushes_at_once_send_each_label_once(pg_server: PgServer, tmp_path: Path) -> None:
    queue = _queue(_lab(6), pg_server.dsn(), per_item=1)
    box = Outbox(tmp_path / "box.jsonl")
    while (item := queue.next("ann")) is not None:
        box.put(item.item_id, "pass", reviewer="ann", note=None)
    results = []
    threads = [threading.Thread(target=lambda: results.append(box.flush(queue))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(r.sent for r in results) == 6 and not any(r.refused for r in results)
    assert queue.history().height == 6
    queue.close()


def test_pulls_speak_with_one_voice_and_retract_what_no_longer_holds(
    pg_server: PgServer,
) -> None:
    lab = _lab(2)
    queue = _queue(lab, pg_server.dsn(), per_item=2, strategy="random")
    for reviewer in ("ann", "bob"):
        while (item := queue.next(reviewer)) is not None:
            queue.submit(
                item,
                "pass" if item.item_id == 0 or reviewer == "ann" else "fail",
                reviewer=reviewer,
            )
    # item 0: both pass (a majority); item 1: a tie, which the lead adjudicates
    queue.adjudicate(1, "fail", reviewer="lead")

    def verdicts() -> dict[str, bool | None]:
        found = human_verdicts(lab.labels, EV, EV).join(
            queue.items().select("case_id", "item_id"), on="case_id"
        )
        got = {r["item_id"]: r["human_pass"] for r in found.iter_rows(named=True)}
        return {f"item{i}": got.get(i) for i in (0, 1)}

    lab.calibration.pull_labels(queue, rule="adjudicated")
    assert verdicts() == {"item0": True, "item1": False}
    # another rule after it: the adjudication is final under every rule, never retracted
    lab.calibration.pull_labels(queue, rule="majority")
    assert verdicts() == {"item0": True, "item1": False}
    lab.calibration.pull_labels(queue, rule="all")
    assert verdicts() == {"item0": True, "item1": False}
    lab.calibration.pull_labels(queue, rule="adjudicated")
    assert verdicts() == {"item0": True, "item1": False}
    assert lab.calibration.pull_labels(queue, rule="adjudicated").height == 0  # nothing changed
    # an edit that turns item 0's majority into a tie retracts it on the next pull
    queue.submit(0, "fail", reviewer="bob")
    added = lab.calibration.pull_labels(queue, rule="majority")
    assert added["verdict"].null_count() >= 1
    assert verdicts() == {"item0": None, "item1": False}
    with pytest.raises(evalnb.ReviewError, match=r"lacks \d of the 2 answers"):
        _lab(1).calibration.pull_labels(queue)  # another lab: no orphan labels
    queue.close()


def test_next_tells_finished_from_come_back_and_the_documented_loop_reaches_n(
    pg_server: PgServer,
) -> None:
    queue = _queue(_lab(3), pg_server.dsn(), per_item=2, lease_s=1.0)
    held = [queue.next("gone") for _ in range(3)]  # a reviewer killed mid-items
    assert all(held)
    while (item := queue.next("ann")) is not None:  # per_item 2: the one slot left
        queue.submit(item, "pass", reviewer="ann")
    assert queue.remaining("ann").finished  # ann labelled all three: nothing can come to her
    cat = queue.remaining("cat")
    assert (cat.open, cat.held, cat.finished) == (0, 3, False)
    assert cat.next_in_s is not None and cat.next_in_s <= 1.0
    assert queue.next("cat") is None  # not now: the dead reviewer's leases still run
    started = time.monotonic()
    got = []
    while (item := queue.next("cat", wait=queue.lease_s + 5)) is not None:  # the docs' loop
        queue.submit(item, "fail", reviewer="cat")
        got.append(item.item_id)
    assert sorted(got) == [0, 1, 2] and time.monotonic() - started < 10
    counts = queue.labels().group_by("item_id").len()
    assert set(counts["len"]) == {2}  # exactly N on every item
    with pytest.raises(evalnb.ReviewError, match="wait is seconds"):
        queue.next("cat", wait=-1)
    queue.close()


def test_a_reviewer_killed_mid_items_takes_them_back_so_few_reviewers_reach_n(
    pg_server: PgServer,
) -> None:
    queue = _queue(_lab(3), pg_server.dsn(), per_item=2, lease_s=0.5)
    held = [queue.next("gone") for _ in range(3)]  # killed holding all three
    assert all(held)
    while (item := queue.next("ann")) is not None:
        queue.submit(item, "pass", reviewer="ann")
    time.sleep(0.7)  # gone's leases end; gone reopens the notebook under the same name
    back = []
    while (item := queue.next("gone", wait=1.0)) is not None:
        queue.submit(item, "fail", reviewer="gone")
        back.append(item.item_id)
    assert sorted(back) == [0, 1, 2]
    assert queue.remaining() == 0 and queue.remaining("gone").finished
    counts = queue.labels().group_by("item_id").agg(n=pl.len(), who=pl.col("reviewer").n_unique())
    assert set(counts["n"]) == {2} and set(counts["who"]) == {2}  # exactly N, N distinct
    queue.close()


def test_a_reviewer_role_renews_only_its_own_ended_lease_and_only_into_room(
    pg_server: PgServer,
) -> None:
    queue = _queue(_lab(1), pg_server.dsn(), per_item=1, lease_s=0.5)
    mal = _role(pg_server, "mallory")
    _role(pg_server, "ann")
    q = {"q": queue.name}
    renew = (
        "UPDATE evalnb.assignments SET state = 'leased' WHERE queue = %(q)s AND reviewer = %(r)s"
    )
    held = queue.next("mallory")
    assert held is not None
    before = _sql_as(mal, "SELECT lease_until FROM evalnb.assignments WHERE queue = %(q)s", q)
    _sql_as(mal, renew, {**q, "r": "mallory"})  # a live lease: not lengthened
    assert (
        _sql_as(mal, "SELECT lease_until FROM evalnb.assignments WHERE queue = %(q)s", q) == before
    )
    time.sleep(0.7)
    assert queue.next("ann") is not None  # the ended lease went to ann: the item is full
    _sql_as(mal, renew, {**q, "r": "mallory"})  # no room: nothing renewed
    _sql_as(mal, renew, {**q, "r": "ann"})  # RLS: another's row is not mallory's to touch
    live = _sql_as(
        mal,
        "SELECT reviewer FROM evalnb.assignments WHERE queue = %(q)s "
        "AND lease_until > clock_timestamp()",
        q,
    )
    assert [r[0] for r in live] == ["ann"]  # exactly N holders, never two
    queue.close()


def test_bad_arguments_names_and_labels_are_clear_errors(pg_server: PgServer) -> None:
    lab = _lab(2)
    for options, match in (
        ({"per_item": True}, "per_item"),
        ({"per_item": 10**10}, "per_item"),
        ({"lease_s": float("inf")}, "lease_s"),
        ({"lease_s": float("nan")}, "lease_s"),
        ({"n": -5}, "n is how many"),
    ):
        with pytest.raises(ValueError, match=match):
            _queue(lab, pg_server.dsn(), **options)
    queue = _queue(lab, pg_server.dsn(), per_item=1)
    item = queue.next("ann")
    assert item is not None
    with pytest.raises(evalnb.ReviewError, match="lone surrogate"):
        queue.next("bad \ud800 name")
    with pytest.raises(evalnb.ReviewError, match="lone surrogate"):
        evalnb.ReviewQueue.open(pg_server.dsn(), "queue \udfff")
    with pytest.raises(evalnb.ReviewError, match="finite number; got an integer"):
        queue.submit(item, 10**400, reviewer="ann")
    queue.submit(item, "pass", reviewer="ann", note="lone \ud800 in a note")
    assert queue.history()["note"].to_list() == ["lone \ufffd in a note"]
    shown = safe_dsn("host=127.0.0.1 user=ann password=pw1 sslpassword=pw2 dbname=postgres")
    assert "pw1" not in shown and "pw2" not in shown
    queue.close()


def test_a_wrong_password_and_a_malformed_string_are_said_at_once() -> None:
    from evalnb.team.local_server import LocalServer, postgres_bindir

    if postgres_bindir() is None:
        pytest.skip("PostgreSQL is not installed (Debian's postgresql; scripts/install)")
    server = LocalServer.start(password="s3cret")
    try:
        queue = _queue(_lab(1), server.dsn(), per_item=1)  # the right password works
        queue.close()
        started = time.monotonic()
        wrong = server.dsn().replace("s3cret", "wrong-pw")
        with pytest.raises(evalnb.ReviewError, match="refused the login") as caught:
            evalnb.ReviewQueue.open(wrong, "anything")
        assert "wrong-pw" not in str(caught.value) and not isinstance(
            caught.value, evalnb.ReviewUnavailable
        )
        with pytest.raises(evalnb.ReviewError, match="malformed"):
            evalnb.ReviewQueue.open("host=127.0.0.1 dbname", "anything")
        assert time.monotonic() - started < 5
    finally:
        server.stop(remove=True)


def test_agreement_leaves_nan_out_and_fleiss_skips_units_labelled_once() -> None:
    labels = pl.DataFrame(
        {
            "item_id": [0, 0, 1, 1, 2, 2],
            "reviewer": ["a", "b", "a", "b", "a", "b"],
            "value": [1.0, 1.0, 0.0, 0.0, 0.0, float("nan")],
        }
    )
    table = agreement_table(labels, value="value", level="interval", n_boot=20)
    alpha = table.filter(pl.col("measure") == "krippendorff_alpha_interval").row(0, named=True)
    assert alpha["estimate"] is not None and alpha["n_labels"] == 4  # NaN is no label
    nominal = pl.DataFrame(
        {
            "item_id": [0, 0, 1, 1, 2, 2, 3, 4, 5, 6, 7],
            "reviewer": ["a", "b", "a", "b", "a", "b", "a", "a", "a", "a", "a"],
            "label": ["pass", "pass", "fail", "fail", "pass", "fail", *["pass"] * 5],
        }
    )
    fleiss = agreement_table(nominal, n_boot=20).filter(pl.col("measure") == "fleiss_kappa")
    row = fleiss.row(0, named=True)
    assert row["n_items"] == 3 and row["estimate"] is not None  # the two-label units
