"""Blind labelling: the metric's score waits for the label, and the batch records it (issue 55.2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl
import pytest

import evalnb
from evalnb.calibration.labels import BATCH_KEY

if TYPE_CHECKING:
    from evalnb_testkit.pg_server import PgServer


def _lab() -> evalnb.Lab:
    frame = pl.DataFrame(
        {
            "prompt": [f"q{i}" for i in range(6)],
            "expected": [f"answer {i}" for i in range(6)],
            "actual": [f"answer {i}" if i % 2 else f"other {i}" for i in range(6)],
        }
    )
    return evalnb.evaluate(evalnb.load(frame), ["rouge"], progress=False)


def _batches(lab: evalnb.Lab) -> list[dict[str, object]]:
    info = lab.table("info").filter(pl.col("key").str.starts_with(BATCH_KEY))
    return [json.loads(v) for v in info["value"]]


def test_the_labeler_hides_the_score_until_the_item_is_labelled() -> None:
    lab = _lab()
    w = evalnb.labeler(lab, "rouge", "rouge_l", reviewer="ann", n=6, strategy="random")
    shown = w._item
    assert shown is not None and shown["hidden"] is True
    assert shown["value"] is None and shown["passed"] is None and shown["threshold"] is None
    assert shown["actual"] and shown["expected"]  # the answer itself is there to judge
    w.label("pass")
    w.go(0)  # back to the labelled one: now the score is shown beside the label
    assert w._item is not None and w._item["value"] is not None and "hidden" not in w._item
    assert _batches(lab)[0]["blind"] is True
    sighted = evalnb.labeler(_lab(), "rouge", "rouge_l", reviewer="bo", n=6, blind=False)
    assert sighted._item is not None and sighted._item["value"] is not None
    with pytest.raises(ValueError, match="blind review"):
        w.label("agree")


@pytest.mark.xdist_group("postgres")
def test_a_blind_queue_never_sends_the_score_and_the_pull_records_it(
    pg_server: PgServer, tmp_path: Path
) -> None:
    lab = _lab()
    queue = evalnb.review(
        lab,
        pg_server.dsn(),
        f"blind-{tmp_path.name[-8:]}",
        evaluator="rouge",
        metric="rouge_l",
        per_item=1,
        strategy="random",
    )
    dump = pg_server.psql(
        f"SELECT string_agg(payload::text, ' ') FROM evalnb.items WHERE queue = '{queue.name}'"
    )
    assert '"passed"' not in dump and '"value"' not in dump  # not on the server at all
    w = evalnb.labeler(queue, reviewer="ann", outbox=tmp_path / "box.jsonl")
    try:
        assert w._item is not None and w._item["hidden"] is True
        while w.item is not None and w.item["human"] is None:
            w.label("pass")
            w.sync()
        w.stop()  # the widget stays shown (a notebook run top to bottom keeps its view)
    finally:
        w.close()
    lab.calibration.pull_labels(queue, rule="all")
    record = next(b for b in _batches(lab) if b.get("queue") == queue.name)
    assert record["blind"] is True
    queue.close()
