"""Inside a Jupyter kernel, importing evalnb makes Altair draw offline; elsewhere it does not.

Each case runs in a fresh interpreter: the switch happens at import and touches global state.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

REPORT = "import altair as alt; print(alt.renderers.active, alt.renderers.options)"


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        # a kernel, Altair imported only after evalnb: the switch waits for Altair's import
        ("import ipykernel, evalnb", REPORT, "jupyter {'offline': True}"),
        # a kernel, Altair imported before evalnb
        ("import ipykernel, altair, evalnb", REPORT, "jupyter {'offline': True}"),
        # the user's own choice, made before evalnb, stands
        (
            "import ipykernel, altair as alt; alt.renderers.enable('svg'); import evalnb",
            REPORT,
            "svg {}",
        ),
        # a script or the command line: Altair is left alone
        ("import evalnb", REPORT, "default {}"),
    ],
)
def test_renderer_after_import(before: str, after: str, expected: str) -> None:
    out = subprocess.run(
        [sys.executable, "-c", f"{before}\n{after}"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == expected


def test_offline_chart_carries_its_javascript() -> None:
    """The chart's widget holds Vega itself (from vl-convert), with no URL to fetch it from."""
    code = (
        "import ipykernel, evalnb\n"
        "from evalnb.api.demo import build_demo_lab\n"
        "lab = evalnb.evaluate(build_demo_lab(), ['bleu'], progress=False)\n"
        "bundle = lab.leaderboard_chart()._repr_mimebundle_()\n"
        "from altair import JupyterChart\n"
        "esm = JupyterChart._esm\n"
        "print(sorted(bundle[0] if isinstance(bundle, tuple) else bundle))\n"
        "print(len(esm) > 100_000, 'cdn.jsdelivr' in esm)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[0] == "['application/vnd.jupyter.widget-view+json', 'text/plain']"
    assert out[1] == "True False"
