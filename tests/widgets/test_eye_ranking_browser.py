"""The eye drills into a query's ranked list: grades, texts and missed documents, as text."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import evalnb
from evalnb_testkit.jupyter_harness import ARTIFACTS, lab_page, notebook, require_browser

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_the_case_panel_shows_the_ranking_with_its_grades(tmp_path: Path) -> None:
    require_browser()
    evil = "<img src=x onerror=window.__evalnb_xss=1> the warranty lasts two years"
    lab = evalnb.load(
        {"rag": {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}},
        qrels={"q1": {"d1": 2, "d3": 0, "d4": 3}},
    )
    lab = lab.with_tables(
        {
            "cases": lab.cases.with_columns(prompt=pl.lit("How long is the warranty?")),
            "chunks": pl.DataFrame(
                {"chunk_id": ["d1", "d2", "d3"], "text": [evil, "shipping costs", "returns"]}
            ),
        }
    )
    store = tmp_path / "rag.duckdb"
    evalnb.evaluate(lab, "retrieval", progress=False).save(store)
    code = (
        "import evalnb\n"
        f"lab = evalnb.open({str(store)!r})\n"
        "w = lab.eye()\n"
        "w.path = ['retrieval', 'retrieval', 'ndcg_cut_10', 'rag']\n"
        "w.selected_case = {'case_id': 'q1', 'model': 'rag'}\n"
        "w"
    )
    notebook(tmp_path / "rag.ipynb", [code])
    with lab_page(tmp_path, width=1400, height=1000) as (server, page):
        server.open(page, "rag.ipynb")
        server.run_cell(page, 0)
        page.wait_for_selector(".evalnb-eye .ee-panel ol.ee-ranked li")
        heading = page.locator(".ee-panel section.ee-ranking > h4")
        assert heading.text_content() == "Retrieved documents (3; 1 of 2 relevant shown)"
        ids = page.locator(".ee-panel .ee-doc-id").all_text_contents()
        assert ids == ["#1 d1", "#2 d2", "#3 d3"]
        classes = [
            page.locator(".ee-panel .ee-doc").nth(i).get_attribute("class") for i in range(3)
        ]
        assert classes == [
            "ee-doc ee-doc-relevant",
            "ee-doc ee-doc-unjudged",
            "ee-doc ee-doc-irrelevant",
        ]
        assert page.locator(".ee-panel .ee-doc-text").first.text_content() == evil
        assert page.locator(".ee-panel .ee-missed").text_content() == (
            "relevant, never retrieved: d4 (grade 3)"
        )
        assert page.locator(".ee-panel img").count() == 0
        assert page.evaluate("window.__evalnb_xss") is None
        ARTIFACTS.joinpath("eye").mkdir(parents=True, exist_ok=True)
        page.locator(".evalnb-eye .ee-panel").screenshot(
            path=str(ARTIFACTS / "eye" / "ranking.png")
        )
