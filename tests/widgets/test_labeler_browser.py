"""The labeler in a real JupyterLab: keyboard labelling, kernel killed, nothing lost, resumed."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

import evalnb
from evalnb.calibration.labels import current_labels
from evalnb_testkit.jupyter_harness import ARTIFACTS, lab_page, notebook, require_browser
from evalnb_testkit.labs import synthetic_lab

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _progress(page: Any, done: int, total: int = 6) -> None:
    page.wait_for_function(
        "(t) => document.querySelector('.evalnb-labeler .lb-progress')?.textContent.startsWith(t)",
        arg=f"{done} / {total} labelled",
    )


def _shot(page: Any, name: str) -> None:
    ARTIFACTS.joinpath("labeler").mkdir(parents=True, exist_ok=True)
    page.locator(".evalnb-labeler").screenshot(path=str(ARTIFACTS / "labeler" / f"{name}.png"))


def test_keyboard_labels_survive_a_killed_kernel(tmp_path: Path) -> None:
    require_browser()
    lab, _ = synthetic_lab(40)
    store = tmp_path / "lab.duckdb"
    lab.save(store)
    cell = (
        f"import os, evalnb\nprint(os.getpid())\nlab = evalnb.open({str(store)!r})\n"
        "w = evalnb.labeler(lab, 'ev', 'score', reviewer='ann', n=6, strategy='random', seed=1)\nw"
    )
    notebook(tmp_path / "label.ipynb", [cell])
    with lab_page(tmp_path, width=1300, height=1000) as (server, page):
        server.open(page, "label.ipynb")
        pid = int(server.run_cell(page, 0).split()[0])
        page.wait_for_selector(".evalnb-labeler .lb-card .lb-prompt")
        _progress(page, 0)
        page.click(".evalnb-labeler .lb-progress")  # focus the widget, as a reviewer would
        # Answers are text: the markup in them is shown, not run.
        assert "<script>x</script>" in page.locator(".lb-actual .lb-text").text_content()
        assert page.locator(".evalnb-labeler script").count() == 0
        page.keyboard.press("p")
        _progress(page, 1)
        page.keyboard.press("f")
        _progress(page, 2)
        page.keyboard.press("n")
        page.keyboard.type("needs a source")
        page.keyboard.press("Enter")
        page.keyboard.press("p")
        _progress(page, 3)
        _shot(page, "0-labelling")
        page.keyboard.press("u")  # undo the third
        _progress(page, 2)
        page.wait_for_selector(".lb-human.none")
        page.keyboard.press("ArrowLeft")
        page.wait_for_selector(".lb-human.fail")  # the second item, labelled fail
        page.keyboard.press("ArrowRight")
        page.keyboard.press("p")
        _progress(page, 3)
        page.keyboard.press("f")
        _progress(page, 4)
        _shot(page, "1-four-labels")
        # The notebook kept its cells: no command-mode key reached it.
        assert page.evaluate("window.__nb.content.model.cells.length") == 1

        page.evaluate(
            """() => { window.__statuses = [];
                window.__nb.sessionContext.statusChanged.connect(
                    (_, s) => window.__statuses.push(s)); }"""
        )
        os.kill(pid, signal.SIGKILL)  # abrupt: no shutdown, no flush
        stored = evalnb.open(store).labels
        assert stored["verdict"].to_list() == ["pass", "fail", "pass", None, "pass", "fail"]
        assert stored["note"].to_list()[2] == "needs a source"
        assert stored["reviewer"].unique().to_list() == ["ann"]
        assert current_labels(stored, "ev", "score").height == 4

        # JupyterLab restarts the dead kernel; reopening the lab resumes the batch.
        page.wait_for_function(
            """() => window.__statuses.some(s => s !== 'idle' && s !== 'busy')
                     && window.__nb.sessionContext.session?.kernel?.status === 'idle'""",
            timeout=60_000,
        )
        # Lab tells the user the kernel died (a modal): acknowledge it like a user would.
        dialog = page.locator(".jp-Dialog .jp-mod-accept")
        if dialog.count():
            dialog.first.click()
        server.run_cell(page, 0)
        _progress(page, 4)
        page.wait_for_selector(".evalnb-labeler .lb-pos:text('#5')")
        _shot(page, "2-resumed")
        # Finish the batch: the calibration view appears; b draws the next batch.
        page.click(".evalnb-labeler .lb-progress")
        page.keyboard.press("f")
        _progress(page, 5)
        page.keyboard.press("p")
        _progress(page, 6)
        page.wait_for_selector(".evalnb-labeler .lb-result svg.lb-chart, .lb-result .lb-message")
        _shot(page, "3-batch-done")
        page.keyboard.press("b")
        _progress(page, 0)
