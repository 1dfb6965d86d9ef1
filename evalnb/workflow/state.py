"""Where each workflow step stands, folded from the append-only ``workflow_events`` table.

A step is *done* when its last finished run had the inputs it would have now: the same
parameters and the same outputs of the steps it depends on (H2O's "Depends on"). A step's
output is named by its last finished run, and — where people change it outside the
workflow — by what they changed: curation decisions for test validation, the calibrated
threshold for calibration. So re-running a step, changing its parameters, curating the
suite or recalibrating a threshold marks what depends on it *stale*, without anyone
having to say so.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import uuid
from typing import TYPE_CHECKING, Any

import polars as pl

from evalnb.lab.schema import SCHEMAS
from evalnb.workflow.steps import STEPS, Step

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = ["BY_NAME", "event_row", "input_print", "last_events", "step_state"]

BY_NAME: dict[str, Step] = {s.name: s for s in STEPS}
_RUN_EVENTS = ("started", "finished", "failed", "waiting")


def event_row(
    step: str,
    event: str,
    *,
    run_id: str | None = None,
    params: dict[str, Any] | None = None,
    inputs: str | None = None,
    summary: dict[str, Any] | None = None,
    who: str | None = None,
    note: str | None = None,
    duration_s: float | None = None,
) -> pl.DataFrame:
    """Build one ``workflow_events`` row."""
    return pl.DataFrame(
        [
            {
                "event_id": uuid.uuid4().hex,
                "step": step,
                "event": event,
                "run_id": run_id,
                "params": None
                if params is None
                else json.dumps(params, sort_keys=True, default=str),
                "inputs": inputs,
                "summary": None if summary is None else json.dumps(summary, default=str),
                "who": who,
                "note": note,
                "at": dt.datetime.now(dt.UTC),
                "duration_s": duration_s,
            }
        ],
        schema=SCHEMAS["workflow_events"],
    )


def last_events(events: pl.DataFrame, step: str) -> dict[str, dict[str, Any] | None]:
    """Return the step's latest event of each kind (``run``: started/finished/failed/waiting)."""
    mine = events.filter(pl.col("step") == step).with_row_index("_order").sort("at", "_order")
    out: dict[str, dict[str, Any] | None] = {}
    for kind in ("finished", "configured", "approved"):
        part = mine.filter(pl.col("event") == kind)
        out[kind] = part.row(-1, named=True) if part.height else None
    runs = mine.filter(pl.col("event").is_in(_RUN_EVENTS))
    out["run"] = runs.row(-1, named=True) if runs.height else None
    return out


def _digest(value: object) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]


def output_print(step: str, lab: LabCore, events: pl.DataFrame) -> str | None:
    """Name the step's current output (None: the step never finished)."""
    finished = last_events(events, step)["finished"]
    if finished is None:
        return None
    parts: list[object] = [finished["run_id"]]
    if step == "test_validation":  # reviewers curate the suite after validation
        parts.append(sorted(lab.table("curation")["curation_id"].to_list()))
    elif step == "calibration":  # and recalibrate thresholds (the labeler's apply)
        p = json.loads(finished["params"] or "{}")
        t = lab.thresholds.filter(
            (pl.col("evaluator") == p.get("evaluator")) & (pl.col("metric") == p.get("metric"))
        )
        parts.append(t.sort("created_at").select("threshold", "source").rows())
    return _digest(parts)


def input_print(step: str, params: dict[str, Any], lab: LabCore, events: pl.DataFrame) -> str:
    """Name what the step would run on now: its parameters and its dependencies' outputs."""
    deps = [output_print(d, lab, events) for d in BY_NAME[step].depends]
    return _digest([params, deps])


def step_state(
    step: str, params: dict[str, Any], lab: LabCore, events: pl.DataFrame, done: dict[str, bool]
) -> tuple[str, str]:
    """Return the step's status and why.

    Statuses: ``done``, ``stale``, ``ready``, ``blocked``, ``waiting``, ``failed`` or
    ``interrupted``. ``done`` tells which dependencies are done (steps are folded in order).
    """
    last = last_events(events, step)
    run, finished = last["run"], last["finished"]
    deps_done = all(done.get(d, False) for d in BY_NAME[step].depends)
    if run is not None and run["event"] == "started":
        return "interrupted", "started and never finished (killed, or running elsewhere)"
    if run is not None and run["event"] in ("failed", "waiting"):
        return str(run["event"]), str(run["note"] or "")
    if finished is None:
        return ("ready", "") if deps_done else ("blocked", "a step it depends on is not done")
    if not deps_done:
        return "stale", "a step it depends on changed or is not done"
    if finished["inputs"] != input_print(step, params, lab, events):
        return "stale", "its parameters or its inputs changed since it ran"
    return "done", ""
