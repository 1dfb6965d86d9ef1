"""evalnb's charts draw offline in a notebook; importing evalnb leaves Altair's renderer alone.

Each case runs in a fresh interpreter, so no case sees another's renderer state.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

LAB = (
    "import evalnb\n"
    "from evalnb.api.demo import build_demo_lab\n"
    "lab = evalnb.evaluate(build_demo_lab(), ['bleu'], progress=False)\n"
)


def _run(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def _kinds(expr: str) -> str:
    """Print the mime types a chart's display offers (a bundle, or a (bundle, metadata) pair)."""
    return f"b = {expr}._repr_mimebundle_(); print(sorted(b[0] if isinstance(b, tuple) else b))\n"


@pytest.mark.parametrize("first", ["import ipykernel, evalnb", "import ipykernel, altair, evalnb"])
def test_importing_evalnb_changes_no_renderer(first: str) -> None:
    out = _run(f"{first}\nimport altair as alt\nprint(alt.renderers.active, alt.renderers.options)")
    assert out == ["default {}"]


def test_our_chart_draws_offline_and_the_users_chart_as_altair_draws_it() -> None:
    code = (
        "import ipykernel\n"
        + LAB
        + "import altair as alt, polars as pl\n"
        + "mine = alt.Chart(alt.Data(values=[{'a': 1}])).mark_point().encode(x='a:Q')\n"
        + _kinds("lab.leaderboard_chart()")
        + _kinds("mine")
        + "print(alt.renderers.active)\n"
        + "from altair import JupyterChart\n"
        + "print(len(JupyterChart._esm) > 100_000, 'cdn.jsdelivr' in JupyterChart._esm)\n"
    )
    ours, theirs, active, esm = _run(code)
    # Ours: an anywidget carrying Vega itself (from vl-convert), no URL to fetch it from.
    assert ours == "['application/vnd.jupyter.widget-view+json', 'text/plain']"
    assert esm == "True False"
    # The user's: what Altair's default renderer gives, and the renderer is still theirs.
    assert "application/vnd.jupyter.widget-view+json" not in theirs
    assert active == "default"


def test_a_renderer_the_user_chose_draws_our_charts_too() -> None:
    code = (
        "import ipykernel\n"
        + LAB
        + "import altair as alt\nalt.renderers.enable('svg')\n"
        + _kinds("lab.leaderboard_chart()")
    )
    assert _run(code) == ["['image/svg+xml']"]
