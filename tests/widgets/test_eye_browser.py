"""The eval eye in a real JupyterLab, clicked through every level in headless chromium.

Expected values come from the pure transforms on the same lab, so the test checks that the
browser shows what the kernel computed, and that clicks reach Python (and back).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

import evalnb
from evalnb.api.demo import build_demo_lab
from evalnb.cli.demo_cmd import DEMO_EVALUATORS
from evalnb.transforms import eye_bars, eye_dots, eye_index, eye_nodes
from evalnb_testkit.jupyter_harness import ARTIFACTS, lab_page, notebook, require_browser

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.xdist_group("eye_browser"),  # its module fixture is built once: on one worker
]

EVIL = '<script>window.__evalnb_xss = 1</script><img src=x onerror="window.__evalnb_xss = 2">'


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The demo lab, evaluated, with one answer carrying markup; returns (store, evil case)."""
    lab = build_demo_lab()
    outputs = lab.outputs
    evil_case = str(outputs.filter(pl.col("model") == "atlas-70b")["case_id"][0])
    outputs = outputs.with_columns(
        actual=pl.when((pl.col("case_id") == evil_case) & (pl.col("model") == "atlas-70b"))
        .then(pl.lit(f"Paris is the capital of France. {EVIL}"))
        .otherwise("actual")
    )
    lab = evalnb.Lab({**{n: lab.table(n) for n in evalnb.TABLES}, "outputs": outputs})
    lab = evalnb.evaluate(lab, list(DEMO_EVALUATORS), model="all-MiniLM-L6-v2", progress=False)
    root = tmp_path_factory.mktemp("eye-lab")
    lab.save(root / "demo.duckdb")
    return root / "demo.duckdb", evil_case


def _ring_keys(page: Any, ring: int) -> list[str]:
    return page.eval_on_selector_all(
        f".evalnb-eye .ee-seg[data-ring='{ring}']", "els => els.map(e => e.dataset.key)"
    )


def _expected_keys(idx: Any, path: list[str], ring: int) -> list[str]:
    """The segment keys of ``ring`` at ``path``, as the pure transform computes them."""
    nodes = eye_nodes(idx, path).filter(pl.col("ring") == ring)
    return nodes["keys"].list.join("/").to_list()


def _click_at_centre(page: Any, selector: str, target: str) -> None:
    """Click with the mouse where ``selector`` is drawn, checking ``target`` gets the click."""
    box = page.locator(selector).first.bounding_box()
    assert box is not None, f"{selector} is not drawn"
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    hit = page.evaluate(
        "([x, y, t]) => !!document.elementFromPoint(x, y)?.closest(t)", [x, y, target]
    )
    assert hit, f"the point under {selector} is not inside {target}"
    page.mouse.click(x, y)


def _click_segment(page: Any, key: str, ring: int) -> None:
    seg = f".evalnb-eye .ee-seg[data-ring='{ring}'][data-key='{key}']"
    _click_at_centre(page, f"{seg} text.ee-label", seg)


def _wait_depth(page: Any, depth: int) -> None:
    page.wait_for_selector(f".evalnb-eye .ee-crumb[data-depth='{depth}'][aria-current='page']")


def _shot(page: Any, name: str) -> None:
    ARTIFACTS.joinpath("eye").mkdir(parents=True, exist_ok=True)
    page.locator(".evalnb-eye").screenshot(path=str(ARTIFACTS / "eye" / f"{name}.png"))


