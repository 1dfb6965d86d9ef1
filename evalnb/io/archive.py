"""Reading an evaluation archive back into a lab.

:mod:`evalnb.analysis.archive` writes the archive (H2O's layout). The lab's tables come
back from ``interpretation.json`` and its scores from each ``<evaluator>/results.json``.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections import Counter
from pathlib import Path

import polars as pl

from evalnb.io.zipbound import check_members, read_member
from evalnb.lab.bounds import MAX_ARCHIVE_MEMBERS, ZIP_FAULTS, require_regular
from evalnb.lab.core import LabCore
from evalnb.lab.errors import InputError, describe
from evalnb.lab.schema import SCHEMAS

__all__ = ["LAB_TABLES", "MAX_UNZIPPED_BYTES", "read_archive"]

LAB_TABLES = ("cases", "outputs", "metrics", "thresholds", "labels", "models", "info")
_OUTPUT_KEY = ["case_id", "model", "sample"]
_WHAT = "an evalnb archive (interpretation.json and <evaluator>/results.json)"


def _frame(records: list[dict[str, object]], table: str, where: str) -> pl.DataFrame:
    schema = SCHEMAS[table]
    text_schema = {
        k: (pl.String() if v in (pl.Datetime("us", "UTC"), pl.Float64()) else v)
        for k, v in schema.items()
    }
    try:
        frame = pl.DataFrame(
            [
                {
                    k: (
                        None
                        if r.get(k) is None
                        else str(r[k])
                        if text_schema[k] == pl.String() and schema[k] != pl.String()
                        else r.get(k)
                    )
                    for k in schema
                }
                for r in records
            ],
            schema=text_schema,
        )
        casts = []
        for k, v in schema.items():
            if v == pl.Datetime("us", "UTC"):
                casts.append(pl.col(k).str.to_datetime(time_zone="UTC", time_unit="us"))
            elif v == pl.Float64():
                casts.append(pl.col(k).cast(pl.Float64))
        return frame.with_columns(casts) if casts else frame
    except (pl.exceptions.PolarsError, TypeError, ValueError, OverflowError) as exc:
        # OverflowError: an integer too large for any Polars type where a text id is expected
        raise InputError(
            where,
            None,
            table,
            f"records with the columns of evalnb.SCHEMAS[{table!r}]",
            str(exc).splitlines()[0][:200],
        ) from None


# An archive's members are inflated in memory and parsed as JSON (several times their size
# again): the caps of evalnb.io.zipbound bound that.
MAX_UNZIPPED_BYTES = int(os.environ.get("EVALNB_ARCHIVE_MAX_BYTES", 2 << 30))


def _members(zf: zipfile.ZipFile, name: str) -> list[str]:
    """Check the declared sizes of the members to read; return the ``results.json`` names."""
    infos = zf.infolist()
    if len(infos) > MAX_ARCHIVE_MEMBERS:
        raise InputError(
            name,
            None,
            None,
            f"at most {MAX_ARCHIVE_MEMBERS:,} members",
            f"{len(infos):,} members",
            "an evalnb archive has a few dozen; raise EVALNB_MAX_ARCHIVE_MEMBERS if yours is real",
        )
    names = [i.filename for i in infos]
    if "interpretation.json" not in names:
        if "header.json" in names or any(n.startswith("_journal/") for n in names):
            raise InputError(
                name,
                None,
                None,
                _WHAT,
                "an Inspect AI .eval log (a zip of its JSON documents)",
                "convert it with `inspect log convert --to json` and load the .json it writes",
            )
        raise InputError(name, None, "interpretation.json", _WHAT, f"members {sorted(names)[:8]}")
    results = sorted(n for n in names if n.count("/") == 1 and n.endswith("/results.json"))
    wanted = {"interpretation.json", *results}
    check_members(
        (i for i in infos if i.filename in wanted),
        name,
        max_total=MAX_UNZIPPED_BYTES,
        total_hint="Set EVALNB_ARCHIVE_MAX_BYTES to allow more",
    )
    counts = Counter(names)  # one pass: names.count per member was quadratic
    repeated = sorted(n for n in wanted if counts[n] > 1)
    if repeated:
        raise InputError(name, None, repeated[0], "each member once", "it twice or more")
    locked = sorted(i.filename for i in infos if i.filename in wanted and i.flag_bits & 0x1)
    if locked:
        raise InputError(
            name,
            None,
            locked[0],
            "an unencrypted member",
            "an encrypted one",
            "write the archive again without a password",
        )
    return results


def _json_member(zf: zipfile.ZipFile, member: str, name: str) -> object:
    where = f"{name}:{member}"
    try:
        return json.loads(read_member(zf, member, name))
    except json.JSONDecodeError as exc:
        raise InputError(
            where, f"line {exc.lineno}, column {exc.colno}", None, "valid JSON", exc.msg
        ) from None
    except UnicodeDecodeError as exc:
        raise InputError(where, f"byte {exc.start}", None, "UTF-8 JSON", exc.reason) from None
    except RecursionError:
        raise InputError(where, None, None, "JSON nested < 1000 levels", "deeper") from None
    except ValueError as exc:  # an integer of more than 4,300 digits, say
        raise InputError(where, None, None, "JSON Python can hold", str(exc)[:200]) from None
    except RuntimeError as exc:  # zipfile: a member that needs a password
        raise InputError(where, None, None, "an unencrypted member", str(exc)[:200]) from None


def _records_of(value: object, where: str, field: str) -> list[dict[str, object]]:
    if not isinstance(value, list):
        raise InputError(where, None, field, "a list of record objects", describe(value))
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise InputError(where, f"{field}[{i}]", None, "a record object", describe(item))
    return value


def _check_keys(tables: dict[str, pl.DataFrame], name: str) -> None:
    """Ids unique and present, and every answer and score tied to what it belongs to."""
    where = f"{name}:interpretation.json"
    checks = (
        ("cases", ["case_id"], where),
        ("outputs", _OUTPUT_KEY, where),
        ("scores", [*_OUTPUT_KEY, "evaluator", "metric"], f"{name}:<evaluator>/results.json"),
    )
    for table, key, source in checks:
        frame = tables[table]
        nulls = frame.select(pl.any_horizontal(pl.col(key).is_null()).arg_true()).to_series()
        if nulls.len():
            raise InputError(source, f"lab.{table}[{nulls[0]}]", key[0], "an id", "null")
        dup = frame.select(pl.struct(key).is_first_distinct().not_().arg_true()).to_series()
        if dup.len():
            row = frame.row(dup[0], named=True)
            hint = "Is a results file there twice?" if table == "scores" else ""
            raise InputError(
                source,
                f"lab.{table}[{dup[0]}]",
                "/".join(key),
                f"one row per {tuple(key)}",
                f"{[row[k] for k in key]} twice",
                hint,
            )
    for table, parent, key in (
        ("outputs", "cases", ["case_id"]),
        ("scores", "outputs", _OUTPUT_KEY),
    ):
        dangling = tables[table].join(tables[parent], on=key, how="anti")
        if dangling.height:
            row = dangling.row(0, named=True)
            raise InputError(
                where if table == "outputs" else f"{name}:<evaluator>/results.json",
                f"lab.{table}",
                "/".join(key),
                f"ids present in lab.{parent}",
                f"{[row[k] for k in key]}, which is not there",
            )


def read_archive(path: str | Path) -> LabCore:
    """Rebuild the lab an archive was written from (scores from each ``results.json``).

    Raises
    ------
    InputError
        On anything but an evalnb archive: missing or malformed members, members that would
        inflate past the caps (``EVALNB_ARCHIVE_MAX_BYTES``, a ratio of 200:1), repeated
        members, null or repeated ids, answers or scores of unknown cases.
    """
    name = str(path)
    try:
        require_regular(Path(path))
        with zipfile.ZipFile(path) as zf:
            results = _members(zf, name)
            doc = _json_member(zf, "interpretation.json", name)
            parts = [(n, _json_member(zf, n, name)) for n in results]
    except ZIP_FAULTS as exc:
        raise InputError(name, None, None, _WHAT, str(exc)[:200]) from None
    where = f"{name}:interpretation.json"
    lab = doc.get("lab") if isinstance(doc, dict) else None
    if not isinstance(lab, dict):
        raise InputError(where, "$", "lab", "an object of the lab's tables", describe(lab))
    tables = {
        t: _frame(_records_of(lab.get(t, []), where, f"lab.{t}"), t, where) for t in LAB_TABLES
    }
    scores = [_frame(_records_of(v, f"{name}:{n}", "$"), "scores", f"{name}:{n}") for n, v in parts]
    tables["scores"] = pl.concat(scores) if scores else pl.DataFrame(schema=SCHEMAS["scores"])
    _check_keys(tables, name)
    return LabCore(tables)
