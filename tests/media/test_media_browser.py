"""The eye shows a case's image and plays its audio in a real JupyterLab, offline (issue 76):
thumbnails made in the kernel as data: URLs, nothing fetched, hostile text kept as text."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import evalnb
from evalnb_testkit import media_samples as ms
from evalnb_testkit.jupyter_harness import ARTIFACTS, lab_page, notebook, require_browser

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_the_case_panel_shows_the_image_and_the_audio(tmp_path: Path) -> None:
    require_browser()
    (tmp_path / "red.png").write_bytes(ms.png((220, 20, 20), (640, 480)))
    evil = "<img src=x onerror=window.__evalnb_xss=1> red"
    frame = pl.DataFrame(
        {
            "case_id": ["q1"],
            "prompt": ["Which colour is the square?"],
            "media": [[str(tmp_path / "red.png"), ms.data_url(ms.wav(0.5), "audio/wav")]],
            "expected": [["red"]],
            "actual": [evil],
        }
    )
    store = tmp_path / "mm.duckdb"
    lab = evalnb.evaluate(evalnb.load(frame), ["ragas_string_similarity"], progress=False)
    lab.save(store)
    code = (
        "import evalnb\n"
        f"lab = evalnb.open({str(store)!r})\n"
        "w = lab.eye()\n"
        "w.path = ['generation', 'ragas_string_similarity', 'ragas_string_similarity', 'model']\n"
        "w.selected_case = {'case_id': 'q1', 'model': 'model'}\n"
        "w"
    )
    notebook(tmp_path / "mm.ipynb", [code])
    with lab_page(tmp_path, width=1400, height=1000) as (server, page):
        server.open(page, "mm.ipynb")
        server.run_cell(page, 0)
        page.wait_for_selector(".evalnb-eye .ee-panel .evalnb-media img")
        page.wait_for_function(
            "() => document.querySelector('.ee-panel .evalnb-media img').naturalWidth > 0"
        )
        size = page.evaluate(
            "() => { const i = document.querySelector('.ee-panel .evalnb-media img');"
            " return [i.naturalWidth, i.naturalHeight, i.src.slice(0, 23)]; }"
        )
        assert size == [160, 120, "data:image/jpeg;base64,"]  # the kernel's thumbnail
        assert page.locator(".ee-panel .evalnb-media audio").count() == 1
        captions = page.locator(".ee-panel .evalnb-media figcaption").all_text_contents()
        assert captions == ["case image 640×480", "case audio 0.5 s"]
        assert page.locator(".ee-panel img").count() == 1  # the answer's <img> stayed text
        assert page.evaluate("window.__evalnb_xss") is None
        ARTIFACTS.joinpath("eye").mkdir(parents=True, exist_ok=True)
        page.locator(".evalnb-eye .ee-panel").screenshot(path=str(ARTIFACTS / "eye" / "media.png"))
