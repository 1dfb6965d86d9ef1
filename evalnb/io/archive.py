"""ZIP archive of an evaluation in H2O's layout, and reading one back into a Lab.

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
import os
import tempfile
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from evalnb.lab.errors import InputError
from evalnb.lab.schema import SCHEMAS

if TYPE_CHECKING:
    from evalnb.lab.core import Lab

__all__ = ["read_archive", "write_archive"]

_LAB_TABLES = ("cases", "outputs", "metrics", "thresholds", "labels", "models", "info")


def _records(frame: pl.DataFrame) -> list[dict[str, object]]:
    out = frame.to_dicts()
    for row in out:
        for key, value in row.items():
            if isinstance(value, dt.datetime):
                row[key] = value.isoformat()
            elif isinstance(value, float) and value in (float("inf"), float("-inf")):
                row[key] = "inf" if value > 0 else "-inf"
    return out


def _frame(records: list[dict[str, object]], table: str, where: str) -> pl.DataFrame:
    schema = SCHEMAS[table]
    text_schema = {
        k: (pl.String() if v in (pl.Datetime("us", "UTC"), pl.Float64()) else v)
        for k, v in schema.items()
    }
    try:
        frame = pl.DataFrame(
            [{k: (None if r.get(k) is None else str(r[k]) if text_schema[k] == pl.String() and schema[k] != pl.String() else r.get(k))
              for k in schema} for r in records],
            schema=text_schema,
        )  # fmt: skip
        casts = []
        for k, v in schema.items():
            if v == pl.Datetime("us", "UTC"):
                casts.append(pl.col(k).str.to_datetime(time_zone="UTC", time_unit="us"))
            elif v == pl.Float64():
                casts.append(pl.col(k).cast(pl.Float64))
        return frame.with_columns(casts) if casts else frame
    except (pl.exceptions.PolarsError, TypeError, ValueError) as exc:
        raise InputError(where, None, table, f"records with the columns of evalnb.SCHEMAS[{table!r}]",
                         str(exc).splitlines()[0][:200]) from None  # fmt: skip


def _markdown(frame: pl.DataFrame) -> str:
    cols = ["model", "metric", "n_cases", "mean", "ci_low", "ci_high", "pass_rate", "rank"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines.extend(
        "| " + " | ".join(f"{v:.4f}" if isinstance(v, float) else str(v) for v in r) + " |"
        for r in frame.select(cols).iter_rows()
    )
    return "\n".join(lines) + "\n"


def write_archive(lab: Lab, path: str | Path, *, seed: int = 0) -> Path:
    """Write the archive of ``lab`` to ``path`` (a ``.zip``)."""
    from evalnb.analysis.derived import analyse, model_keys  # noqa: PLC0415
    from evalnb.analysis.insights import insights_json  # noqa: PLC0415
    from evalnb.analysis.problems import problems_json  # noqa: PLC0415
    from evalnb.analysis.report import render_report  # noqa: PLC0415

    target = Path(path)
    done = analyse(lab, seed)  # once: the report, JSON files and per-evaluator files share it
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
        "lab": {t: _records(lab.table(t)) for t in _LAB_TABLES},
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
        [f"{dt.datetime.now(dt.UTC).isoformat()} evalnb archive of {lab.path or 'an in-memory lab'}",
         f"{lab.cases.height} cases, {lab.outputs.height} answers, {lab.scores.height} scores",
         f"{problems.height} problems, {insights.height} insights", *sorted(files)]
    ).encode()  # fmt: skip
    fd, tmp = tempfile.mkstemp(
        dir=target.parent if target.parent.exists() else None, suffix=".zip.tmp"
    )
    os.close(fd)
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for name, data in files.items():
                zf.writestr(name, data)
        umask = os.umask(0)
        os.umask(umask)
        Path(tmp).chmod(0o666 & ~umask)  # mkstemp makes it private; an archive is meant to share
        Path(tmp).replace(target)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return target


def read_archive(path: str | Path) -> Lab:
    """Rebuild the Lab an archive was written from (scores from each ``results.json``)."""
    from evalnb.lab.core import Lab  # noqa: PLC0415

    name = str(path)
    try:
        with zipfile.ZipFile(path) as zf:
            interpretation = json.loads(zf.read("interpretation.json"))
            results = [n for n in zf.namelist() if n.endswith("/results.json")]
            scores = [
                _frame(json.loads(zf.read(n)), "scores", f"{name}:{n}") for n in sorted(results)
            ]
    except (zipfile.BadZipFile, KeyError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(name, None, "interpretation.json",
                         "an evalnb archive (interpretation.json and <evaluator>/results.json)",
                         str(exc)[:200]) from None  # fmt: skip
    tables = {t: _frame(interpretation.get("lab", {}).get(t, []), t, f"{name}:interpretation.json")
              for t in _LAB_TABLES}  # fmt: skip
    tables["scores"] = pl.concat(scores) if scores else pl.DataFrame(schema=SCHEMAS["scores"])
    return Lab(tables)
