"""Writing an evaluation as a ZIP archive in H2O's layout (read back by :mod:`evalnb.io.archive`).

Layout: ``interpretation.html`` (the report), ``interpretation.json`` (summary, thresholds,
problems, insights and the lab's cases/outputs/metrics/thresholds/models/info tables),
``problems_and_actions.json``, ``insights_and_actions.json``, and one directory per
evaluator holding ``results.json`` (its score rows, the source of scores on re-import)
and ``results.csv``. The archive is written to a temporary file and renamed, so a failure
leaves no half-written archive.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from evalnb.analysis.derived import Analysed, analyse, model_keys
from evalnb.analysis.insights import insights_json
from evalnb.analysis.problems import problems_json
from evalnb.analysis.report import render_report
from evalnb.io.archive import LAB_TABLES
from evalnb.lab.files import atomic_path

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = ["write_archive"]


def _records(frame: pl.DataFrame) -> list[dict[str, object]]:
    out = frame.to_dicts()
    for row in out:
        for key, value in row.items():
            if isinstance(value, dt.datetime):
                row[key] = value.isoformat()
            elif isinstance(value, float) and value in (float("inf"), float("-inf")):
                row[key] = "inf" if value > 0 else "-inf"
    return out


def _markdown(frame: pl.DataFrame) -> str:
    cols = ["model", "metric", "n_cases", "mean", "ci_low", "ci_high", "pass_rate", "rank"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines.extend(
        "| " + " | ".join(f"{v:.4f}" if isinstance(v, float) else str(v) for v in r) + " |"
        for r in frame.select(cols).iter_rows()
    )
    return "\n".join(lines) + "\n"


def write_archive(
    lab: LabCore, path: str | Path, *, seed: int = 0, analysed: Analysed | None = None
) -> Path:
    """Write the archive of ``lab`` to ``path`` (a ``.zip``); ``analysed``: what was derived."""
    target = Path(path)
    done = analysed or analyse(lab, seed)  # once: the report, JSON and per-evaluator files share it
    problems, insights, board = done.problems, done.insights, done.board
    interpretation = {
        "name": lab.info.get("name"),
        "created": dt.datetime.now(dt.UTC).isoformat(),
        "evaluators": sorted(set(lab.scores["evaluator"].to_list())),
        "models": lab.models,
        "thresholds": _records(lab.current_thresholds()),
        "leaderboard": _records(board),
        "problems": _records(problems),
        "insights": _records(insights),
        "lab": {t: _records(lab.table(t)) for t in LAB_TABLES},
    }
    files: dict[str, bytes] = {
        "interpretation.html": render_report(lab, seed=seed, analysed=done).encode(),
        "interpretation.json": json.dumps(interpretation, indent=1, default=str).encode(),
        "problems_and_actions.json": problems_json(problems, model_keys(lab)).encode(),
        "insights_and_actions.json": insights_json(insights).encode(),
    }
    for evaluator, part in lab.scores.partition_by("evaluator", as_dict=True).items():
        name = str(evaluator[0])
        files[f"{name}/results.json"] = json.dumps(_records(part), indent=1).encode()
        mine = board.filter(pl.col("evaluator") == name)
        files[f"{name}/leaderboard.json"] = json.dumps(_records(mine), indent=1).encode()
        files[f"{name}/leaderboard.md"] = _markdown(mine).encode()
        files[f"{name}/problems.json"] = json.dumps(
            _records(problems.filter(pl.col("evaluator") == name)), indent=1
        ).encode()
        files[f"{name}/insights.json"] = json.dumps(
            _records(insights.filter(pl.col("evaluator") == name)), indent=1
        ).encode()
        buf = io.BytesIO()
        part.join(lab.cases.select("case_id", "prompt"), on="case_id", how="left").write_csv(buf)
        files[f"{name}/results.csv"] = buf.getvalue()
    files["log.txt"] = "\n".join(
        [
            f"{dt.datetime.now(dt.UTC).isoformat()} evalnb archive of {lab.path or 'an in-memory lab'}",
            f"{lab.cases.height} cases, {lab.outputs.height} answers, {lab.scores.height} scores",
            f"{problems.height} problems, {insights.height} insights",
            *sorted(files),
        ]
    ).encode()
    with (
        atomic_path(target) as tmp,
        zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf,
    ):
        for name, data in files.items():
            zf.writestr(name, data)
    return target
