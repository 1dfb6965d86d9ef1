"""The HTML report (escaping, no network, no script) and the ZIP archive round trip."""

from __future__ import annotations

import zipfile
from pathlib import Path

import polars as pl
import pytest

import evalnb

_EVIL = [
    "<script>window.__pwned = 1</script>",
    '<img src=x onerror="window.__pwned = 2">',
    "fine answer about paris",
]


def _lab() -> evalnb.Lab:
    rows = [
        {
            "prompt": f"q{i} <b>bold</b>",
            "expected": "paris is the capital",
            "model": m,
            "actual": _EVIL[(i + k) % 3],
            "context": ["<iframe src='http://example.com'></iframe>"],
        }
        for i in range(6)
        for k, m in enumerate(["m<script>", "plain"])
    ]
    return evalnb.evaluate(
        evalnb.load(pl.DataFrame(rows)), ["rouge", "pii_leakage"], progress=False
    )


def test_report_escapes_every_model_text(tmp_path: Path) -> None:
    report = _lab().report(tmp_path / "r.html")
    html = report.html
    assert (tmp_path / "r.html").read_text(encoding="utf-8") == html
    assert str(report) == str(tmp_path / "r.html")  # printing it shows the path, not the page
    assert "<script>" not in html and "<img" not in html and "<iframe" not in html
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in html
    assert "Content-Security-Policy" in html
    for section in ("Summary", "Problems", "Insights", "Dataset", "Configuration", "Weakest cases"):
        assert section in html


@pytest.mark.browser
def test_report_in_chromium_makes_no_request_and_runs_nothing(tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("Debian chromium is not installed (EVALNB_BROWSER=1 bash scripts/install)")
    path = Path(_lab().report(tmp_path / "r.html"))  # usable as the path it was written to
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        page = browser.new_page()
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.goto(path.as_uri())
        page.wait_for_load_state("networkidle")
        assert page.evaluate("window.__pwned") is None
        assert page.locator("svg").count() >= 2  # charts rendered inline
        assert (
            page.locator("text=<script>window.__pwned = 1</script>").count() >= 1
        )  # shown as text
        browser.close()
    assert requests == [path.as_uri()]


def test_archive_round_trip(tmp_path: Path) -> None:
    lab = _lab()
    lab.set_threshold("rouge", "rouge_l", 0.3)
    target = lab.archive(tmp_path / "a.zip")
    with zipfile.ZipFile(target) as zf:
        names = set(zf.namelist())
    assert {
        "interpretation.html",
        "interpretation.json",
        "problems_and_actions.json",
        "insights_and_actions.json",
        "rouge/results.json",
        "pii_leakage/results.csv",
        "rouge/leaderboard.json",
        "rouge/leaderboard.md",
        "rouge/problems.json",
        "log.txt",
    } <= names
    back = evalnb.load(target)
    key = ["case_id", "model", "sample", "evaluator", "metric"]
    assert back.scores.sort(key).equals(lab.scores.sort(key))
    assert back.cases.sort("case_id").equals(lab.cases.sort("case_id"))
    assert back.outputs.sort("case_id", "model").equals(lab.outputs.sort("case_id", "model"))
    assert back.current_thresholds().equals(lab.current_thresholds())
    assert back.problems().equals(lab.problems())


def test_bad_archive_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "x.zip"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("other.txt", "hi")
    with pytest.raises(evalnb.InputError, match=r"x\.zip.*interpretation\.json"):
        evalnb.load(bad)


def test_report_command(tmp_path: Path) -> None:
    from evalnb.cli.main import main

    _lab().save(tmp_path / "lab.duckdb")
    assert (
        main(
            [
                "report",
                str(tmp_path / "lab.duckdb"),
                "-o",
                str(tmp_path / "r.html"),
                "--zip",
                str(tmp_path / "r.zip"),
            ]
        )
        == 0
    )
    assert "Most difficult cases" in (tmp_path / "r.html").read_text(encoding="utf-8")
    assert evalnb.load(tmp_path / "r.zip").scores.height == _lab().scores.height


def test_report_shows_itself_sandboxed_in_a_notebook(tmp_path: Path) -> None:
    report = _lab().report()  # not written: still shown, and says so
    assert report.path is None and "not written" in repr(report)
    frame = report._repr_html_()
    assert frame.startswith('<iframe sandbox=""') and "srcdoc=" in frame
    # The document is escaped once more inside srcdoc: no raw tag reaches the notebook page.
    assert "<script" not in frame and "<svg" not in frame and "&lt;svg" in frame
    with pytest.raises(TypeError, match="not written to a file"):
        Path(report)


def test_the_heat_map_keeps_its_labels_whole() -> None:
    from evalnb.analysis.charts import heatmap, to_svg

    board = pl.DataFrame(
        {
            "evaluator": ["answer_relevancy_similarity"] * 2,
            "metric": ["model_generation_failures_of_a_long_name"] * 2,
            "model": ["a", "b"],
            "mean": [0.1, 0.2],
            "pass_rate": [0.1, 0.2],
        }
    )
    svg = to_svg(heatmap(board))
    assert "answer_relevancy_similarity/model_generation_failures_of_a_long_name" in svg
    assert "…" not in svg  # Vega's ellipsis: a label cut