def test_eye_drills_down_to_a_case_and_back_in_jupyterlab(
    demo_store: tuple[Path, str], tmp_path: Path
) -> None:
    require_browser()
    store, evil_case = demo_store
    lab = evalnb.open(store)
    idx = eye_index(lab)
    notebook(
        tmp_path / "eye.ipynb",
        [f"import evalnb\nlab = evalnb.open({str(store)!r})\nw = lab.eye()\nw"],
    )
    with lab_page(tmp_path, width=1400, height=1000) as (server, page):
        server.open(page, "eye.ipynb")
        server.run_cell(page, 0)
        page.wait_for_selector(".evalnb-eye svg.ee-sun .ee-seg")

        # Top: domains inside, evaluators outside, problem counts as the kernel found.
        top = eye_nodes(idx, [])
        assert (
            _ring_keys(page, 1) == top.filter(pl.col("ring") == 1)["keys"].list.join("/").to_list()
        )
        assert sorted(_ring_keys(page, 2)) == sorted(
            top.filter(pl.col("ring") == 2)["keys"].list.join("/").to_list()
        )
        gen = top.filter(pl.col("id") == "1:generation").row(0, named=True)
        badge = page.locator(".ee-seg[data-ring='1'][data-key='generation'] .ee-badge text")
        assert badge.text_content() == (
            str(gen["n_problems"]) if gen["n_problems"] < 100 else "99+"
        )
        _shot(page, "0-domains")

        # Domain → evaluators and their metrics.
        _click_segment(page, "generation", 1)
        _wait_depth(page, 1)
        assert _ring_keys(page, 1) == _expected_keys(idx, ["generation"], 1)
        _shot(page, "1-domain")

        # Evaluator → metrics and models; hover the centre for the bar chart.
        _click_segment(page, "groundedness", 1)
        _wait_depth(page, 2)
        _shot(page, "2-evaluator")
        _click_segment(page, "groundedness", 1)
        _wait_depth(page, 3)
        page.hover(".evalnb-eye .ee-centre circle")
        page.wait_for_selector(".evalnb-eye .ee-bars:not([hidden]) rect.ee-bar")
        bars = eye_bars(idx, ["generation", "groundedness", "groundedness"])
        assert page.locator(".ee-bars rect.ee-bar").count() == bars.height
        _shot(page, "3-metric")
        page.mouse.move(5, 5)

        # Metric → model: the dot chart, one dot per case, threshold line.
        model = "breeze-8b"
        _click_segment(page, model, 2)
        _wait_depth(page, 4)
        dots = eye_dots(idx, "groundedness", "groundedness", model)
        page.wait_for_selector(".evalnb-eye svg.ee-dotchart circle.ee-dot")
        assert page.locator("circle.ee-dot").count() == dots.height
        assert page.locator("line.ee-threshold").count() == 1
        _shot(page, "4-model")

        # Dot → case panel with the right prompt, scores and scored sentences.
        worst = dots.row(0, named=True)
        dot = f"circle.ee-dot[data-case='{worst['case_id']}']"
        _click_at_centre(page, dot, dot)
        page.wait_for_selector(".evalnb-eye .ee-panel .ee-prompt")
        prompt = lab.cases.filter(pl.col("case_id") == worst["case_id"])["prompt"][0]
        assert page.locator(".ee-panel .ee-prompt .ee-text").text_content() == prompt
        card = page.locator(
            ".ee-panel .ee-card[data-metric='groundedness/groundedness'] .ee-card-value"
        )
        assert card.text_content() == f"{worst['value']:.3f}"
        assert page.locator(".ee-panel .ee-sentence").count() >= 1
        assert (
            page.locator(".ee-panel .ee-card").count()
            == idx.verdicts.filter(
                (pl.col("case_id") == worst["case_id"]) & (pl.col("model") == model)
            )
            .collect()
            .height
        )
        _shot(page, "5-case")
        assert worst["case_id"] in server.run_code(page, "print(w.selected_case)")
        assert (
            server.run_code(page, "print(w.selection()['case_id'].unique().to_list())").strip()
            == f"['{worst['case_id']}']"
        )

        # Compare with a second metric: the picker writes `compare`, dots redraw.
        page.select_option(
            ".evalnb-eye select.ee-compare", label="Answer similarity (answer_similarity)"
        )
        page.wait_for_function(
            "() => document.querySelector('.ee-dotchart .ee-axis-title')?.textContent !== ''"
        )
        # The change reaches the kernel as a comm message; on a loaded machine the first
        # cell may run before it lands, so ask again for a few seconds.
        seen = ""
        for _ in range(20):
            seen = server.run_code(page, "print(w.compare)")
            if "answer_similarity" in seen:
                break
            page.wait_for_timeout(250)
        assert "answer_similarity" in seen
        assert page.locator("circle.ee-dot").count() == dots.height
        _shot(page, "6-compare")

        # Back up: close the dot chart, then the top crumb.
        page.click(".evalnb-eye button.ee-back")
        _wait_depth(page, 3)
        page.click(".evalnb-eye .ee-crumb[data-depth='0']")
        _wait_depth(page, 0)

        # Python drives the view.
        server.run_code(page, "w.path = ['retrieval']")
        _wait_depth(page, 1)
        assert _ring_keys(page, 1) == _expected_keys(idx, ["retrieval"], 1)
        _shot(page, "7-python-path")
        err = server.run_code(page, "w.path = ['no-such-domain']", expect_error=True)
        assert err.startswith("TraitError") and "retrieval" in err

        # Model output is text, never markup.
        server.run_code(
            page,
            f"w.path = ['generation', 'groundedness', 'groundedness', 'atlas-70b']\n"
            f"w.selected_case = {{'case_id': {evil_case!r}, 'model': 'atlas-70b'}}",
        )
        page.wait_for_function(
            "() => document.querySelector('.ee-panel .ee-actual')?.textContent.includes('<script>')"
        )
        assert page.locator(".ee-panel img, .ee-panel script").count() == 0
        assert page.evaluate("window.__evalnb_xss") is None
        _shot(page, "8-escaped")


