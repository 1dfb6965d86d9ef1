"""The report's HTML pieces every section uses: escaped text, numbers, tables.

Everything a report shows of a lab (answers, prompts, model names, reasons) is untrusted
text: it goes in through :func:`escape` only.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

__all__ = ["escape", "html_table", "number"]


def escape(value: object) -> str:
    """Return ``value`` as HTML text (null as empty), quotes escaped."""
    return html.escape("" if value is None else str(value), quote=True)


def number(value: object) -> str:
    """Return a number as the report prints it (floats to four places), escaped."""
    if isinstance(value, float):
        return f"{value:.4f}"
    return escape(value)


def html_table(frame: pl.DataFrame, text_columns: tuple[str, ...] = ()) -> str:
    """Return ``frame`` as an HTML table (``severity`` as a badge, lists joined)."""
    head = "".join(f"<th>{escape(c)}</th>" for c in frame.columns)
    body = []
    for row in frame.iter_rows():
        cells = []
        for col, value in zip(frame.columns, row, strict=True):
            if isinstance(value, list):
                value = ", ".join(map(str, value))
            if col == "severity":
                cells.append(f'<td><span class="sev {escape(value)}">{escape(value)}</span></td>')
                continue
            css = (
                "text" if col in text_columns else ("num" if isinstance(value, float | int) else "")
            )
            cells.append(f'<td class="{css}">{number(value)}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"
