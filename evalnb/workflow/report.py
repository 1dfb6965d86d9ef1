"""The workflow report: one self-contained HTML page a risk owner can read and hand over.

A section per step: what it is for, its status, its parameters, who ran it and when, how
long it took, who approved it (with their note), and its findings as tables. Everything
from the store — and from model output — is escaped; the page loads nothing from outside.
"""

from __future__ import annotations

import datetime as dt
import json
from html import escape
from typing import Any

import polars as pl

from evalnb.analysis.tables import table
from evalnb.workflow.steps import STEPS

__all__ = ["workflow_html"]

_STYLE = """
body{font-family:system-ui,sans-serif;max-width:1000px;margin:24px auto;padding:0 16px;color:#222}
h1{font-size:24px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:13px;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 6px;
vertical-align:top;text-align:left}th{background:#f5f5f5}.st{font-weight:600}.done{color:#1b5e20}
.stale,.failed,.interrupted,.waiting{color:#b71c1c}.muted{color:#666;font-size:12px}
pre{background:#f7f7f7;padding:6px;font-size:12px;white-space:pre-wrap}
"""


def _table(rows: list[dict[str, Any]], limit: int = 30) -> str:
    if not rows:
        return "<p class='muted'>none</p>"
    frame = pl.DataFrame(rows, infer_schema_length=None, strict=False)
    return table(frame, max_rows=limit)._repr_html_()


def _findings(summary: dict[str, Any]) -> str:
    scalars = {k: v for k, v in summary.items() if not isinstance(v, (list, dict))}
    parts = [_table([scalars])] if scalars else []
    for key, value in summary.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            parts.append(f"<h4>{escape(key.replace('_', ' '))}</h4>{_table(value)}")
        elif isinstance(value, dict) and value:
            parts.append(f"<h4>{escape(key.replace('_', ' '))}</h4>{_table([value])}")
        elif isinstance(value, list) and value:
            parts.append(
                f"<h4>{escape(key.replace('_', ' '))}</h4><p>{escape(', '.join(map(str, value)))}</p>"
            )
    return "".join(parts) or "<p class='muted'>no findings recorded</p>"


def workflow_html(
    name: str,
    config: dict[str, Any],
    status: pl.DataFrame,
    summaries: dict[str, dict[str, Any]],
    charts: dict[str, str],
) -> str:
    """Render the report; ``charts`` maps a step to an inline SVG drawn for it."""
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    system = config.get("system", {})
    overview = _table(
        status.select("title", "status", "ran_by", "approved_by", "duration_s").to_dicts()
    )
    sections = []
    rows = {r["step"]: r for r in status.iter_rows(named=True)}
    for spec in STEPS:
        r = rows[spec.name]
        approval = (
            f"approved by <b>{escape(r['approved_by'])}</b>"
            + (f": “{escape(r['approval_note'])}”" if r["approval_note"] else "")
            if r["approved_by"]
            else "<span class='stale'>not approved</span>"
        )
        ran = (
            f"ran by {escape(str(r['ran_by'] or 'unknown'))}, finished {r['finished_at']:%Y-%m-%d %H:%M} UTC, "
            f"{r['duration_s']:.1f} s"
            if r["finished_at"] is not None
            else "never finished"
        )
        why = f" — {escape(r['why'])}" if r["why"] else ""
        chart = f"<div>{charts[spec.name]}</div>" if spec.name in charts else ""
        sections.append(
            f"<h2>{escape(spec.title)}</h2><p>{escape(spec.purpose)}</p>"
            f"<p><span class='st {escape(r['status'])}'>{escape(r['status'])}</span>{why} · {ran} · {approval}</p>"
            f"<details><summary>parameters</summary><pre>{escape(json.dumps(json.loads(r['params']), indent=2))}</pre></details>"
            f"{_findings(summaries.get(spec.name, {}))}{chart}"
        )
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(name)} — MRM workflow</title>"
        f"<style>{_STYLE}</style></head><body><h1>MRM workflow: {escape(name)}</h1>"
        f"<p class='muted'>System under test: {escape(str(system.get('name', 'not set')))} "
        f"({escape(str(system.get('kind', '')))}) · documents: {len(config.get('documents', []))} · "
        f"report written {now} by evalnb</p>{overview}{''.join(sections)}</body></html>"
    )
