"""The languages page's prose quotes the figures of its own table (issue 55)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_detection_figures_in_the_prose_are_the_tables() -> None:
    page = (ROOT / "docs" / "workflows" / "languages.md").read_text(encoding="utf-8")
    rows = {
        line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
        for line in page.splitlines()
        if line.startswith("| detected right")
    }
    wide, told = rows["detected right, 97 languages"], rows["detected right, told the nine"]
    said = re.search(
        r"English was recognised\s+only (\d+) % of the time; told the nine[^,]*, (\d+) %", page
    )
    assert said is not None
    assert (f"{said[1]} %", f"{said[2]} %") == (wide[0], told[0])  # English is the first column
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    low = min(int(v.rstrip(" %")) for v in told)
    high = max(int(v.rstrip(" %")) for v in told)
    assert f"{low}–{high} % told the nine" in readme
