"""Judge-free agent evaluators over the ``steps`` and ``reference_calls`` tables.

The evaluation engine hands these evaluators two list columns per row (``trajectory = True``):
``steps`` (the output's steps, in order) and ``reference`` (the case's reference tool calls;
null when the case has none). Tool calls are compared by name and arguments; arguments are
the canonical JSON the importer stored, parsed here once per distinct text.

Namesakes compute their tool's numbers (checked against the tools themselves):

* ``tool_call_accuracy``: ragas 0.4 ``collections.ToolCallAccuracy`` — 0 unless the called
  tools' names follow the reference's (``strict_order``) or are the same names in any order;
  then the mean over the paired calls of the share of reference arguments equal as text,
  with ragas' coverage penalty.
* ``tool_call_f1``: ragas ``collections.ToolCallF1`` — F1 of the sets of (name, arguments),
  rounded to 4 decimals as ragas does.
* ``tool_correctness``: DeepEval ``ToolCorrectnessMetric`` in its three modes (names, exact
  match, ordering by weighted LCS), arguments compared when ``compare_arguments``.

Our own: ``trajectory_match`` (strict, unordered, subset, superset over the calls) and
``agent_steps`` (steps, tool calls, extra calls against the reference, tool error rate,
repeated calls, latency and cost of the run).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import polars as pl

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
from evalnb.evaluation.families.agents.tool_calls import (
    Call,
    CallsOverBound,
    deepeval_tool_correctness,
    ragas_tool_call_accuracy,
    ragas_tool_call_f1,
    trajectory_match,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping


__all__ = ["AgentSteps", "ToolCallAccuracy", "ToolCallF1", "ToolCorrectness", "TrajectoryMatch"]

_KEY = ["case_id", "model", "sample"]
_NO_REFERENCE = "the case has no reference tool calls"


def _args(text: str | None) -> dict[str, Any] | None:
    """Parse arguments; None when they are not a JSON object (malformed, kept as text)."""
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _calls(rows: pl.DataFrame) -> tuple[list[list[tuple[str, Any, Any]]], list[Any]]:
    """Per row: the tool calls made (name, args, result) and the reference (None: none).

    The calls are cut out of the steps with Polars first, so only three plain columns of
    the calls (not every field of every step) become Python objects.
    """
    parsed: dict[str | None, Any] = {}

    def args_of(text: str | None) -> Any:  # noqa: ANN401
        if text not in parsed:
            got = _args(text)
            parsed[text] = got if got is not None else {"__unparsed__": text}
        return parsed[text]

    n = rows.height
    index = pl.int_range(pl.len(), dtype=pl.Int64).alias("_row")
    steps = (
        rows.select(index, "steps")
        .explode("steps")
        .unnest("steps")
        .filter(pl.col("tool_name").is_not_null() & (pl.col("role") != "tool"))
    )
    made: list[list[tuple[str, Any, Any]]] = [[] for _ in range(n)]
    for row, name, args, result in zip(
        steps["_row"].to_list(),
        steps["tool_name"].to_list(),
        steps["tool_args"].to_list(),
        steps["tool_result"].to_list(),
        strict=True,
    ):
        made[row].append((name, args_of(args), result))
    has = rows["reference"].is_not_null().to_list()
    refs: list[Any] = [[] if h else None for h in has]
    ref = rows.select(index, "reference").explode("reference").unnest("reference")
    ref = ref.filter(pl.col("tool_name").is_not_null())
    for row, name, args in zip(
        ref["_row"].to_list(), ref["tool_name"].to_list(), ref["tool_args"].to_list(), strict=True
    ):
        refs[row].append((name, args_of(args), None))
    return made, refs


def _against_reference(
    rows: pl.DataFrame, metric: str, compare: Callable[[list[Call], list[Call]], float]
) -> pl.DataFrame:
    """Score every row whose case has reference calls by ``compare(made, reference)``."""
    made, refs = _calls(rows)
    values = np.full(rows.height, np.nan)
    over: dict[int, str] = {}  # rows past a comparison's bound: why they have no value
    for i, (m, r) in enumerate(zip(made, refs, strict=True)):
        if r is not None:
            try:
                values[i] = compare(m, r)
            except CallsOverBound as exc:
                over[i] = str(exc)
    missing = np.array([r is None for r in refs], dtype=bool)
    why = reasons(rows.height, (missing, _NO_REFERENCE))
    for i, text in over.items():
        why[i] = json.dumps({"reason": f"not scored: {text}"})
    return result_frame(rows, {metric: values}, why)


@register
class ToolCallAccuracy(Evaluator):
    """ragas' tool call accuracy: names in order, then arguments, against the reference."""

    id = "tool_call_accuracy"
    title = "Tool call accuracy (ragas)"
    domain = "agents"
    description = (
        "ragas ToolCallAccuracy: 0 unless the tools called follow the reference's names "
        "(in order, or in any order with strict_order=False); else the mean share of each "
        "reference call's arguments matched, with ragas' coverage penalty."
    )
    requires = ("actual",)
    trajectory = True
    metrics = (
        MetricSpec(
            "tool_call_accuracy",
            "Tool call accuracy",
            "ragas ToolCallAccuracy against the reference tool calls.",
            threshold=0.5,
            primary=True,
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param(
            "strict_order",
            bool,
            default=True,
            description="tool calls must follow the reference's order",
        ),
        threshold_param(0.5, "tool_call_accuracy"),
    )

    def score(self, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context) -> pl.DataFrame:
        """Rows whose case has no reference are not scored."""
        strict = bool(params["strict_order"])
        return _against_reference(
            rows, self.id, lambda m, r: ragas_tool_call_accuracy(m, r, strict_order=strict)
        )


@register
class ToolCallF1(Evaluator):
    """ragas' tool call F1: the sets of (name, arguments) called and expected."""

    id = "tool_call_f1"
    title = "Tool call F1 (ragas)"
    domain = "agents"
    description = (
        "ragas ToolCallF1: F1 of the set of (tool, arguments) called against the reference "
        "set (order and repeats ignored), rounded to 4 decimals as ragas does."
    )
    requires = ("actual",)
    trajectory = True
    metrics = (
        MetricSpec(
            "tool_call_f1", "Tool call F1", "ragas ToolCallF1.", threshold=0.5, primary=True
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (threshold_param(0.5, "tool_call_f1"),)

    def score(self, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context) -> pl.DataFrame:
        """Rows whose case has no reference are not scored."""
        return _against_reference(rows, self.id, ragas_tool_call_f1)


@register
class ToolCorrectness(Evaluator):
    """DeepEval's tool correctness: the expected tools called (names, arguments, order)."""

    id = "tool_correctness"
    title = "Tool correctness (DeepEval)"
    domain = "agents"
    description = (
        "DeepEval ToolCorrectnessMetric (its tool-calling score): the share of expected "
        "tools called; exact_match: all or nothing, in order; consider_ordering: a weighted "
        "longest common subsequence; compare_arguments: input parameters count too."
    )
    requires = ("actual",)
    trajectory = True
    metrics = (
        MetricSpec(
            "tool_correctness",
            "Tool correctness",
            "DeepEval ToolCorrectness.",
            threshold=0.5,
            primary=True,
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param(
            "exact_match",
            bool,
            default=False,
            description="DeepEval should_exact_match: the same calls in the same order",
        ),
        Param(
            "consider_ordering",
            bool,
            default=False,
            description="DeepEval should_consider_ordering: a weighted LCS of the calls",
        ),
        Param(
            "compare_arguments",
            bool,
            default=False,
            description="DeepEval evaluation_params=[INPUT_PARAMETERS]",
        ),
        threshold_param(0.5, "tool_correctness"),
    )

    def score(self, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context) -> pl.DataFrame:
        """Rows whose case has no reference are not scored."""
        options = {
            "exact": bool(params["exact_match"]),
            "ordering": bool(params["consider_ordering"]),
            "arguments": bool(params["compare_arguments"]),
        }
        return _against_reference(
            rows, self.id, lambda m, r: deepeval_tool_correctness(m, r, **options)
        )


# --- Our own -------------------------------------------------------------------------------


@register
class TrajectoryMatch(Evaluator):
    """Whether the agent's tool calls match the reference: strict, unordered, subset, superset."""

    id = "trajectory_match"
    title = "Trajectory match"
    domain = "agents"
    description = (
        "1 when the tool calls made match the reference calls: strict (same calls, same "
        "order), unordered (same calls), subset (no call outside the reference) or superset "
        "(every reference call made); by name and arguments, or by name only."
    )
    requires = ("actual",)
    trajectory = True
    metrics = (
        MetricSpec(
            "trajectory_match",
            "Trajectory match",
            "The calls match the reference in the chosen mode.",
            threshold=0.5,
            primary=True,
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param(
            "mode",
            str,
            default="strict",
            choices=("strict", "unordered", "subset", "superset"),
            description="how the calls must match the reference",
        ),
        Param(
            "compare_arguments",
            bool,
            default=True,
            description="a call matches with the same arguments (else by tool name)",
        ),
        threshold_param(0.5, "trajectory_match"),
    )

    def score(self, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context) -> pl.DataFrame:
        """Rows whose case has no reference are not scored."""
        mode, arguments = str(params["mode"]), bool(params["compare_arguments"])
        return _against_reference(
            rows, self.id, lambda m, r: trajectory_match(m, r, mode, arguments)
        )


@register
class AgentSteps(Evaluator):
    """What a run took: steps, tool calls, errors, repeats, time and cost (column passes)."""

    id = "agent_steps"
    title = "Agent steps"
    domain = "agents"
    description = (
        "Per run: steps (messages and tool calls), tool calls, calls beyond the reference's, "
        "the share of calls whose tool failed, calls repeating an earlier call with the same "
        "arguments (loops), latency and cost summed over the steps."
    )
    requires = ("actual",)
    trajectory = True
    metrics = (
        MetricSpec(
            "tool_error_rate",
            "Tool error rate",
            "Share of tool calls that failed.",
            higher_is_better=False,
            threshold=0.2,
            primary=True,
        ),
        MetricSpec(
            "repeated_calls",
            "Repeated calls",
            "Calls repeating an earlier call (same tool, same arguments).",
            max=float("inf"),
            higher_is_better=False,
            threshold=1.0,
        ),
        MetricSpec(
            "extra_tool_calls",
            "Extra tool calls",
            "Tool calls made minus the reference's (negative: fewer).",
            min=-float("inf"),
            max=float("inf"),
            higher_is_better=False,
            threshold=1.0,
        ),
        MetricSpec(
            "tool_calls",
            "Tool calls",
            "Tool calls made.",
            max=float("inf"),
            higher_is_better=False,
            threshold=20.0,
        ),
        MetricSpec(
            "steps",
            "Steps",
            "Messages and tool calls of the run.",
            max=float("inf"),
            higher_is_better=False,
            threshold=50.0,
        ),
        MetricSpec(
            "run_latency_s",
            "Run latency (s)",
            "Seconds summed over the steps.",
            max=float("inf"),
            higher_is_better=False,
            threshold=60.0,
        ),
        MetricSpec(
            "run_cost",
            "Run cost",
            "Cost summed over the steps.",
            max=float("inf"),
            higher_is_better=False,
            threshold=1.0,
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (threshold_param(0.2, "tool_error_rate"),)

    def score(self, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context) -> pl.DataFrame:
        """Column passes over the exploded steps; a row without steps is not scored."""
        n = rows.height
        flat = (
            rows.select(pl.int_range(pl.len()).alias("_row"), "steps", "reference")
            .explode("steps")
            .unnest("steps")
        )
        is_call = pl.col("tool_name").is_not_null() & (pl.col("role") != "tool")
        per_row = flat.group_by("_row").agg(
            steps=pl.col("role").is_not_null().sum(),  # rows of the steps table
            calls=is_call.sum(),
            failed=(is_call & pl.col("error").is_not_null()).sum(),
            latency=pl.col("latency_s").sum(),
            cost=pl.col("cost").sum(),
            has_latency=pl.col("latency_s").is_not_null().any(),
            has_cost=pl.col("cost").is_not_null().any(),
        )
        repeats = (
            flat.filter(is_call)
            .group_by("_row", "tool_name", "tool_args")
            .agg(times=pl.len())
            .group_by("_row")
            .agg(repeated=(pl.col("times") - 1).sum())
        )
        references = rows.select(
            pl.int_range(pl.len()).alias("_row"),
            ref=pl.when(pl.col("reference").is_null())
            .then(None)
            .otherwise(pl.col("reference").list.len()),
        )
        table = (
            pl.DataFrame({"_row": np.arange(n)})
            .join(per_row, on="_row", how="left")
            .join(repeats, on="_row", how="left")
            .join(references, on="_row", how="left")
            .sort("_row")
        )
        calls = table["calls"].fill_null(0).cast(pl.Float64).to_numpy()
        steps = table["steps"].fill_null(0).cast(pl.Float64).to_numpy()
        no_steps = (
            rows["steps"].is_null().to_numpy() if "steps" in rows.columns else np.ones(n, bool)
        )
        values = {
            "tool_error_rate": np.where(
                calls > 0, table["failed"].fill_null(0).to_numpy() / np.maximum(calls, 1), np.nan
            ),
            "repeated_calls": table["repeated"].fill_null(0).cast(pl.Float64).to_numpy(),
            "extra_tool_calls": calls - table["ref"].cast(pl.Float64).fill_null(np.nan).to_numpy(),
            "tool_calls": calls,
            "steps": steps,
            "run_latency_s": np.where(
                table["has_latency"].fill_null(False).to_numpy(),
                table["latency"].fill_null(0).to_numpy(),
                np.nan,
            ),
            "run_cost": np.where(
                table["has_cost"].fill_null(False).to_numpy(),
                table["cost"].fill_null(0).to_numpy(),
                np.nan,
            ),
        }
        values = {key: np.where(no_steps, np.nan, value) for key, value in values.items()}
        why = reasons(n, (no_steps, "no steps recorded for this answer (not an agent run)"))
        return result_frame(rows, values, why)
