"""The monitor view in a real JupyterLab, offline: it draws, escapes, and a click opens the eye."""

from __future__ import annotations

from pathlib import Path

import pytest

import evalnb
from evalnb_testkit.jupyter_harness import ARTIFACTS, lab_page, notebook, require_browser
from evalnb_testkit.monitor_traffic import calibrated_bundle, write_traffic

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_the_monitor_view_draws_offline_and_opens_a_clicked_window_in_the_eye(
    tmp_path: Path,
) -> None:
    require_browser()
    bundle = calibrated_bundle(tmp_path / "cal.json")
    truth = write_traffic(tmp_path / "otlp", days=3, per_day=60)
    mon = evalnb.monitor(bundle, tmp_path / "m.duckdb")
    mon.ingest(tmp_path / "otlp")
    sample = mon.sample_for_review(20, windows=None)
    w = evalnb.labeler(sample, "rouge", "rouge_l", reviewer="bob", n=1000, strategy="random")
    while w.remaining:
        w.label("pass" if truth[w.item["case_id"]] else "fail")
    mon.add_labels(sample)
    cell = (
        "import evalnb\n"
        f"mon = evalnb.monitor({str(bundle)!r}, {str(tmp_path / 'm.duckdb')!r})\n"
        "view = mon.view('1d')\n"
        "view"
    )
    notebook(tmp_path / "monitor.ipynb", [cell])
    with lab_page(tmp_path, width=1300, height=1200) as (jlab, page):
        jlab.open(page, "monitor.ipynb")
        jlab.run_cell(page, 0, timeout_ms=300_000)
        page.wait_for_selector(".evalnb-monitor .mn-panel svg path.mn-band")
        panels = page.locator(".evalnb-monitor .mn-panel")
        assert panels.count() == 2  # rouge_l and question drift
        assert page.locator(".evalnb-monitor .mn-panel").first.locator(".mn-window").count() == 3
        ARTIFACTS.joinpath("monitor").mkdir(parents=True, exist_ok=True)
        page.locator(".evalnb-monitor").screenshot(path=str(ARTIFACTS / "monitor" / "view.png"))
        page.locator(".evalnb-monitor .mn-panel").first.locator(
            ".mn-window[data-window='2026-11-02T00:00:00Z'] .mn-hit"
        ).click()
        page.wait_for_selector(".evalnb-eye", timeout=120_000)
        assert "Window 2026-11-02 00:00 UTC" in page.inner_text(".jp-OutputArea")
