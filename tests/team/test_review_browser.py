"""The queue-served labeler in a real JupyterLab (issue 44): keys label to the server, and
while the server is away the labels wait in the outbox and go when it is back."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import evalnb
from evalnb_testkit.jupyter_harness import ARTIFACTS, lab_page, notebook, require_browser
from evalnb_testkit.pg_server import start_server

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("postgres")]
EV = "ragas_string_similarity"


def _progress_has(page: Any, *texts: str) -> None:
    page.wait_for_function(
        "(ts) => { const s = document.querySelector('.evalnb-labeler .lb-progress')"
        "?.textContent ?? ''; return ts.every((t) => s.includes(t)); }",
        arg=list(texts),
        timeout=60_000,
    )


def test_the_queue_labeler_labels_from_the_keyboard_and_waits_out_the_server(
    tmp_path: Path,
) -> None:
    require_browser()
    server = start_server()
    try:
        frame = pl.DataFrame(
            {
                "prompt": [f"question <script>x</script> {i}?" for i in range(6)],
                "expected": [f"answer {i}" for i in range(6)],
                "actual": [
                    f"answer {i}" if i % 2 else f"<img src=x onerror=alert(1)> {i}"
                    for i in range(6)
                ],
            }
        )
        lab = evalnb.evaluate(evalnb.load(frame), [EV], progress=False)
        evalnb.review(lab, server.dsn(), "team", evaluator=EV, metric=EV, per_item=1).close()
        cell = (
            "import evalnb\n"
            f"queue = evalnb.ReviewQueue.open({server.dsn()!r}, 'team', timeout_s=3)\n"
            f"w = evalnb.labeler(queue, reviewer='ann', outbox={str(tmp_path / 'outbox.jsonl')!r})\n"
            "w"
        )
        notebook(tmp_path / "team.ipynb", [cell])
        with lab_page(tmp_path, width=1300, height=1000) as (jlab, page):
            jlab.open(page, "team.ipynb")
            jlab.run_cell(page, 0)
            page.wait_for_selector(".evalnb-labeler .lb-card .lb-prompt")
            assert page.locator(".evalnb-labeler script, .evalnb-labeler img").count() == 0
            page.click(".evalnb-labeler .lb-progress")  # focus the widget
            page.keyboard.press("p")
            # Both at once: "all labels sent" alone is already true before the key, and
            # "1 / " alone is true while the label still waits in the outbox (the sender
            # thread may not have run yet on a busy machine).
            _progress_has(page, "1 / ", "all labels sent")
            server.stop()  # the server goes away
            page.keyboard.press("f")
            _progress_has(page, "offline: 1 label(s) wait to be sent")
            page.wait_for_selector(".evalnb-labeler.offline")
            ARTIFACTS.joinpath("review").mkdir(parents=True, exist_ok=True)
            page.locator(".evalnb-labeler").screenshot(
                path=str(ARTIFACTS / "review" / "offline.png")
            )
            server.ctl("start")  # back: the widget's own thread sends the label
            _progress_has(page, "all labels sent")
            with evalnb.ReviewQueue.open(server.dsn(), "team") as lead:
                history = lead.history()
            assert history["new"].to_list() == ["pass", "fail"]
            assert history["reviewer"].to_list() == ["ann", "ann"]
            assert history["item_id"].n_unique() == 2
    finally:
        server.stop()
        time.sleep(0.1)
