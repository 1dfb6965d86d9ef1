"""The relevance labeler in a real JupyterLab: keys 0-3 grade pooled documents into qrels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

import evalnb
from evalnb_testkit.jupyter_harness import ARTIFACTS, lab_page, notebook, require_browser

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _progress(page: Any, done: int, total: int) -> None:
    page.wait_for_function(
        "(t) => document.querySelector('.evalnb-relevance .lb-progress')?.textContent.startsWith(t)",
        arg=f"{done} / {total} graded",
    )


def test_a_reviewer_grades_the_pool_from_the_keyboard(tmp_path: Path) -> None:
    require_browser()
    run = {"bm25": {"q1": {"d1": 3.0, "d2": 2.0}}, "dense": {"q1": {"d3": 3.0, "d1": 1.0}}}
    lab = evalnb.load(run, qrels={"q1": {"d9": 1}})
    docs = {
        "d1": "Cats sleep sixteen hours a day.",
        "d2": "Dogs bark.",
        "d3": "<img src=x onerror=alert(1)> text",
    }
    lab = lab.with_tables(
        {
            "cases": lab.cases.with_columns(prompt=pl.lit("How long do cats sleep?")),
            "chunks": pl.DataFrame({"chunk_id": list(docs), "text": list(docs.values())}),
        }
    )
    store = tmp_path / "lab.duckdb"
    lab.save(store)
    cell = (
        f"import evalnb\nlab = evalnb.open({str(store)!r})\n"
        "w = evalnb.labeler(lab, task='relevance', reviewer='ann', k=10)\nw"
    )
    notebook(tmp_path / "grade.ipynb", [cell])
    with lab_page(tmp_path, width=1300, height=1000) as (server, page):
        server.open(page, "grade.ipynb")
        server.run_cell(page, 0)
        page.wait_for_selector(".evalnb-relevance .lb-card .lb-prompt")
        _progress(page, 0, 3)
        assert "How long do cats sleep?" in page.locator(".lb-prompt .lb-text").text_content()
        assert "sixteen hours" in page.locator(".lb-actual .lb-text").text_content()
        page.click(".evalnb-relevance .lb-progress")  # focus the widget, as a reviewer would
        page.keyboard.press("3")
        _progress(page, 1, 3)
        # the passage is text: its markup is shown, never run
        page.wait_for_function(
            "() => document.querySelector('.lb-actual .lb-text')?.textContent.includes('<img')"
        )
        assert page.locator(".evalnb-relevance img").count() == 0
        page.keyboard.press("0")
        _progress(page, 2, 3)
        page.click(".evalnb-relevance .lb-key-2partlyanswers")
        _progress(page, 3, 3)
        ARTIFACTS.joinpath("labeler").mkdir(parents=True, exist_ok=True)
        page.locator(".evalnb-relevance").screenshot(
            path=str(ARTIFACTS / "labeler" / "relevance.png")
        )
        assert (
            page.evaluate("window.__nb.content.model.cells.length") == 1
        )  # no key reached the notebook
    stored = evalnb.open(store).table("qrels").filter(pl.col("source") == "reviewer:ann")
    assert dict(stored.select("doc_id", "relevance").rows()) == {"d1": 3, "d3": 0, "d2": 2}
