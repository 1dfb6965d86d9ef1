"""Review queues on a real PostgreSQL server (issue 44): overlap, leases, blind review, pulls.

The server is started by evalnb_testkit/pg_server.py (initdb + pg_ctl on a temporary folder).
Reviewers run as separate processes where the guarantee is about concurrency.
"""

from __future__ import annotations

import multiprocessing as mp
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl
import pytest

import evalnb

if TYPE_CHECKING:
    from evalnb_testkit.pg_server import PgServer

pytestmark = pytest.mark.xdist_group("postgres")
EV = "ragas_string_similarity"  # no model: 1 - normalised edit distance


def _lab(n: int = 40, seed: int = 0) -> evalnb.Lab:
    rng = np.random.default_rng(seed)
    frame = pl.DataFrame(
        {
            "prompt": [f"question {i}?" for i in range(n)],
            "expected": [f"answer {i}" for i in range(n)],
            "actual": [f"answer {i}" if rng.random() < 0.6 else f"other {i}" for i in range(n)],
            "model": ["m"] * n,
        }
    )
    return evalnb.evaluate(evalnb.load(frame), [EV], progress=False)


def _name() -> str:
    return f"q-{uuid.uuid4().hex[:8]}"


def _queue(
    lab: evalnb.Lab, dsn: str, name: str | None = None, **options: object
) -> evalnb.ReviewQueue:
    """Publish the lab's rows of ``EV`` as a queue (a fresh name unless given)."""
    return evalnb.review(lab, dsn, name or _name(), evaluator=EV, metric=EV, **options)  # type: ignore[arg-type] - options as the test passes them


def _reviewer(dsn: str, name: str, reviewer: str, out: mp.Queue) -> None:  # type: ignore[type-arg]
    queue = evalnb.ReviewQueue.open(dsn, name)
    done = []
    while (item := queue.next(reviewer)) is not None:
        queue.submit(
            item, "pass" if hash((reviewer, item.item_id)) % 3 else "fail", reviewer=reviewer
        )
        done.append(item.item_id)
    queue.close()
    out.put((reviewer, done))


def test_every_item_gets_exactly_n_distinct_reviewers_under_concurrency(
    pg_server: PgServer,
) -> None:
    lab = _lab(60)
    name = _name()
    queue = _queue(lab, pg_server.dsn(), name, per_item=3, strategy="random")
    ctx = mp.get_context("spawn")
    out: mp.Queue = ctx.Queue()  # type: ignore[type-arg]
    workers = [
        ctx.Process(target=_reviewer, args=(pg_server.dsn(), name, f"r{k}", out)) for k in range(6)
    ]
    for w in workers:
        w.start()
    results = dict(out.get(timeout=300) for _ in workers)
    for w in workers:
        w.join(timeout=60)
    labels = queue.labels()
    per_item = labels.group_by("item_id").agg(n=pl.len(), distinct=pl.col("reviewer").n_unique())
    assert per_item.height == queue.items().height == 60
    assert set(per_item["n"]) == {3} and set(per_item["distinct"]) == {3}
    # every acknowledged label is there, once
    assert sum(len(v) for v in results.values()) == labels.height == 180
    assert queue.history().height == 180
    overall = queue.progress().filter(pl.col("overall")).row(0, named=True)
    assert overall["reviewer"] == "(all reviewers)"
    assert overall["complete"] == 60 and overall["labelled"] == 180
    queue.close()


