"""Text matching (H2O ``RagStrStrEvaluator``).

An answer must satisfy the case's condition, else its constraints, else contain the expected
answer.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import polars as pl

from evalnb.evaluation.base import (
    BLOCK_ROWS,
    Context,
    Evaluator,
    Param,
    register,
    result_frame,
    threshold_param,
)
from evalnb.evaluation.families.shared import bool_metrics
from evalnb.evaluation.families.text.condition import (
    ConditionError,
    constraints_to_condition,
    parse_condition,
)
from evalnb.evaluation.families.text.condition_match import MatchResult, match_coded

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["BOOL_METRICS", "REGEX_RUN_BUDGET", "TextMatching"]


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


@lru_cache(maxsize=65536)
def _resolved(
    condition: str | None, constraints: str | None, expected: tuple[str, ...]
) -> tuple[str, str | None]:
    # Labs repeat case definitions across models and scoring blocks: resolve each once.
    return _condition_of(condition, constraints, list(expected))


REGEX_RUN_BUDGET = Param(
    "regex_run_budget_s",
    float,
    default=120.0,
    low=0.001,
    high=86_400.0,
    description="time limit of all regexp searches of one run; rows past it are not scored",
)


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
    block_rows = BLOCK_ROWS
    metrics = bool_metrics("the condition")
    params: ClassVar[tuple[Param, ...]] = (
        Param(
            "evaluate_retrieved_context",
            bool,
            default=False,
            description="also check the retrieved context (joined with spaces)",
        ),
        Param(
            "regex_timeout_s",
            float,
            default=1.0,
            low=0.001,
            high=60.0,
            description="time limit of one regexp search; past it the row is not scored",
        ),
        REGEX_RUN_BUDGET,
        threshold_param(0.5, "model_passes"),
    )

    def score(
        self,
        rows: pl.DataFrame,
        params: Mapping[str, object],
        ctx: Context,
    ) -> pl.DataFrame:
        """Score every row; see the module docstring."""
        budget = ctx.search_budget(
            float(params["regex_timeout_s"]),  # type: ignore[arg-type]
            float(params["regex_run_budget_s"]),  # type: ignore[arg-type]
        )
        conds, errors, distinct, code = _conditions(rows)
        answer = match_coded(rows["actual"], distinct, code, budget=budget)
        has_ctx = (rows["context"].list.len().fill_null(0) > 0).to_numpy()
        a_ok, a_null = _tri(answer.ok)
        c_ok, c_null = np.ones(rows.height, dtype=bool), np.zeros(rows.height, dtype=bool)
        ctx_check = None
        if params["evaluate_retrieved_context"]:
            joined = rows["context"].fill_null([]).list.join(" ")
            ctx_check = match_coded(joined, distinct, code, budget=budget)
            c_ok, c_null = _tri(ctx_check.ok)
            c_ok, c_null = c_ok | ~has_ctx, c_null & has_ctx  # no context: nothing to check
        invalid = np.array([e is not None for e in errors], dtype=bool)
        host = rows["error"].is_not_null().to_numpy() & ~invalid
        unscored = invalid | (~host & (a_null | c_null))
        passes = a_ok & c_ok
        table = np.stack([passes, ~passes, ~c_ok, ~a_ok, np.zeros_like(passes)]).astype(float)
        table[:, host] = np.array([[0.0], [1.0], [0.0], [1.0], [0.0]])  # H2O: a generation failure
        table[:, unscored] = np.nan
        details: list[str | None] = [None] * rows.height
        host_error = rows["error"].to_list()
        # Only rows that need explaining are visited; a failure's sentence depends on the
        # condition and the parts to blame, which repeat: each is written once.
        said: dict[tuple[object, ...], str] = {}
        for i in np.flatnonzero(invalid | host | unscored | ~passes):
            if invalid[i]:
                details[i] = json.dumps({"reason": f"invalid condition: {errors[i]}"})
            elif host[i]:
                msg = f"The model host failed to answer: {host_error[i]}"
                details[i] = json.dumps({"condition": conds[i], "message": msg})
            elif unscored[i]:
                why = answer.error[i] if a_null[i] else ctx_check.error[i] if ctx_check else None
                details[i] = json.dumps({"condition": conds[i], "reason": why})
            else:
                key = (
                    conds[i],
                    bool(has_ctx[i]),
                    answer.ok[i],
                    answer.failed_part[i],
                    ctx_check.ok[i] if ctx_check else None,
                    ctx_check.failed_part[i] if ctx_check else None,
                )
                if key not in said:
                    said[key] = _failure(
                        conds[i], answer, ctx_check, int(i), has_ctx=bool(has_ctx[i])
                    )
                details[i] = said[key]
        values = {spec.key: table[k] for k, spec in enumerate(self.metrics)}
        # Failures explain themselves once (on model_passes); nulls on every metric.
        return result_frame(rows, values, details, detail_on="model_passes")


def _conditions(
    rows: pl.DataFrame,
) -> tuple[list[str], list[str | None], list[str], np.ndarray]:
    """Each row's condition (and parse error), resolved once per distinct case definition.

    Also the resolved conditions by definition and each row's definition, for
    :func:`match_coded` (a definition that does not parse resolves to the empty condition;
    its rows are unscored and say why).
    """
    # A row with a condition ignores its constraints and expected answers (H2O's precedence):
    # they leave the key, so traffic whose answers differ under one condition parses it once.
    given = pl.col("condition").fill_null("") != ""
    groups = (
        rows.select(
            "condition",
            pl.when(given).then(None).otherwise(pl.col("constraints")).alias("constraints"),
            pl.when(given).then(None).otherwise(pl.col("expected")).alias("expected"),
        )
        .with_row_index("_i")
        .group_by("condition", "constraints", "expected", maintain_order=True)
        .agg("_i")
    )
    resolved = [
        _resolved(cond, cons, tuple(exp or ()))
        for cond, cons, exp in groups.select("condition", "constraints", "expected").iter_rows()
    ]
    # Each group's result to its rows, in one scatter (a Python loop per row took a second
    # at a million rows).
    members = groups["_i"].explode().to_numpy()
    sizes = groups["_i"].list.len().to_numpy()
    conds = np.empty(rows.height, dtype=object)
    errors = np.empty(rows.height, dtype=object)
    conds[members] = np.repeat(np.array([r[0] for r in resolved] or [""], dtype=object), sizes)
    errors[members] = np.repeat(np.array([r[1] for r in resolved] or [None], dtype=object), sizes)
    code = np.empty(rows.height, dtype=np.int64)
    code[members] = np.repeat(np.arange(len(resolved)), sizes)
    return conds.tolist(), errors.tolist(), [r[0] for r in resolved], code


def _tri(values: list[bool | None]) -> tuple[np.ndarray, np.ndarray]:
    """Return the (true, unknown) masks of a list of True / False / None."""
    return (
        np.array([v is True for v in values], dtype=bool),
        np.array([v is None for v in values], dtype=bool),
    )


def _failure(
    cond: str, answer: MatchResult, ctx_check: MatchResult | None, i: int, *, has_ctx: bool
) -> str:
    """Return the detail JSON of a failed row: H2O's sentences, context first."""
    msgs = []
    if ctx_check is not None and has_ctx and ctx_check.ok[i] is False:
        msgs.append(
            _message("Retrieved context", "retrieved context", cond, ctx_check.failed_part[i])
        )
    if answer.ok[i] is False:
        where = "actual answer" if has_ctx else None
        msgs.append(_message("Generated actual answer", where, cond, answer.failed_part[i]))
    return json.dumps({"condition": cond, "message": " ".join(msgs)})


def _message(subject: str, part_of: str | None, cond: str, part: str | None) -> str:
    """H2O's failure sentence."""
    msg = f"{subject} did not satisfy the condition: {cond}."
    if part is not None and part != cond:
        scope = f"the {part_of} condition" if part_of else "the condition"
        msg += f" The following part of {scope} did not match: {part}."
    return msg
