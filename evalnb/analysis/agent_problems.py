"""Problems of agents' runs: tools that fail often, arguments that are not JSON, loops.

Read from the ``steps`` table (one row a message or tool call), per agent and tool; each
problem names the cases to read. :func:`evalnb.analysis.problems.problems` adds them to the
lab's other problems.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = ["TOOL_FAILURE_SHARE", "TOOL_MIN_CALLS", "tool_problems"]

# A tool fails "often" from this share of its calls, once it has been called this often.
TOOL_FAILURE_SHARE, TOOL_MIN_CALLS = 0.2, 5


def tool_problems(lab: LabCore) -> list[dict[str, object]]:
    """Agents' tools: failing often, called with arguments that are not JSON; runs that loop."""
    if not lab.height("steps"):
        return []
    # Only the tool calls' columns are read (steps may be kept on disk).
    calls = (
        lab.scan("steps")
        .filter(pl.col("tool_name").is_not_null() & (pl.col("role") != "tool"))
        .select("case_id", "model", "sample", "tool_name", "tool_args", "args_valid", "error")
        .collect()
    )
    per_tool = (
        calls.group_by("model", "tool_name")
        .agg(
            n=pl.len(),
            failed=pl.col("error").is_not_null().sum(),
            invalid=(~pl.col("args_valid").fill_null(value=True)).sum(),
            failed_cases=pl.col("case_id").filter(pl.col("error").is_not_null()).unique().sort(),
            invalid_cases=pl.col("case_id")
            .filter(~pl.col("args_valid").fill_null(value=True))
            .unique()
            .sort(),
        )
        .sort("model", "tool_name")
    )
    out: list[dict[str, object]] = []
    for r in per_tool.iter_rows(named=True):
        share = r["failed"] / r["n"]
        if r["n"] >= TOOL_MIN_CALLS and share >= TOOL_FAILURE_SHARE:
            out.append(
                _agent_problem(
                    "HIGH" if share >= 0.5 else "MEDIUM",
                    r["model"],
                    r["failed_cases"],
                    f"Agent {r['model']}: tool '{r['tool_name']}' failed in {r['failed']} of its "
                    f"{r['n']} calls ({share:.0%}).",
                    "Read the tool's errors and the arguments sent; fix the tool or its description.",
                    share,
                )
            )
        if r["invalid"]:
            out.append(
                _agent_problem(
                    "MEDIUM",
                    r["model"],
                    r["invalid_cases"],
                    f"Agent {r['model']}: {r['invalid']} call(s) of tool '{r['tool_name']}' had "
                    "arguments that are not valid JSON.",
                    "Give the tool a JSON schema the model follows, or use a model with strict "
                    "function calling.",
                    r["invalid"] / r["n"],
                )
            )
    loops = (
        calls.group_by("case_id", "model", "sample", "tool_name", "tool_args")
        .agg(times=pl.len())
        .filter(pl.col("times") > 2)  # the same call three times or more
        .group_by("model")
        .agg(pl.col("case_id").unique().sort(), runs=pl.struct("case_id", "sample").n_unique())
        .sort("model")
    )
    for model, ids, runs in loops.iter_rows():
        out.append(
            _agent_problem(
                "MEDIUM",
                model,
                ids,
                f"Agent {model} repeated the same tool call (same arguments) three times or more in "
                f"{runs} run(s): a loop.",
                "Cap the steps, give the agent the tool's result in a form it can act on, or tell it "
                "when to stop.",
                None,
            )
        )
    return out


def _agent_problem(
    severity: str, model: str, case_ids: list[str], text: str, action: str, score: float | None
) -> dict[str, object]:
    return {
        "severity": severity,
        "problem_type": "agents",
        "avid_code": "P0200",
        "evaluator": None,
        "metric": None,
        "model": model,
        "description": text,
        "actions_description": action,
        "score": score,
        "threshold": None,
        "case_ids": case_ids,
    }