def test_a_reviewer_never_gets_an_item_twice_and_leases_expire(pg_server: PgServer) -> None:
    lab = _lab(4)
    queue = _queue(lab, pg_server.dsn(), per_item=1, lease_s=0.5)
    first = queue.next("ann")
    assert first is not None and "answer" in first.content
    assert "value" not in first.content and "passed" not in first.content  # blind by default
    seen = {first.item_id}
    while (item := queue.next("ann")) is not None:
        assert item.item_id not in seen
        seen.add(item.item_id)
    assert len(seen) == 4
    assert queue.next("bob") is None  # every item held by ann (per_item=1)
    time.sleep(0.7)  # ann's leases end
    bobs = queue.next("bob")
    assert bobs is not None
    queue.submit(bobs, "pass", reviewer="bob")
    with pytest.raises(evalnb.ReviewError, match=r"other reviewer\(s\) took it"):
        queue.submit(bobs.item_id, "fail", reviewer="ann")  # too late: bob has it
    other = next(i for i in seen if i != bobs.item_id)
    queue.submit(other, "fail", reviewer="ann")  # expired, but nobody took it: accepted
    with pytest.raises(evalnb.ReviewError, match="never reserved"):
        queue.submit(other, "fail", reviewer="carl")
    queue.close()


def test_edits_keep_history_resends_are_no_ops_and_hostile_text_is_data(
    pg_server: PgServer,
) -> None:
    lab = _lab(3)
    name = "q'; DROP TABLE evalnb.labels; --" + uuid.uuid4().hex[:6]
    queue = _queue(lab, pg_server.dsn(), name, per_item=2)
    reviewer = "Robert'); DROP TABLE evalnb.items;--\u2028\U0001f600"
    item = queue.next(reviewer)
    assert item is not None
    queue.submit(item, "pass", reviewer=reviewer, note="$$ ; SELECT pg_sleep(10); \x00", key="k1")
    queue.submit(item, "pass", reviewer=reviewer, key="k1")  # a resend: nothing new
    queue.submit(item, "fail", reviewer=reviewer, note="changed my mind")
    history = queue.history()
    assert history["reviewer"].to_list() == [reviewer, reviewer]
    assert history["old"].to_list() == [None, "pass"] and history["new"].to_list() == [
        "pass",
        "fail",
    ]
    assert history["note"][0] == "$$ ; SELECT pg_sleep(10); \ufffd"
    assert queue.labels()["label"].to_list() == ["fail"]
    again = evalnb.ReviewQueue.open(pg_server.dsn(), name)  # from another connection
    assert again.history().height == 2
    with pytest.raises(evalnb.ReviewError, match="label is"):
        again.submit(item, "maybe", reviewer=reviewer)
    with pytest.raises(evalnb.ReviewError, match="non-empty name"):
        again.next("")
    again.close()
    queue.close()


def test_blind_review_gives_the_item_not_the_others_labels(pg_server: PgServer) -> None:
    lab = _lab(2)
    queue = _queue(lab, pg_server.dsn(), per_item=2, strategy="random")
    a = queue.next("ann")
    assert a is not None
    queue.submit(a, "fail", reviewer="ann", note="ann's secret reasoning")
    b = queue.next("bob")
    assert b is not None and b.item_id == a.item_id  # the same item, to the second reviewer
    assert "fail" not in repr(b.content) and "secret" not in repr(b.content)
    # blind by default: not even the metric's verdict is sent
    assert set(b.content) == {"prompt", "expected", "answer", "contexts", "steps"}
    assert queue.spec["blind"] is True
    queue.close()


def test_the_dsn_password_is_nowhere_but_the_connection(pg_server: PgServer) -> None:
    pg_server.psql(
        "DO $$ BEGIN CREATE ROLE lead LOGIN SUPERUSER PASSWORD 'hunter2'; "
        "EXCEPTION WHEN duplicate_object THEN NULL; END $$"
    )
    lab = _lab(2)
    name = _name()
    queue = evalnb.review(
        lab,
        pg_server.dsn("lead", "hunter2"),
        name,
        evaluator=EV,
        metric=EV,
    )
    assert "hunter2" not in repr(queue)
    dump = pg_server.psql(
        "SELECT string_agg(t::text, ' ') FROM (SELECT * FROM evalnb.queues) t"
    ) + pg_server.psql("SELECT string_agg(t::text, ' ') FROM (SELECT * FROM evalnb.items) t")
    assert "hunter2" not in dump and name in dump
    item = queue.next("ann")
    assert item is not None
    queue.submit(item, "pass", reviewer="ann")
    lab.calibration.pull_labels(queue)
    assert "hunter2" not in str(lab.table("info").to_dicts())
    queue.close()
    with pytest.raises(evalnb.ReviewUnavailable) as caught:
        evalnb.ReviewQueue.open("postgresql://lead:hunter2@127.0.0.1:1/postgres", name, timeout_s=2)
    assert "hunter2" not in str(caught.value) and "cannot be reached" in str(caught.value)


