"""Rule evaluators.

JSON Schema validity, and classification by exact match.
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
    per_distinct,
    register,
    result_frame,
    threshold_param,
)
from evalnb.evaluation.families.shared import bool_metrics
from evalnb.text.patterns import compile_pattern

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

__all__ = ["Classification", "JsonSchema"]

_HOST = "The model host failed to answer"


class _PatternTimeout(Exception):
    """A schema ``pattern`` ran past its time limit."""


def _validator(schema: dict[str, Any], timeout_s: float) -> Any:  # noqa: ANN401 - jsonschema's classes are untyped
    """Build a validator whose regexes (``pattern``, ``patternProperties``) run under a time limit.

    jsonschema runs them with ``re``, which has no timeout; a user's pattern on a model's
    answer could otherwise backtrack for hours.
    """
    import jsonschema  # noqa: PLC0415
    from jsonschema import validators  # noqa: PLC0415

    def found(patrn: str, text: str) -> bool:
        try:
            return compile_pattern(patrn).search(text, timeout=timeout_s) is not None
        except TimeoutError:
            raise _PatternTimeout(patrn) from None

    def pattern(_: object, patrn: str, instance: object, __: object) -> Iterator[Any]:
        if isinstance(instance, str) and not found(patrn, instance):
            yield jsonschema.ValidationError(f"{instance!r} does not match {patrn!r}")

    def pattern_properties(
        validator: Any,  # noqa: ANN401 - jsonschema's validators are untyped
        patterns: dict[str, Any],
        instance: object,
        _: object,
    ) -> Iterator[Any]:
        if isinstance(instance, dict):
            for patrn, subschema in patterns.items():
                for key, value in instance.items():
                    if found(patrn, key):
                        yield from validator.descend(value, subschema, path=key, schema_path=patrn)

    def additional_properties(
        validator: Any,  # noqa: ANN401 - jsonschema's validators are untyped
        extra: object,
        instance: object,
        schema: dict[str, Any],
    ) -> Iterator[Any]:
        if not isinstance(instance, dict):
            return
        named, patterns = schema.get("properties", {}), schema.get("patternProperties", {})
        extras = [k for k in instance if k not in named and not any(found(p, k) for p in patterns)]
        if isinstance(extra, dict):
            for key in extras:
                yield from validator.descend(instance[key], extra, path=key)
        elif extra is False and extras:
            # jsonschema's own wording, so messages match H2O's (which runs jsonschema)
            joined = ", ".join(map(repr, sorted(extras)))
            if patterns:
                verb = "does" if len(extras) == 1 else "do"
                listed = ", ".join(map(repr, sorted(patterns)))
                text = f"{joined} {verb} not match any of the regexes: {listed}"
            else:
                verb = "was" if len(extras) == 1 else "were"
                text = f"Additional properties are not allowed ({joined} {verb} unexpected)"
            yield jsonschema.ValidationError(text)

    base = validators.validator_for(schema)
    base.check_schema(schema)
    for patrn in _schema_patterns(schema):
        compile_pattern(patrn)  # too large or invalid: a clear error before any scoring
    extended = validators.extend(  # type: ignore[no-untyped-call]
        base,
        {
            "pattern": pattern,
            "patternProperties": pattern_properties,
            "additionalProperties": additional_properties,
        },
    )
    return extended(schema)


def _schema_patterns(schema: object) -> Iterator[str]:
    """Every regex of a schema: ``pattern`` values and ``patternProperties`` keys, at any depth."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("pattern"), str):
                yield node["pattern"]
            if isinstance(node.get("patternProperties"), dict):
                yield from node["patternProperties"]
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


