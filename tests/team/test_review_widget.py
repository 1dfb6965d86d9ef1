"""The labeler served from a review queue, and its outbox across a server that goes away."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl
import pytest

import evalnb
from evalnb.team.outbox import Outbox
from evalnb.widgets.queue_labeler import QueueLabeler
from evalnb_testkit.pg_server import start_server

if TYPE_CHECKING:
    from collections.abc import Callable

    from evalnb_testkit.pg_server import PgServer

pytestmark = pytest.mark.xdist_group("postgres")
EV = "ragas_string_similarity"


def _lab(n: int) -> evalnb.Lab:
    frame = pl.DataFrame(
        {
            "prompt": [f"q{i}?" for i in range(n)],
            "expected": [f"a {i}" for i in range(n)],
            "actual": [f"a {i}" if i % 2 else f"<b>b</b> {i}" for i in range(n)],
        }
    )
    return evalnb.evaluate(evalnb.load(frame), [EV], progress=False)


def _until(check: Callable[[], bool], seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def test_the_queue_labeler_keeps_labelling_offline_and_sends_each_label_once(
    tmp_path: Path,
) -> None:
    server: PgServer = start_server()  # its own: this test stops it
    try:
        queue = evalnb.review(_lab(8), server.dsn(), "team", evaluator=EV, metric=EV, per_item=1)
        outbox = tmp_path / "outbox.jsonl"
        w = evalnb.labeler(queue, reviewer="ann", outbox=outbox)
        assert isinstance(w, QueueLabeler)
        assert w.item is not None and w.item["prompt"].startswith("q")
        assert w._progress["total"] == 3  # three reserved ahead
        w.label("pass")
        _until(lambda: w.waiting == 0)
        server.stop()  # the server goes away
        w.label("fail", note="offline 1")
        w.label("pass")  # the third reserved item: still labelling
        assert w.waiting == 2
        _until(lambda: w._progress.get("offline") is True)
        server.ctl("start")  # back
        w.sync()
        assert w.waiting == 0 and not w._progress["offline"]
        lead = evalnb.ReviewQueue.open(server.dsn(), "team")
        history = lead.history()
        assert history.height == 3 and history["item_id"].n_unique() == 3
        assert "offline 1" in history["note"].to_list()
        w.close()
        # A kernel killed before the outbox noted "sent": the label goes again, and the
        # server's unique key keeps it once.
        box = Outbox(tmp_path / "again.jsonl")
        item = lead.next("bob")
        assert item is not None
        box.put(item.item_id, "pass", reviewer="bob", note=None)
        label_line = box.path.read_text(encoding="utf-8")
        assert box.flush(lead).sent == 1
        box.path.write_text(label_line, encoding="utf-8")  # the "sent" note lost
        assert box.flush(lead).sent == 1  # sent again: a no-op on the server
        assert lead.history().filter(pl.col("reviewer") == "bob").height == 1
        assert box.pending() == [] and box.path.read_text(encoding="utf-8") == ""
        # A label refused for good (the item given to others) is kept with its reason.
        late = box.put(item.item_id, "fail", reviewer="carl", note=None)
        flushed = box.flush(lead)
        assert flushed.refused and flushed.refused[0][0] == late
        assert "never reserved" in box.refused()[0][1]
        lead.close()
        queue.close()
    finally:
        server.stop()


def test_a_reopened_labeler_shows_what_a_killed_kernel_left_unsent(
    tmp_path: Path, pg_server: PgServer
) -> None:
    queue = evalnb.review(
        _lab(4), pg_server.dsn(), f"reopen-{tmp_path.name}", evaluator=EV, metric=EV
    )
    outbox = tmp_path / "outbox.jsonl"
    w = QueueLabeler(queue, reviewer="ann", outbox=outbox)
    shown = w._items[w.position].item_id  # the item on screen, reserved for ann
    w.close()
    # A label written to the outbox whose sending never happened (the kernel died):
    Outbox(outbox).put(shown, "pass", reviewer="ann", note=None)
    lines = [json.loads(x) for x in outbox.read_text(encoding="utf-8").splitlines()]
    assert lines[-1]["op"] == "label"
    again = QueueLabeler(queue, reviewer="ann", outbox=outbox)
    _until(lambda: again.waiting == 0)  # sent at open
    assert queue.history().height == 1
    again.close()
    queue.close()