def test_agreement_disagreements_adjudication_and_pulled_labels_drive_calibration(
    pg_server: PgServer, tmp_path: Path
) -> None:
    lab = _lab(30, seed=3)
    lab = evalnb.open(lab.save(tmp_path / "lab.duckdb"))
    # not blind: these scripted reviewers read the metric's verdict to make their labels
    queue = _queue(lab, pg_server.dsn(), per_item=3, strategy="random", blind=False)
    rng = np.random.default_rng(0)
    for reviewer in ("ann", "bob", "cat"):
        while (item := queue.next(reviewer)) is not None:
            truth = "pass" if item.content["passed"] else "fail"
            flip = rng.random() < 0.15
            queue.submit(
                item, ("fail" if truth == "pass" else "pass") if flip else truth, reviewer=reviewer
            )
    agreement = queue.agreement(n_boot=200)
    assert set(agreement["measure"]) == {
        "krippendorff_alpha_nominal",
        "fleiss_kappa",
        "cohen_kappa",
    }
    alpha = agreement.filter(pl.col("measure") == "krippendorff_alpha_nominal").row(0, named=True)
    assert (
        0.0 < alpha["estimate"] <= 1.0 and alpha["ci_low"] <= alpha["estimate"] <= alpha["ci_high"]
    )
    split = queue.disagreements()
    assert split.height > 0 and split["adjudicated"].null_count() == split.height
    queue.adjudicate(int(split["item_id"][0]), "pass", reviewer="lead", note="checked the source")
    assert queue.disagreements()["adjudicated"][0] == "pass"

    added = lab.calibration.pull_labels(queue, rule="adjudicated")
    assert added.height == 30  # per_item=3: no ties
    assert lab.calibration.pull_labels(queue, rule="adjudicated").height == 0  # pulled before
    assert added.filter(pl.col("reviewer") == "lead").height == 1
    reopened = evalnb.open(tmp_path / "lab.duckdb")  # committed to the store
    assert reopened.labels.height == 30
    fit = reopened.calibration.recalibrate(EV, EV, apply=False, n_boot=50)
    assert fit is not None
    board = reopened.calibration.corrected_leaderboard(EV, EV)
    assert board["corrected"].is_not_null().all()
    queue.close()


