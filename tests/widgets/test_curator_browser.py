"""The suite curator in a real JupyterLab: keyboard accept, exclude, edit; every one stored."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

import evalnb
from evalnb_testkit.jupyter_harness import ARTIFACTS, lab_page, notebook, require_browser

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _status(page: Any, text: str) -> None:
    page.wait_for_function(
        "(t) => document.querySelector('.evalnb-curator .cu-head')?.textContent.includes(t)",
        arg=text,
    )


def test_keyboard_curation_is_stored_and_case_text_stays_text(tmp_path: Path) -> None:
    require_browser()
    frame = pl.DataFrame(
        {
            "prompt": [
                "What does <img src=x onerror=alert(1)> say?",
                "Second question?",
                "Third question?",
            ],
            "expected": ["<b>bold</b> claim", "Second answer.", "Third answer."],
        }
    )
    store = tmp_path / "lab.duckdb"
    evalnb.load(frame).save(store)
    ids = evalnb.open(store).cases["case_id"].to_list()
    cell = f"import evalnb\nlab = evalnb.open({str(store)!r})\nw = lab.curation.curator(reviewer='ann')\nw"
    notebook(tmp_path / "curate.ipynb", [cell])
    with lab_page(tmp_path, width=1300, height=1000) as (server, page):
        server.open(page, "curate.ipynb")
        server.run_cell(page, 0)
        page.wait_for_selector(".evalnb-curator .cu-card .cu-prompt")
        _status(page, "3 pending")
        assert "<img src=x onerror=alert(1)>" in page.locator(".cu-prompt .cu-text").text_content()
        assert page.locator(".evalnb-curator img, .evalnb-curator b").count() == 0
        page.click(".evalnb-curator .cu-head")  # focus the widget, as a reviewer would
        page.keyboard.press("a")
        _status(page, "1 accepted")
        page.keyboard.press("n")
        page.keyboard.type("asks two things")
        page.keyboard.press("Enter")
        page.keyboard.press("x")
        _status(page, "1 excluded")
        page.keyboard.press("e")
        page.wait_for_selector(".evalnb-curator .cu-editor:not([hidden])")
        page.fill(".evalnb-curator .cu-edit-prompt", "Third question, made precise?")
        page.press(".evalnb-curator .cu-edit-prompt", "Control+Enter")
        _status(page, "1 edited")
        ARTIFACTS.joinpath("curator").mkdir(parents=True, exist_ok=True)
        page.locator(".evalnb-curator").screenshot(path=str(ARTIFACTS / "curator" / "done.png"))
        # No command-mode key reached the notebook (a would insert a cell, x cut one).
        assert page.evaluate("window.__nb.content.model.cells.length") == 1
    log = evalnb.open(store).table("curation")
    assert log.select("case_id", "action").rows() == [
        (ids[0], "accept"),
        (ids[1], "exclude"),
        (ids[2], "edit"),
    ]
    assert log["note"].to_list() == [None, "asks two things", None]
    assert log["prompt"].to_list()[2] == "Third question, made precise?"
    assert log["expected"].to_list()[2] is None  # the answer was left as it was
