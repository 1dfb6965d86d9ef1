"""Every notebook runs top to bottom in a real JupyterLab with no network, and draws.

Each cell runs through JupyterLab's own command in headless chromium. After the run, every
chart output must have been drawn by Vega (an SVG or a canvas), every widget output must
show its view (not "Error displaying widget"), and the page must not have asked anything of
an address other than loopback nor logged a console error. Without chromium the notebooks
still run, headless through nbclient, so a machine without a browser checks the code.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from evalnb_testkit.jupyter_harness import CHROMIUM, lab_page, require_browser
from evalnb_testkit.paths import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
# Drawn in JupyterLab: the first a user opens, and the two whose views no widget test draws
# whole (an agent's steps in the eye, the monitor's windows). The others' widgets are each
# drawn by their widget's browser test: those notebooks run headless, in a real kernel.
IN_BROWSER = {"01_quickstart.ipynb", "07_agents.ipynb", "10_monitoring.ipynb"}
DRAWN = [p for p in NOTEBOOKS if p.name in IN_BROWSER]
WIDGET = "application/vnd.jupyter.widget-view+json"

# For cell i: its outputs as drawn, one entry per output node that holds a widget view.
_DRAWN = """(i) => {
    const cell = window.__nb.content.widgets[i];
    // a rendered mimetype carries data-mime-type; the widget renderer (a panel) does not
    const nodes = cell.node.querySelectorAll(".jp-OutputArea-output:not([data-mime-type])");
    return Array.from(nodes, (n) => ({
        height: n.getBoundingClientRect().height,
        failed: /Error displaying widget|model not found/.test(n.textContent || ""),
        vega: n.querySelectorAll(".vega-embed").length,
        drawn: n.querySelectorAll(".vega-embed svg.marks, .vega-embed canvas.marks").length,
    }));
}"""


def _workspace(tmp: Path) -> Path:
    """Copies of the notebooks beside links to what they read (JupyterLab autosaves)."""
    root = tmp / "work"
    shutil.copytree(ROOT / "notebooks", root / "notebooks")
    for name in ("data", "evalnb_testkit"):
        (root / name).symlink_to(ROOT / name)
    return root


def _charts(outputs: list[dict[str, Any]]) -> int:
    plain = ["".join(o.get("data", {}).get("text/plain", "")) for o in outputs]
    return sum("JupyterChart" in p for p in plain)


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize("path", DRAWN, ids=[p.name for p in DRAWN])
def test_notebook_runs_and_draws_in_jupyterlab_offline(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sync_api = require_browser()
    monkeypatch.setenv("EVALNB_SCRIPTED_REVIEW", "1")  # the kernels inherit it: no human here
    root = _workspace(tmp_path)
    with lab_page(root, width=1300, height=1000) as (server, page):
        server.open(page, f"notebooks/{path.name}")
        n_cells = page.evaluate("() => window.__nb.content.widgets.length")
        charts = 0
        shown: dict[int, int] = {}  # cell -> widget views it drew
        for i in range(n_cells):
            if page.evaluate(f"() => window.__nb.content.widgets[{i}].model.type") != "code":
                continue
            server.run_cell(page, i, timeout_ms=300_000)
            outputs = page.evaluate(
                f"() => window.__nb.content.widgets[{i}].model.outputs.toJSON()"
            )
            widgets = sum(WIDGET in o.get("data", {}) for o in outputs)
            want = _charts(outputs)
            charts += want
            if not widgets:
                continue
            # Vega draws after the widget view attaches: wait for every chart's marks.
            ready = (
                f"(i) => {{ const d = ({_DRAWN})(i);"
                f"  return d.length === {widgets} && d.filter((x) => x.drawn > 0).length >= {want}; }}"
            )
            try:
                page.wait_for_function(ready, arg=i, timeout=60_000)
            except sync_api.TimeoutError:
                pytest.fail(
                    f"{path.name} cell {i}: {widgets} widget(s), {want} chart(s) expected, "
                    f"drawn: {page.evaluate(_DRAWN, i)}"
                )
            drawn = page.evaluate(_DRAWN, i)
            assert not [d for d in drawn if d["failed"] or d["height"] < 20], (path.name, i, drawn)
            assert sum(d["vega"] > 0 for d in drawn) == want, (path.name, i, drawn)
            shown[i] = widgets
        # Run All's end state: a later cell must not have emptied an earlier widget's view
        # (notebook 09 once closed the labeler, leaving its cell blank).
        for i, widgets in shown.items():
            drawn = page.evaluate(_DRAWN, i)
            kept = [d for d in drawn if not d["failed"] and d["height"] >= 20]
            assert len(kept) == widgets, (path.name, i, "emptied by a later cell", drawn)
    assert charts or path.name != "01_quickstart.ipynb"  # the quickstart charts


@pytest.mark.services  # a Jupyter kernel per notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs_headless(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if path.name in IN_BROWSER and CHROMIUM.exists():
        pytest.skip("run in JupyterLab by the browser test above")
    monkeypatch.setenv("EVALNB_SCRIPTED_REVIEW", "1")
    copy = _workspace(tmp_path) / "notebooks" / path.name  # what it writes stays out of the repo
    nb = nbformat.read(copy, as_version=4)
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(copy.parent)}}
    ).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    errors = [o for o in outputs if o.get("output_type") == "error"]
    assert not errors
    # A warning box is what a newcomer reads as "it broke" (notebook 04's free-text demo
    # once opened with a red NothingScoredWarning): a notebook shows none.
    warned = [
        o["text"][:300]
        for o in outputs
        if o.get("output_type") == "stream" and o.get("name") == "stderr" and "Warning" in o["text"]
    ]
    assert not warned, warned
    if path.name == "04_judges.ipynb":  # the free-text demo shows the replies it rescued
        shown = "".join(
            "".join(o.get("data", {}).get("text/plain", "")) for o in outputs if "data" in o
        )
        assert all(s in shown for s in ("think_stripped", "markdown", "prefixed", "fenced"))