def test_the_case_panel_shows_an_agents_steps_as_text(tmp_path: Path) -> None:
    """Drill to an agent's run: its messages, tool calls, results and errors, all escaped."""
    require_browser()
    import json

    evil = '<img src=x onerror="window.__evalnb_xss=1">'
    record = {
        "id": "trip",
        "model": "agent-x",
        "messages": [
            {"role": "user", "content": "Book a trip to Paris"},
            {
                "role": "assistant",
                "content": "Let me look.",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "search", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": evil, "latency_s": 0.4},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c2",
                        "type": "function",
                        "function": {"name": "book", "arguments": "{oops"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c2", "content": "refused", "status": "error"},
            {"role": "assistant", "content": "I could not book it."},
        ],
        "reference_tool_calls": [
            {"name": "search", "args": {"city": "Paris"}},
            {"name": "book", "args": {"city": "Paris"}},
        ],
    }
    source = tmp_path / "trip.jsonl"
    source.write_text(json.dumps(record) + "\n")
    code = (
        "import evalnb\n"
        f"lab = evalnb.evaluate(evalnb.load({str(source)!r}), ['tool_call_f1', 'agent_steps'],\n"
        "                      progress=False)\n"
        "w = lab.eye()\n"
        "w.path = ['agents', 'agent_steps', 'tool_error_rate', 'agent-x']\n"
        "w.selected_case = {'case_id': 'trip', 'model': 'agent-x'}\n"
        "w"
    )
    notebook(tmp_path / "agent.ipynb", [code])
    with lab_page(tmp_path, width=1400, height=1000) as (server, page):
        server.open(page, "agent.ipynb")
        server.run_cell(page, 0)
        page.wait_for_selector(".evalnb-eye .ee-panel .ee-steps li")
        steps = page.locator(".ee-panel .ee-steps li.ee-step")
        assert steps.count() == 4  # user, search call, book call, final answer
        calls = page.locator(".ee-panel .ee-step-call").all_text_contents()
        assert calls == ['search({"city": "Paris"})', "book({oops)"]
        assert page.locator(".ee-panel .ee-step-call[title*='not valid JSON']").count() == 1
        result = page.locator(".ee-panel .ee-step-result").first.text_content()
        assert result == evil  # the tool's text as text
        assert page.locator(".ee-panel .ee-step-error .ee-step-err").count() == 1
        assert page.locator(".ee-panel img, .ee-panel script").count() == 0
        assert page.evaluate("window.__evalnb_xss") is None
        _shot(page, "9-agent-steps")


def test_the_eyes_language_menu_filters_the_cases(tmp_path: Path) -> None:
    require_browser()
    from evalnb.api.demo_languages import build_demo_languages

    lab = build_demo_languages()
    lab.languages.set()
    lab = evalnb.evaluate(lab, ["rouge", "rouge_multilingual", "answer_language"], progress=False)
    store = tmp_path / "languages.duckdb"
    lab.save(store)
    notebook(
        tmp_path / "eye.ipynb",
        [f"import evalnb\nlab = evalnb.open({str(store)!r})\nw = lab.eye()\nw"],
    )
    with lab_page(tmp_path, width=1400, height=1000) as (server, page):
        server.open(page, "eye.ipynb")
        server.run_cell(page, 0)
        page.wait_for_selector(".evalnb-eye svg.ee-sun .ee-seg")
        menu = ".evalnb-eye select.ee-language"
        labels = page.eval_on_selector_all(f"{menu} option", "els => els.map(e => e.textContent)")
        assert labels[0] == "All languages"
        assert sorted(labels[1:]) == sorted(
            f"{name} (6)"
            for name in ("English", "Chinese", "Japanese", "French", "Arabic", "Russian")
        )
        page.select_option(menu, label="Chinese (6)")
        seen = ""
        for _ in range(20):  # the choice reaches the kernel as a comm message
            seen = server.run_code(page, "print(w.language, w.selection()['case_id'].n_unique())")
            if seen.startswith("zh"):
                break
            page.wait_for_timeout(250)
        assert seen.split() == ["zh", "6"]
        # H2O's ROUGE scores no Chinese row: hatched "not scored here", not the yellow of OK;
        # rouge_multilingual scores every one.
        h2o = '.ee-seg[data-ring="2"][data-key="summarization/rouge"]'
        ours = '.ee-seg[data-ring="2"][data-key="summarization/rouge_multilingual"]'
        page.wait_for_selector(f"{h2o}.unscored")
        fill = page.get_attribute(f"{h2o} path", "fill")
        assert fill == "url(#ee-hatch)"
        assert "not scored here" in (page.text_content(f"{h2o} title") or "")
        assert "unscored" not in (page.get_attribute(ours, "class") or "")
        _shot(page, "8-language")
        server.run_code(page, "w.language = ''")
        page.wait_for_function(f"() => document.querySelector('{menu}').value === ''")
