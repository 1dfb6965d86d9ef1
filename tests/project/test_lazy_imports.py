"""A command or script that draws nothing starts without the widget stack (issue 55)."""

from __future__ import annotations

import subprocess
import sys


def test_importing_evalnb_loads_no_widget_library_until_one_is_used() -> None:
    code = (
        "import sys, evalnb\n"
        "heavy = ['anywidget', 'ipywidgets', 'IPython', 'httpx']\n"
        "print(*[m for m in heavy if m in sys.modules])\n"
        "evalnb.Eye, evalnb.labeler\n"
        "print('anywidget' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    before, after = done.stdout.splitlines()
    assert before.strip() == "" and after == "True"
