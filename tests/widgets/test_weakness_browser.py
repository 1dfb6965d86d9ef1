"""The weakness grid in a real JupyterLab (headless chromium): render, hover, click."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalnb.transforms import grid_cells, weakness_index
from evalnb_testkit.jupyter_harness import ARTIFACTS, lab_page, notebook, require_browser
from evalnb_testkit.weak_lab import PLANTED, weak_lab

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_grid_hover_and_click_reach_python(tmp_path: Path) -> None:
    require_browser()
    lab = weak_lab()
    store = tmp_path / "lab.duckdb"
    lab.save(store)
    cell = next(
        r
        for r in grid_cells(weakness_index(lab, "rouge", "rouge_l")).iter_rows(named=True)
        if (r["topic"], r["question_type"]) == PLANTED
    )
    notebook(
        tmp_path / "grid.ipynb",
        [
            f"import evalnb\nlab = evalnb.open({str(store)!r})\nw = lab.weakness('rouge', 'rouge_l')\nw"
        ],
    )
    with lab_page(tmp_path, width=1300, height=1100) as (server, page):
        server.open(page, "grid.ipynb")
        server.run_cell(page, 0)
        target = f".wk-cell[data-topic='{PLANTED[0]}'][data-qtype='{PLANTED[1]}']"
        page.wait_for_selector(f".evalnb-weakness svg.wk-grid {target}")
        assert page.locator(".wk-cell").count() == 20
        assert page.locator(".wk-dot").count() == 240
        assert page.locator(f"{target}.weak").count() == 1  # outlined as a weakness
        page.hover(f"{target} rect.wk-rect")
        page.wait_for_selector(".wk-tip:not([hidden])")
        assert page.locator(".wk-tip-n").text_content() == f"n {cell['n']}"
        ci = page.locator(".wk-tip-ci").text_content()
        assert ci == f"mean {cell['mean']:.3f} · 95 % CI {cell['ci_low']:.3f}–{cell['ci_high']:.3f}"
        ARTIFACTS.joinpath("weakness").mkdir(parents=True, exist_ok=True)
        page.locator(".evalnb-weakness").screenshot(
            path=str(ARTIFACTS / "weakness" / "grid-hover.png")
        )
        page.click(f"{target} rect.wk-rect")
        page.wait_for_selector(f"{target}.selected")
        assert server.run_code(page, "print(w.selected_cell)").strip() == str(list(PLANTED))
        assert server.run_code(page, "print(w.selection().height)").strip() == str(cell["n"])
        assert "weaknesses" in page.locator(".wk-list h4").text_content().lower()
