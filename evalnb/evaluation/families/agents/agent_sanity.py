"""H2O's agent sanity check: the artifacts an agent produced, checked.

Each output lists its artifacts in its ``extra`` (``{"artifacts": ["report.json",
"charts/"]}``: files or folders, relative to ``artifacts_root``; an ``artifacts`` column of
an imported table lands in the case's extra and counts too); a case may say what they
must look like in its ``extra`` (``{"expected_artifacts": [{"path": "report.json",
"fields": {"status": "ok"}}, {"path": "charts/", "contains": ["summary.png"]}]}``). Each
artifact is checked as H2O describes: it exists inside the root; a file is not empty, a JSON
file parses (lint), a PDF has text on every page, a text file (Markdown, HTML, CSV, plain)
has text; a folder is not empty and holds the expected entries; a JSON file's fields hold
the expected values (dotted paths). The score is the share of artifacts passing every
check (H2O's "percentage of artifacts meeting quality standards"; threshold 0.75); the
detail names each artifact's failed checks.

Every artifact is read through the bounded-input layer (regular files only, at most
``max_artifact_bytes``): an agent's output is untrusted, and so are the paths it names.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from evalnb.evaluation.base import (
    Context,
    Evaluator,
    MetricSpec,
    Param,
    reasons,
    register,
    result_frame,
    threshold_param,
)
from evalnb.lab.bounds import read_limited, within
from evalnb.lab.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Mapping

    import polars as pl

__all__ = ["AgentSanity", "check_artifact"]

_TEXT = {".md", ".markdown", ".txt", ".csv", ".tsv", ".html", ".htm", ".xml", ".yaml", ".yml"}
_TAG = re.compile(r"<[^>]{0,2000}>")
_MAX_PDF_PAGES = 3_000


def _json_field(doc: Any, path: str) -> tuple[bool, Any]:  # noqa: ANN401
    """Return the value at a dotted path (``a.b.0``), and whether it is there."""
    value = doc
    for part in path.removeprefix("$.").split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return False, None
    return True, value


def _file_checks(path: Path, data: bytes, expect: Mapping[str, Any]) -> list[str]:
    """Return the failed checks of one file's bytes."""
    failed = []
    if not data.strip():
        return ["empty"]
    suffix = path.suffix.lower()
    if suffix == ".json":
        try:
            doc = json.loads(data.decode("utf-8"))
        except (ValueError, RecursionError) as exc:
            return [f"JSON lint: {str(exc)[:120]}"]
        for key, want in (expect.get("fields") or {}).items():
            present, got = _json_field(doc, str(key))
            if not present:
                failed.append(f"field {key}: missing")
            elif got != want:
                failed.append(
                    f"field {key}: {json.dumps(got)[:80]}, expected {json.dumps(want)[:80]}"
                )
    elif suffix == ".pdf":
        failed += _pdf_checks(data)
    elif suffix in _TEXT:
        text = data.decode("utf-8", errors="replace")
        if suffix in (".html", ".htm", ".xml"):
            text = _TAG.sub(" ", text)
        if not text.strip():
            failed.append("no text")
    return failed


def _pdf_checks(data: bytes) -> list[str]:
    import pypdf  # noqa: PLC0415
    from pypdf.errors import PyPdfError  # noqa: PLC0415

    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        pages = len(reader.pages)
        if pages > _MAX_PDF_PAGES:
            return [f"more than {_MAX_PDF_PAGES} pages"]
        empty = [i + 1 for i in range(pages) if not (reader.pages[i].extract_text() or "").strip()]
    except (PyPdfError, ValueError, KeyError, TypeError, OSError, RecursionError) as exc:
        return [f"PDF unreadable: {str(exc)[:120]}"]
    if not pages:
        return ["PDF without pages"]
    return [f"empty page(s) {empty[:10]}"] if empty else []


def check_artifact(root: Path, name: str, expect: Mapping[str, Any], max_bytes: int) -> list[str]:
    """Return the failed checks of one artifact (empty: it passes)."""
    path = root / name
    if not path.exists():
        return ["missing"]
    if not within(path, root):
        return ["outside the artifacts root"]
    if path.is_dir():
        entries = {p.name for p in path.iterdir()}
        if not entries:
            return ["empty folder"]
        missing = [e for e in expect.get("contains") or [] if str(e).rstrip("/") not in entries]
        return [f"missing {missing[:10]}"] if missing else []
    try:
        data = read_limited(path, max_bytes, hint="raise max_artifact_bytes")
    except InputError as exc:
        return [f"not readable: {str(exc).removeprefix(str(path)).lstrip(', :')[:200]}"]
    return _file_checks(path, data, expect)


def _listed(blob: str | None, key: str) -> list[Any]:
    try:
        value = json.loads(blob or "{}")
    except ValueError:
        return []
    items = value.get(key) if isinstance(value, dict) else None
    if isinstance(items, str):  # an imported column: the list as JSON text
        try:
            items = json.loads(items)
        except ValueError:
            return [items]  # one path
    return items if isinstance(items, list) else []


@register
class AgentSanity(Evaluator):
    """The share of an agent's artifacts that pass H2O's sanity checks."""

    id = "agent_sanity"
    title = "Agent sanity check"
    domain = "agents"
    description = (
        "H2O's agent sanity check: each artifact the agent produced (listed in the output's "
        "extra) must exist, be non-empty, lint as JSON, have text on every PDF page, hold the "
        "expected folder entries and JSON field values; the share passing."
    )
    requires = ("actual",)
    metrics = (
        MetricSpec(
            "agent_sanity",
            "Agent sanity",
            "Share of the agent's artifacts meeting the checks.",
            threshold=0.75,
            primary=True,
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param(
            "artifacts_root",
            str,
            default=".",
            description="the folder artifact paths are relative to (none may leave it)",
        ),
        Param(
            "max_artifact_bytes",
            int,
            default=64 * 2**20,
            low=1,
            description="the largest artifact read",
        ),
        threshold_param(0.75, "agent_sanity"),
    )

    def score(self, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context) -> pl.DataFrame:
        """Rows listing no artifact are not scored."""
        root = Path(str(params["artifacts_root"])).expanduser()
        limit = int(params["max_artifact_bytes"])  # type: ignore[call-overload]
        values: list[float] = []
        details: list[str | None] = []
        for output_extra, case_extra in zip(
            rows["output_extra"].to_list(), rows["case_extra"].to_list(), strict=True
        ):
            # The output's own list; a lab with one answer per case may list them per case.
            listed = _listed(output_extra, "artifacts") or _listed(case_extra, "artifacts")
            artifacts = [str(a) for a in listed]
            expected = {
                str(e.get("path")): e
                for e in _listed(case_extra, "expected_artifacts")
                if isinstance(e, dict) and e.get("path")
            }
            artifacts += [p for p in expected if p not in artifacts]  # expected but not listed
            if not artifacts:
                values.append(np.nan)
                details.append(None)
                continue
            checks = {a: check_artifact(root, a, expected.get(a, {}), limit) for a in artifacts}
            passed = sum(not failed for failed in checks.values())
            values.append(passed / len(checks))
            details.append(
                json.dumps(
                    {"artifacts": [{"path": a, "failed": f} for a, f in checks.items()]},
                    ensure_ascii=False,
                )
            )
        value = np.array(values, dtype=float)
        why = reasons(rows.height, (np.isnan(value), "the output lists no artifacts"), base=details)
        return result_frame(rows, {"agent_sanity": value}, why)
