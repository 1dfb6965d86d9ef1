"""The judge card's view in a real JupyterLab: whole button labels, the probe beside the eye.

A stand-in judge on a loopback port passes "Sure" and any answer that opens with a courteous
preamble; one answer carries markup. Clicking a red measure's button must open the evidence
(what the judge was shown and said, escaped) above the eye, at a scored answer.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evalnb_testkit.jupyter_harness import lab_page, notebook, require_browser
from evalnb_testkit.paths import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]

_CELL = f"""
import re, sys
sys.path.insert(0, {str(ROOT)!r})
import polars as pl
import evalnb
from evalnb_testkit.llm_server import LoopbackLLM

rows = [
    {{"prompt": f"What is {{i}} + {{i}}?", "model": m,
      "actual": (f"The answer is {{2 * i}}." if (i + len(m)) % 3 else "I think <b>it</b> is 5.")}}
    for i in range(30) for m in ("good", "weak")
]
lab = evalnb.load(pl.DataFrame(rows))

def judge(prompt):
    if "[Answer 1]" in prompt:
        return "9 2"
    got = re.search(r"<response>\\n(.*?)\\n</response>", prompt, re.S)
    answer = got[1] if got else ""
    if answer.startswith("Thank you for this question") or answer.strip() in ("Sure", "Yes"):
        return "1"
    return "1" if "The answer is" in answer else "0"

server = LoopbackLLM(judge).__enter__()
client = evalnb.LLMClient(server.base_url, "judge", cache=False)
lab = evalnb.evaluate(lab, ["binary_judge"], judge=client, progress=False)
card = lab.judges.card("binary_judge", judge=client, n=60, seed=0, probes=20)
view = lab.judges.card_view(card)
view
"""


def test_the_card_view_shows_whole_labels_and_the_probe_beside_the_eye(tmp_path: Path) -> None:
    require_browser()
    notebook(tmp_path / "card.ipynb", [_CELL])
    with lab_page(tmp_path, width=1300, height=1100) as (server, page):
        server.open(page, "card.ipynb")
        server.run_cell(page, 0, timeout_ms=300_000)
        page.wait_for_selector(".widget-toggle-buttons button")
        conclusion = page.locator("p.conclusion").first.text_content() or ""
        assert conclusion.startswith("Do not trust")
        assert page.locator("th", has_text="bound").count() >= 1
        # Every button shows its whole label: nothing cut by a fixed width.
        cut = page.eval_on_selector_all(
            ".widget-toggle-buttons button",
            "bs => bs.filter(b => b.scrollWidth > b.clientWidth + 1).map(b => b.textContent)",
        )
        assert cut == []
        page.locator(".widget-toggle-buttons button", has_text="pass rate of dummy: Sure").click()
        page.wait_for_selector(".evalnb-evidence")
        evidence = page.locator(".evalnb-evidence").first
        assert "what the judge was shown" in (evidence.text_content() or "")
        assert evidence.locator("pre", has_text="Sure").count() == 1
        page.wait_for_selector(".evalnb-eye .ee-panel .ee-prompt")
        # The padded copy beside the lab's answer; markup in an answer stays text.
        page.locator(
            ".widget-toggle-buttons button", has_text="padding: a courteous preamble"
        ).click()
        page.wait_for_function(
            "() => document.querySelector('.evalnb-evidence')?.textContent.includes('Thank you')"
        )
        assert page.locator(".evalnb-evidence b").count() == 0
        server.run_code(page, "server.__exit__(None, None, None)")