@register
class JsonSchema(Evaluator):
    """Check that the answer is JSON, valid against the given schema."""

    id = "json_schema_validity"
    title = "JSON Schema"
    domain = "generation"
    description = "The whole answer must parse as JSON and validate against the JSON Schema."
    requires = ("actual",)
    metrics = bool_metrics("the JSON Schema")
    params: ClassVar[tuple[Param, ...]] = (
        Param("json_schema", str, default="{}", description="the JSON Schema, as JSON text"),
        Param(
            "regex_timeout_s",
            float,
            default=1.0,
            low=0.001,
            high=60.0,
            description="time limit of one schema `pattern` match",
        ),
        threshold_param(0.5, "model_passes"),
    )

    @classmethod
    def resolve(cls, given: Mapping[str, object]) -> dict[str, object]:
        """Also check that the schema is JSON and a valid JSON Schema, before any scoring."""
        params = super().resolve(given)
        try:
            schema = json.loads(str(params["json_schema"]))
            _validator(schema, 1.0)
        except Exception as exc:
            msg = f"json_schema: expected a valid JSON Schema as JSON text, got {params['json_schema']!r}: {exc}"
            raise ValueError(msg) from None
        return params

    def score(
        self,
        rows: pl.DataFrame,
        params: Mapping[str, object],
        ctx: Context,  # noqa: ARG002 - needs no shared service
    ) -> pl.DataFrame:
        """Validate each distinct answer once."""
        timeout = float(params["regex_timeout_s"])  # type: ignore[arg-type]
        validator = _validator(json.loads(str(params["json_schema"])), timeout)
        error = rows["error"]
        answers = pl.select(pl.when(error.is_null()).then(rows["actual"].fill_null(""))).to_series()
        found = per_distinct(answers, lambda a: _check(a, validator), _CHECKED)
        answered = error.is_null()
        merged = found.with_columns(
            message=pl.when(answered).then("message").otherwise(pl.format(f"{_HOST}: {{}}", error)),
            ok=pl.when(answered).then("ok").otherwise(0.0),
        )
        messages = merged["message"].to_list()
        p = merged["ok"].to_numpy().astype(np.float64)  # null (a timed-out check) → NaN
        values = {
            "model_passes": p,
            "model_failures": 1 - p,
            "model_retrieval_failures": p * 0,
            "model_generation_failures": 1 - p,
            "model_parse_failures": p * 0,
        }
        return result_frame(rows, values, _json_messages(messages), detail_on="model_passes")


_CHECKED = {"ok": pl.Float64(), "message": pl.String()}


def _json_messages(messages: list[str | None]) -> list[str | None]:
    return [None if m is None else json.dumps({"message": m}) for m in messages]


def _check(answer: str, validator: Any) -> tuple[float | None, str | None]:  # noqa: ANN401
    import jsonschema  # noqa: PLC0415

    if not answer:
        return 0.0, "Actual answer is empty"
    try:
        instance = json.loads(answer)
    except (json.JSONDecodeError, RecursionError) as exc:
        return 0.0, f"Actual answer cannot be parsed as JSON: {exc}"
    try:
        error = jsonschema.exceptions.best_match(validator.iter_errors(instance))
    except _PatternTimeout as exc:
        return None, f"a schema pattern ran past its time limit: {exc}"
    if error is not None:
        return 0.0, f"Actual answer is not valid against given JSON Schema: {error.message}"
    return 1.0, None


@register
class Classification(Evaluator):
    """Exact-match classification: the answer must equal an expected label."""

    id = "classification"
    title = "Classification"
    domain = "classification"
    description = (
        "Per row 1.0 when the answer equals an expected answer exactly (no trimming or case "
        "folding), else 0.0; model-level macro precision/recall/F1 come from the leaderboard."
    )
    requires = ("actual", "expected")
    metrics = (
        MetricSpec(
            "accuracy", "Accuracy", "Exact match of answer and label.", threshold=0.75, primary=True
        ),
        MetricSpec(
            "precision",
            "Precision",
            "Macro precision of the model (leaderboard); per row: exact match.",
            threshold=0.75,
        ),
        MetricSpec(
            "recall",
            "Recall",
            "Macro recall of the model (leaderboard); per row: exact match.",
            threshold=0.75,
        ),
        MetricSpec(
            "f1", "F1", "Macro F1 of the model (leaderboard); per row: exact match.", threshold=0.75
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (threshold_param(0.75, "accuracy"),)

    def score(
        self,
        rows: pl.DataFrame,
        params: Mapping[str, object],  # noqa: ARG002 - no scoring parameter
        ctx: Context,  # noqa: ARG002 - needs no shared service
    ) -> pl.DataFrame:
        """Vectorized: the answer is in the row's list of labels."""
        match = rows.select(
            hit=pl.col("expected").list.contains(pl.col("actual").fill_null("")),
            none=pl.col("expected").list.len().fill_null(0) == 0,
        )
        hit = match["hit"].fill_null(value=False).cast(pl.Float64).to_numpy().copy()
        errored = rows["error"].is_not_null().to_numpy()
        hit[errored] = 0.0
        hit[match["none"].to_numpy()] = np.nan
        messages = [f"{_HOST}: worst value" if e else None for e in errored]
        for i in np.flatnonzero(match["none"].to_numpy()):
            messages[i] = "no expected label to compare with"
        values = {m.key: hit for m in self.metrics}
        return result_frame(rows, values, _json_messages(messages), detail_on="accuracy")
