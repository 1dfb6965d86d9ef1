"""Curation of a test suite: reviewers accept, edit, exclude and restore cases.

Every decision is a row appended to the ``curation`` table (never updated), so reviewers
curating one suite from several kernels lose nothing to each other. A case's state is its
log folded in time order: the latest prompt edit and the latest expected-answer edit hold;
its status is its latest decision. Each row carries the case as it was (``snapshot``), so
an exclusion already applied to the ``cases`` table can still be restored.

Statuses: ``pending`` (no decision, or restored), ``accepted``, ``edited`` (accepted with
changes) and ``excluded``.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from typing import TYPE_CHECKING, Any, TypeVar

import polars as pl

from evalnb.lab.schema import SCHEMAS

if TYPE_CHECKING:
    from collections.abc import Sequence

    from evalnb.lab.core import LabCore

__all__ = [
    "ACTIONS",
    "STATE_SCHEMA",
    "apply_curation",
    "curate",
    "curated_cases",
    "curation_of",
    "curation_row",
    "curation_state",
    "curation_view",
]

L = TypeVar("L", bound="LabCore")

ACTIONS = ("accept", "edit", "exclude", "restore")
_STATUS = {"accept": "accepted", "edit": "edited", "exclude": "excluded", "restore": "pending"}
STATE_SCHEMA = pl.Schema(
    {
        "case_id": pl.String(),
        "status": pl.String(),
        "prompt": pl.String(),
        "expected": pl.List(pl.String()),
        "reviewer": pl.String(),
        "note": pl.String(),
        "updated_at": pl.Datetime("us", "UTC"),
        "n_decisions": pl.Int64(),
    }
)


def curation_row(
    case: dict[str, Any],
    action: str,
    *,
    reviewer: str,
    prompt: str | None = None,
    expected: str | Sequence[str] | None = None,
    note: str | None = None,
) -> pl.DataFrame:
    """Build one ``curation`` row for ``case`` (a ``cases`` row as a dict)."""
    if action not in ACTIONS:
        msg = f"a curation action is one of {ACTIONS}; got {action!r}"
        raise ValueError(msg)
    if not reviewer:
        msg = "curation needs a reviewer name (who decided); got an empty one"
        raise ValueError(msg)
    answers = (
        [expected] if isinstance(expected, str) else None if expected is None else list(expected)
    )
    if action == "edit" and prompt is None and answers is None:
        msg = "an edit changes the prompt, the expected answer or both: pass prompt= or expected="
        raise ValueError(msg)
    if action != "edit" and (prompt is not None or answers is not None):
        msg = f"only an edit changes the case; {action!r} takes no prompt= or expected="
        raise ValueError(msg)
    if answers is not None and not all(isinstance(a, str) and a.strip() for a in answers):
        msg = f"expected answers must be non-empty text; got {answers!r}"
        raise ValueError(msg)
    snapshot = json.dumps(case, ensure_ascii=False, default=str)
    return pl.DataFrame(
        [
            {
                "curation_id": uuid.uuid4().hex,
                "case_id": case["case_id"],
                "action": action,
                "prompt": prompt,
                "expected": answers,
                "reviewer": reviewer,
                "note": note,
                "created_at": dt.datetime.now(dt.UTC),
                "snapshot": snapshot,
            }
        ],
        schema=SCHEMAS["curation"],
    )


def curation_state(log: pl.DataFrame) -> pl.DataFrame:
    """Each curated case's state: status, edited prompt and answer (None: unchanged), who, when."""
    if log.is_empty():
        return pl.DataFrame(schema=STATE_SCHEMA)
    ordered = log.with_row_index("_order").sort("created_at", "_order")
    return (
        ordered.group_by("case_id", maintain_order=True)
        .agg(
            status=pl.col("action").last().replace_strict(_STATUS),
            prompt=pl.col("prompt").drop_nulls().last(),
            expected=pl.col("expected").drop_nulls().last(),
            reviewer=pl.col("reviewer").last(),
            note=pl.col("note").last(),
            updated_at=pl.col("created_at").last(),
            n_decisions=pl.len().cast(pl.Int64),
        )
        .select(list(STATE_SCHEMA))
    )


