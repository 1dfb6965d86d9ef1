"""Text matching (H2O ``RagStrStrEvaluator``, h2o_semantics.md §1).

An answer must satisfy the case's condition, else its constraints, else contain the expected
answer.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, ClassVar

from evalnb._condition import ConditionError, constraints_to_condition, parse_condition
from evalnb._evaluator import (
    Context,
    Evaluator,
    MetricSpec,
    Param,
    register,
    result_frame,
    threshold_param,
)
from evalnb._match import MatchResult, match_conditions

if TYPE_CHECKING:
    from collections.abc import Mapping

    import polars as pl

__all__ = ["BOOL_METRICS", "TextMatching", "bool_metrics"]


def bool_metrics(subject: str) -> tuple[MetricSpec, ...]:
    """H2O's five pass/fail metrics (evaluators.md §1.5) worded for ``subject``."""
    return (
        MetricSpec("model_passes", "Model passes", f"Share of outputs that satisfy {subject}.",
                   primary=True),
        MetricSpec("model_failures", "Model failures",
                   f"Share of outputs that fail {subject}.", higher_is_better=False),
        MetricSpec("model_retrieval_failures", "Model retrieval failures",
                   f"Share of retrieved contexts that fail {subject}.", higher_is_better=False),
        MetricSpec("model_generation_failures", "Model generation failures",
                   f"Share of generated answers that fail {subject}.", higher_is_better=False),
        MetricSpec("model_parse_failures", "Model parse failures",
                   "Share of outputs the evaluator could not parse or score.",
                   higher_is_better=False),
    )  # fmt: skip


BOOL_METRICS = bool_metrics("the check")


def _condition_of(
    condition: str | None, constraints: str | None, expected: list[str]
) -> tuple[str, str | None]:
    """(condition, error) by H2O's precedence: condition, constraints, expected answer."""
    try:
        if condition:
            parse_condition(condition)
            return condition, None
        if constraints is not None:
            parsed = json.loads(constraints)
            if parsed:
                built = constraints_to_condition(parsed)
                parse_condition(built)
                return built, None
        if expected:
            # Several references: any of them may occur (best-of, in favour of the model).
            refs: list[object] = [expected[0]] if len(expected) == 1 else [list(expected)]
            built = constraints_to_condition(refs)
            parse_condition(built)
            return built, None
    except (ConditionError, json.JSONDecodeError) as exc:
        return "", str(exc)
    return "", None


@register
class TextMatching(Evaluator):
    """Check that the answer (and optionally the retrieved context) satisfies the condition."""

    id = "text_matching"
    title = "Text matching"
    domain = "generation"
    description = (
        "Checks the answer against the case's condition: quoted substrings and regexp(...) "
        "joined by AND, OR, NOT (or the constraints, or the expected answer verbatim)."
    )
    requires = ("actual",)
    metrics = bool_metrics("the condition")
    params: ClassVar[tuple[Param, ...]] = (
        Param("evaluate_retrieved_context", bool, default=False,
              description="also check the retrieved context (joined with spaces)"),
        Param("regex_timeout_s", float, default=1.0, low=0.001, high=60.0,
              description="time limit of one regexp search; past it the row is not scored"),
        threshold_param(0.5, "model_passes"),
    )  # fmt: skip

    def score(
        self,
        rows: pl.DataFrame,
        params: Mapping[str, object],
        ctx: Context,  # noqa: ARG002 - text matching needs no shared service
    ) -> pl.DataFrame:
        """Score every row; see the module docstring."""
        timeout = float(params["regex_timeout_s"])  # type: ignore[arg-type]
        keys = rows.select("condition", "constraints", "expected")
        conds: list[str] = []
        errors: list[str | None] = []
        memo: dict[tuple[object, ...], tuple[str, str | None]] = {}
        for cond, cons, exp in keys.iter_rows():
            case_key = (cond, cons, tuple(exp))
            if case_key not in memo:
                memo[case_key] = _condition_of(cond, cons, list(exp))
            conds.append(memo[case_key][0])
            errors.append(memo[case_key][1])
        actual = rows["actual"].fill_null("").to_list()
        host_error = rows["error"].to_list()
        answer = match_conditions(actual, conds, timeout_s=timeout)
        use_ctx = bool(params["evaluate_retrieved_context"])
        contexts = rows["context"].to_list()
        has_ctx = [bool(c) for c in contexts]
        ctx_check = (
            match_conditions([" ".join(c or []) for c in contexts], conds, timeout_s=timeout)
            if use_ctx
            else None
        )
        values: dict[str, list[float | None]] = {m.key: [] for m in self.metrics}
        details: list[str | None] = []
        for i in range(rows.height):
            row_vals, detail = _row(
                conds[i], errors[i], host_error[i], answer, ctx_check, has_ctx[i], i
            )
            for metric, v in zip(values, row_vals, strict=True):
                values[metric].append(v)
            details.append(detail)
        # Failures explain themselves once (on model_passes); nulls on every metric.
        return result_frame(rows, values, details, detail_on="model_passes")


def _row(
    cond: str,
    error: str | None,
    host_error: str | None,
    answer: MatchResult,
    ctx_check: MatchResult | None,
    has_ctx: bool,
    i: int,
) -> tuple[list[float | None], str | None]:
    """Return the five metric values of row ``i`` and its detail JSON."""
    if error is not None:
        return [None] * 5, json.dumps({"reason": f"invalid condition: {error}"})
    if host_error is not None:
        msg = f"The model host failed to answer: {host_error}"
        host_failed: list[float | None] = [0.0, 1.0, 0.0, 1.0, 0.0]
        return host_failed, json.dumps({"condition": cond, "message": msg})
    ok = answer.ok[i]
    checked = ctx_check if ctx_check is not None and has_ctx else None
    ctx_ok = True if checked is None else checked.ok[i]
    if ok is None or ctx_ok is None:
        reason = answer.error[i] if ok is None else checked.error[i] if checked else None
        return [None] * 5, json.dumps({"condition": cond, "reason": reason})
    passes = ok and ctx_ok
    msgs = []
    if checked is not None and not ctx_ok:
        msgs.append(
            _message("Retrieved context", "retrieved context", cond, checked.failed_part[i])
        )
    if not ok:
        where = "actual answer" if has_ctx else None
        msgs.append(_message("Generated actual answer", where, cond, answer.failed_part[i]))
    values: list[float | None] = [
        float(passes),
        float(not passes),
        float(not ctx_ok),
        float(not ok),
        0.0,
    ]
    if passes:
        return values, None
    return values, json.dumps({"condition": cond, "message": " ".join(msgs)})


def _message(subject: str, part_of: str | None, cond: str, part: str | None) -> str:
    """H2O's failure sentence (h2o_semantics.md §1.3)."""
    msg = f"{subject} did not satisfy the condition: {cond}."
    if part is not None and part != cond:
        scope = f"the {part_of} condition" if part_of else "the condition"
        msg += f" The following part of {scope} did not match: {part}."
    return msg
