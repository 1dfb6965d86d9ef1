"""Problems, insights and leaderboards as readable HTML tables in a notebook cell.

A Polars frame already renders as a table; this adds what a reviewer scans for: severity
as a coloured badge, long descriptions wrapped instead of cut, numbers rounded, case lists
counted. Every cell is escaped (descriptions quote model names and answers).
"""

from __future__ import annotations

import html
import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

__all__ = ["RichTable", "table"]

_SEVERITY = {"HIGH": "#c62828", "MEDIUM": "#ef6c00", "LOW": "#f9a825"}
_STYLE = (
    "<style>.evalnb-table{border-collapse:collapse;font-size:12px;max-width:100%}"
    ".evalnb-table th{text-align:left;border-bottom:2px solid #ccc;padding:3px 6px}"
    ".evalnb-table td{border-bottom:1px solid #eee;padding:3px 6px;vertical-align:top;"
    "white-space:pre-wrap;overflow-wrap:anywhere;max-width:38em}"
    ".evalnb-sev{color:#fff;border-radius:3px;padding:0 5px;font-weight:600;font-size:10px}"
    "</style>"
)


class RichTable:
    """A frame shown as an HTML table; ``.frame`` is the data, unchanged."""

    def __init__(
        self, frame: pl.DataFrame, *, title: str | None = None, max_rows: int = 50
    ) -> None:
        self.frame = frame
        self.title = title
        self.max_rows = max_rows

    def __repr__(self) -> str:
        return repr(self.frame)

    def _repr_html_(self) -> str:
        shown = self.frame.head(self.max_rows)
        head = "".join(f"<th>{html.escape(c)}</th>" for c in shown.columns)
        body = "".join(
            "<tr>" + "".join(_cell(c, v) for c, v in zip(shown.columns, row, strict=True)) + "</tr>"
            for row in shown.iter_rows()
        )
        more = self.frame.height - shown.height
        tail = f"<p>… {more} more row(s); <code>.frame</code> has them all</p>" if more else ""
        title = f"<h4>{html.escape(self.title)}</h4>" if self.title else ""
        return (
            f'{_STYLE}{title}<table class="evalnb-table"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>{tail}"
        )


def _cell(column: str, value: object) -> str:
    if value is None:
        return '<td style="color:#999">–</td>'
    if column == "severity" and isinstance(value, str):
        colour = _SEVERITY.get(value, "#757575")
        return f'<td><span class="evalnb-sev" style="background:{colour}">{html.escape(value)}</span></td>'
    if isinstance(value, float):
        return f"<td>{'–' if math.isnan(value) else f'{value:.4g}'}</td>"
    if isinstance(value, list):
        return (
            f"<td>{len(value)}</td>"
            if column == "case_ids"
            else f"<td>{html.escape(', '.join(map(str, value)))}</td>"
        )
    return f"<td>{html.escape(str(value))}</td>"


def table(frame: pl.DataFrame, *, title: str | None = None, max_rows: int = 50) -> RichTable:
    """Show ``frame`` as a readable HTML table in a notebook (severity badges, wrapping).

    Examples
    --------
    >>> import polars as pl
    >>> t = table(pl.DataFrame({"severity": ["HIGH"], "description": ["<b>x</b>"]}))
    >>> "&lt;b&gt;x&lt;/b&gt;" in t._repr_html_()
    True
    """
    return RichTable(frame, title=title, max_rows=max_rows)
