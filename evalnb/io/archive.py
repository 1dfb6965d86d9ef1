"""Reading an evaluation archive back into a lab.

:mod:`evalnb.analysis.archive` writes the archive (H2O's layout). The lab's tables come
back from ``interpretation.json`` and its scores from each ``<evaluator>/results.json``.
"""

from __future__ import annotations

import json
import zipfile
from typing import TYPE_CHECKING

import polars as pl

from evalnb.lab.core import LabCore
from evalnb.lab.errors import InputError
from evalnb.lab.schema import SCHEMAS

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["LAB_TABLES", "read_archive"]

LAB_TABLES = ("cases", "outputs", "metrics", "thresholds", "labels", "models", "info")


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


def read_archive(path: str | Path) -> LabCore:
    """Rebuild the lab an archive was written from (scores from each ``results.json``)."""
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
              for t in LAB_TABLES}  # fmt: skip
    tables["scores"] = pl.concat(scores) if scores else pl.DataFrame(schema=SCHEMAS["scores"])
    return LabCore(tables)