def _with_logged(cases: pl.DataFrame, log: pl.DataFrame, ids: Sequence[str]) -> pl.DataFrame:
    """``cases`` plus the cases of ``ids`` it lacks, from their latest snapshot in ``log``."""
    missing = sorted(set(ids) - set(cases["case_id"].to_list()))
    if not missing:
        return cases
    latest = (
        log.filter(pl.col("case_id").is_in(missing))
        .sort("created_at")
        .group_by("case_id", maintain_order=True)
        .last()
    )
    back = pl.DataFrame([json.loads(s) for s in latest["snapshot"]], schema=cases.schema)
    return pl.concat([cases, back])


def _edited(cases: pl.DataFrame, state: pl.DataFrame) -> pl.DataFrame:
    edits = state.select("case_id", "status", new_prompt="prompt", new_expected="expected")
    return cases.join(edits, on="case_id", how="left").with_columns(
        prompt=pl.coalesce("new_prompt", "prompt"),
        expected=pl.coalesce("new_expected", "expected"),
        status=pl.col("status").fill_null("pending"),
    )


def curated_cases(cases: pl.DataFrame, log: pl.DataFrame) -> pl.DataFrame:
    """Return ``cases`` as curated: edits applied, excluded cases out, restored ones back in.

    Idempotent: applying it to its own result changes nothing. Case ids are kept through
    edits, so scores, labels and lineage still name the case.
    """
    state = curation_state(log)
    if state.is_empty():
        return cases
    kept = state.filter(pl.col("status") != "excluded")["case_id"].to_list()
    every = _with_logged(cases, log, kept)  # restored after an exclusion was applied
    return _edited(every, state).filter(pl.col("status") != "excluded").select(cases.columns)


def curation_view(cases: pl.DataFrame, log: pl.DataFrame) -> pl.DataFrame:
    """Every case, excluded ones included, as curated, with its status and last decision."""
    state = curation_state(log)
    every = _with_logged(cases, log, state["case_id"].to_list())
    return (
        _edited(every, state)
        .join(
            state.select("case_id", "reviewer", "note", "updated_at", "n_decisions"),
            on="case_id",
            how="left",
        )
        .select(
            "case_id",
            "status",
            "prompt",
            "expected",
            "question_type",
            "topic",
            "reviewer",
            "note",
            "updated_at",
            pl.col("n_decisions").fill_null(0),
        )
    )


def curate(
    lab: LabCore,
    case_id: str,
    action: str,
    *,
    reviewer: str,
    prompt: str | None = None,
    expected: str | Sequence[str] | None = None,
    note: str | None = None,
) -> pl.DataFrame:
    """Record a reviewer's decision on a test case: accept, edit, exclude or restore.

    ``edit`` takes a new ``prompt``, ``expected`` answer(s) or both; the case keeps its
    id. Appended to the ``curation`` table — and committed to the store before this
    returns — never changed, so reviewers curating from several kernels lose nothing.
    ``lab.curation`` shows where each case stands; ``lab.curation.apply`` makes the
    cases table the curated suite; the ``h2o_suite`` export is always the curated one.
    """
    log = lab.table("curation")
    found = lab.cases.filter(pl.col("case_id") == case_id)
    if found.is_empty():  # an exclusion applied already: the case lives on in the log
        found = _with_logged(lab.cases.clear(), log, [case_id])
    if found.is_empty():
        msg = (
            f"no case {case_id!r} in this lab (nor in its curation log); pass an id from lab.cases"
        )
        raise KeyError(msg)
    row = curation_row(
        found.row(0, named=True),
        action,
        reviewer=reviewer,
        prompt=prompt,
        expected=expected,
        note=note,
    )
    lab.append_rows("curation", row)
    return row


def curation_of(lab: LabCore) -> pl.DataFrame:
    """Show every case of ``lab`` as curated, excluded ones included.

    Columns: ``status`` (pending, accepted, edited, excluded), the prompt and expected
    answer with edits applied, and the last decision (reviewer, note, when, how many).
    """
    return curation_view(lab.cases, lab.table("curation"))


def apply_curation(lab: L) -> L:
    """Return ``lab`` with its curated suite as ``cases`` (edits in, exclusions out).

    Written to the store like any change; the curation log keeps each excluded case, so a
    later ``restore`` brings it back.
    """
    return lab.with_tables({"cases": curated_cases(lab.cases, lab.table("curation"))})