def test_row_level_security_binds_each_role_to_its_own_name(pg_server: PgServer) -> None:
    from evalnb.team.security import grant, secure

    lab = _lab(4)
    name = _name()
    queue = _queue(lab, pg_server.dsn(), name, per_item=2)
    secure(pg_server.dsn())
    secure(pg_server.dsn())  # idempotent
    for role in ("ann", "bob", "lea"):
        pg_server.psql(
            f"DO $$ BEGIN CREATE ROLE {role} LOGIN; "
            "EXCEPTION WHEN duplicate_object THEN NULL; END $$"
        )
    grant(pg_server.dsn(), "ann")
    grant(pg_server.dsn(), "bob")
    grant(pg_server.dsn(), "lea", lead=True)
    with pytest.raises(evalnb.ReviewError, match="role"):
        grant(pg_server.dsn(), "nobody-here")  # no such role: the server says so
    ann = evalnb.ReviewQueue.open(pg_server.dsn("ann"), name)
    item = ann.next("ann")
    assert item is not None
    ann.submit(item, "pass", reviewer="ann", note="mine")
    with pytest.raises(evalnb.ReviewError, match="row-level security"):
        ann.next("bob")  # ann cannot hold items under bob's name
    with pytest.raises(evalnb.ReviewError, match="row-level security"):
        ann.adjudicate(item, "fail", reviewer="ann")  # nor adjudicate
    bob = evalnb.ReviewQueue.open(pg_server.dsn("bob"), name)
    got = bob.next("bob")
    assert got is not None and got.item_id == item.item_id
    assert bob.history().height == 0  # blind, on the server: ann's label is not bob's to see
    bob.submit(got, "fail", reviewer="bob")
    assert bob.history()["reviewer"].to_list() == ["bob"]
    lead = evalnb.ReviewQueue.open(pg_server.dsn("lea"), name)
    assert sorted(lead.history()["reviewer"]) == ["ann", "bob"]
    lead.adjudicate(item, "pass", reviewer="lea")
    assert lead.disagreements()["adjudicated"].to_list() == ["pass"]
    for q in (ann, bob, lead, queue):
        q.close()


def test_the_leads_command_line_creates_shows_and_pulls(
    pg_server: PgServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from evalnb.cli.main import main

    store = _lab(6).save(tmp_path / "lab.duckdb")
    name = _name()
    monkeypatch.setenv("EVALNB_REVIEW_DSN", pg_server.dsn())
    args = ["--name", name]
    assert (
        main(
            [
                "review",
                "create",
                str(store),
                *args,
                "--evaluator",
                EV,
                "--metric",
                EV,
                "--per-item",
                "1",
                "--strategy",
                "random",
            ]
        )
        == 0
    )
    assert "published 6 items" in capsys.readouterr().out
    queue = evalnb.ReviewQueue.open(pg_server.dsn(), name)
    while (item := queue.next("ann")) is not None:
        queue.submit(item, "pass", reviewer="ann")
    queue.close()
    assert main(["review", "status", *args]) == 0
    shown = capsys.readouterr().out
    assert "ann" in shown and "krippendorff_alpha_nominal" in shown
    assert main(["review", "pull", str(store), *args, "--rule", "all"]) == 0
    assert "pulled 6 labels" in capsys.readouterr().out
    assert evalnb.open(store).labels.height == 6
    monkeypatch.delenv("EVALNB_REVIEW_DSN")
    assert main(["review", "status", *args]) == 2
    assert "EVALNB_REVIEW_DSN" in capsys.readouterr().err


def test_a_skipped_item_goes_to_another_reviewer_never_back(pg_server: PgServer) -> None:
    queue = _queue(_lab(2), pg_server.dsn(), per_item=1)
    item = queue.next("ann")
    assert item is not None and item.reviewer == "ann"
    queue.skip(item)  # the reviewer it was reserved for
    other = queue.next("ann")
    assert other is not None and other.item_id != item.item_id
    assert queue.next("ann") is None  # never the skipped one again
    bob = queue.next("bob")
    assert bob is not None and bob.item_id == item.item_id  # back in the queue for others
    progress = queue.progress().filter(pl.col("reviewer") == "ann").row(0, named=True)
    assert progress["skipped"] == 1 and progress["holding"] == 1
    queue.close()


def test_a_label_on_a_skipped_item_needs_room_like_a_late_one(pg_server: PgServer) -> None:
    queue = _queue(_lab(1), pg_server.dsn(), per_item=1)
    item = queue.next("ann")
    assert item is not None
    queue.skip(item)
    taken = queue.next("bob")
    assert taken is not None and taken.item_id == item.item_id
    with pytest.raises(evalnb.ReviewError, match=r"other reviewer\(s\) took it"):
        queue.submit(item, "pass", reviewer="ann")  # skipped, then given to bob: no room
    queue.submit(taken, "fail", reviewer="bob")
    assert queue.labels()["reviewer"].to_list() == ["bob"]
    queue.close()
