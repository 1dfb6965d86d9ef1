"""Any ragas metric object as an evalnb evaluator: ``evaluate(lab, [RougeScore(), "bleu"])``.

:func:`ragas_evaluator` wraps one metric — a collections metric (``ascore(**inputs)``
returning a ``MetricResult``) or a legacy single-turn one (``single_turn_ascore(sample)``)
— in an evaluator class made for it:

* inputs are taken from the row as ragas names them (``user_input`` ← prompt, ``response`` ←
  actual, ``reference`` ← the first expected answer, ``retrieved_contexts`` ← context,
  ``reference_contexts`` ← corpus, ``multi_responses`` / ``rubrics`` from ``extra``), by the
  parameters of the metric's ``ascore`` or its ``required_columns``;
* rows run concurrently up to ``max_concurrency``; a row whose metric raises or returns no
  number is unscored with the reason, and a ``MetricResult``'s ``reason`` is kept as the
  explanation;
* the metric's identity — its class, the ragas version, its public settings and the models of
  its LLM and embeddings — is its scoring parameter, so scores are incremental and go stale
  like our own evaluators'. Its id is ``ragas.<metric name>``.

The LLM is whatever the metric holds: the user's ragas LLM, or an
:class:`evalnb.LLMClient` adapted with :func:`evalnb.llm.ragas_llm.ragas_llm`, whose calls
are cached and resumable. Agent (multi-turn) metrics are not taken: evalnb's own
``tool_call_accuracy`` and ``tool_call_f1`` compute ragas' numbers over the steps table.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
import numbers
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from evalnb.evaluation.base import Evaluator, MetricSpec, Param, result_frame
from evalnb.llm.pacing import run_blocking

if TYPE_CHECKING:
    from collections.abc import Mapping

    import polars as pl

    from evalnb.evaluation.base import Context

__all__ = ["is_ragas_metric", "ragas_evaluator"]

# ragas input name -> how a row gives it
_INPUTS = (
    "user_input",
    "response",
    "reference",
    "retrieved_contexts",
    "reference_contexts",
    "multi_responses",
    "rubrics",
)
_REQUIRES = {
    "user_input": "prompt",
    "response": "actual",
    "reference": "expected",
    "retrieved_contexts": "context",
}


def is_ragas_metric(obj: object) -> bool:
    """Whether ``obj`` looks like a ragas metric (a name and an async scoring method)."""
    return isinstance(getattr(obj, "name", None), str) and (
        callable(getattr(obj, "ascore", None)) or callable(getattr(obj, "single_turn_ascore", None))
    )


def _inputs_of(metric: Any) -> tuple[list[str], bool]:  # noqa: ANN401 - any ragas metric
    """Return the inputs the metric reads, and whether it is a legacy (sample) metric."""
    legacy = callable(getattr(metric, "single_turn_ascore", None)) and not _is_collections(metric)
    if legacy:
        columns = getattr(metric, "required_columns", {}) or {}
        wanted: set[str] = set()
        for group in columns.values():
            wanted.update(str(n).removesuffix(":optional") for n in group)
        return [n for n in _INPUTS if n in wanted], True
    signature = inspect.signature(metric.ascore)
    names = [p for p in signature.parameters if p != "self"]
    unknown = [n for n in names if n not in _INPUTS and n not in ("kwargs", "args")]
    if unknown:
        msg = (
            f"ragas metric {metric.name!r} takes {unknown}, which evalnb has no column for; "
            f"it maps {list(_INPUTS)}. Agent metrics: use evalnb's tool_call_accuracy or "
            "tool_call_f1 (ragas' numbers over the steps table)"
        )
        raise TypeError(msg)
    return [n for n in names if n in _INPUTS], False


def _is_collections(metric: object) -> bool:
    return any(c.__module__.startswith("ragas.metrics.collections") for c in type(metric).__mro__)


def _model_of(component: object) -> str | None:
    if component is None:
        return None
    for attr in ("model", "model_name"):
        value = getattr(component, attr, None)
        if isinstance(value, str):
            return value
    return type(component).__name__


def _identity(metric: Any) -> str:  # noqa: ANN401 - any ragas metric
    """Return the metric's scoring identity: class, ragas version, settings, models."""
    settings = {}
    for key, value in sorted(vars(metric).items()):
        if key.startswith("_") or key in ("llm", "embeddings", "name"):
            continue
        settings[key] = _plain(value)
    return json.dumps(
        {
            "class": f"{type(metric).__module__}.{type(metric).__qualname__}",
            "ragas": _ragas_version(),
            "settings": settings,
            "llm": _model_of(getattr(metric, "llm", None)),
            "embeddings": _model_of(getattr(metric, "embeddings", None)),
        },
        sort_keys=True,
        default=repr,
    )


def _ragas_version() -> str:
    """Return the installed ragas' version (a metric of ragas' shape may come without it)."""
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415

    try:
        return version("ragas")
    except PackageNotFoundError:
        return "not installed"


_PLAIN = str | int | float | bool | None


def _plain(value: object, depth: int = 0) -> object:
    """Return a setting as JSON: plain values, containers of them, other objects' types.

    Never a ``repr`` with a memory address, which would make every run's identity new.
    """
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if depth < 3 and isinstance(value, list | tuple):
        return [_plain(v, depth + 1) for v in value]
    if depth < 3 and isinstance(value, dict):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    return type(value).__name__


def ragas_evaluator(metric: Any) -> type[Evaluator]:  # noqa: ANN401 - any ragas metric
    """Return an evaluator class that runs ``metric`` over a lab's rows (see the module)."""
    if not is_ragas_metric(metric):
        msg = f"not a ragas metric: {type(metric).__name__} (expected ascore or single_turn_ascore)"
        raise TypeError(msg)
    inputs, legacy = _inputs_of(metric)
    identity = _identity(metric)
    name = str(metric.name)
    low, high = getattr(metric, "allowed_values", (0.0, 1.0)) if not legacy else (0.0, 1.0)
    low, high = (float(low), float(high)) if isinstance(low, int | float) else (0.0, 1.0)

    class RagasMetric(Evaluator):
        __doc__ = f"ragas' {type(metric).__name__} ({name}), run by evalnb."
        id = f"ragas.{name}"
        title = f"ragas {name}"
        domain = "generation"
        description = f"ragas' own {type(metric).__name__}, run over the lab's rows by evalnb."
        requires = tuple(dict.fromkeys(_REQUIRES[n] for n in inputs if n in _REQUIRES)) or (
            "actual",
        )
        local_only = True
        metrics = (
            MetricSpec(
                name,
                f"ragas {name}",
                f"ragas' {type(metric).__name__}.",
                min=low,
                max=high,
                threshold=0.5,
                primary=True,
            ),
        )
        params: ClassVar[tuple[Param, ...]] = (
            Param(
                "ragas_metric",
                str,
                default=identity,
                description="the ragas metric's identity: class, ragas version, settings "
                "and models (set from the object)",
            ),
            Param(
                "max_concurrency",
                int,
                default=16,
                low=1,
                high=1024,
                scoring=False,
                description="rows scored at once",
            ),
            Param(
                "timeout_s",
                float,
                default=600.0,
                low=0.001,
                scoring=False,
                description="seconds one row's score may take; past them the row has none",
            ),
        )

        def score(
            self, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context
        ) -> pl.DataFrame:
            """Score every row with the ragas metric, concurrently."""
            records = rows.to_dicts()
            gate = int(params["max_concurrency"])  # type: ignore[call-overload]
            got = run_blocking(
                _score_all(
                    metric,
                    records,
                    inputs,
                    legacy,
                    gate,
                    bounds=(low, high),
                    timeout_s=float(params["timeout_s"]),  # type: ignore[arg-type]
                )
            )
            values = np.array([v for v, _ in got], dtype=float)
            return result_frame(rows, {name: values}, [d for _, d in got])

    RagasMetric.__name__ = RagasMetric.__qualname__ = f"Ragas_{name}"
    return RagasMetric


def _row_inputs(row: Mapping[str, Any], inputs: list[str]) -> dict[str, Any] | str:
    """Return the metric's inputs from one row, or why the row cannot give them."""
    extra = {
        **json.loads(row.get("case_extra") or "{}"),
        **json.loads(row.get("output_extra") or "{}"),
    }
    values: dict[str, Any] = {
        "user_input": row.get("prompt"),
        "response": row.get("actual"),
        "reference": (row.get("expected") or [None])[0],
        "retrieved_contexts": list(row.get("context") or []),
        "reference_contexts": list(row.get("corpus") or []),
        "multi_responses": extra.get("multi_responses"),
        "rubrics": extra.get("rubrics"),
    }
    missing = [n for n in inputs if values.get(n) is None]
    if missing:
        return f"the row has no {', '.join(missing)} (ragas needs it)"
    return {n: values[n] for n in inputs}


async def _score_all(
    metric: Any,  # noqa: ANN401
    records: list[dict[str, Any]],
    inputs: list[str],
    legacy: bool,
    concurrency: int,
    *,
    bounds: tuple[float, float] = (0.0, 1.0),
    timeout_s: float = 600.0,
) -> list[tuple[float, str | None]]:
    low, high = bounds
    gate = asyncio.Semaphore(concurrency)
    sample_cls = None
    if legacy:
        from ragas import SingleTurnSample  # noqa: PLC0415 - present: the metric is ragas'

        sample_cls = SingleTurnSample

    async def one(row: dict[str, Any]) -> tuple[float, str | None]:
        if row.get("error") is not None:
            return math.nan, json.dumps(
                {"reason": f"the model host failed to answer: {row['error']}"}
            )
        kwargs = _row_inputs(row, inputs)
        if isinstance(kwargs, str):
            return math.nan, json.dumps({"reason": kwargs})
        async with gate:
            try:
                if sample_cls is not None:
                    call = metric.single_turn_ascore(sample_cls(**kwargs))
                else:
                    call = metric.ascore(**kwargs)
                result: Any = await asyncio.wait_for(call, timeout_s)
                # Read here: a property of the result may raise as well as the metric.
                value = getattr(result, "value", result)
                reason = getattr(result, "reason", None)
                reason = str(reason)[:4000] if reason else None
            except TimeoutError:
                why = f"ragas' metric did not return within timeout_s={timeout_s:g} s"
                return math.nan, json.dumps({"reason": why})
            except Exception as exc:
                return math.nan, json.dumps({"reason": f"ragas raised {_said(exc)}"})
        number = _as_number(value)
        if number is None:
            return math.nan, json.dumps({"reason": f"ragas gave no number: {_shown(value)}"})
        slack = 1e-9 * max(1.0, high - low)  # rounding: BLEU gives 1.0000000000000002
        if not low - slack <= number <= high + slack:
            why = f"ragas gave {number:g}, outside the metric's range [{low:g}, {high:g}]"
            return math.nan, json.dumps({"reason": why})
        detail = {"explanation": reason} if reason else None
        return number, json.dumps(detail) if detail else None

    return list(await asyncio.gather(*(one(r) for r in records)))


def _as_number(value: object) -> float | None:
    """Return a metric's value as a finite float (NumPy's too, as ragas casts), or None."""
    if isinstance(value, bool):
        return float(value)
    if not isinstance(value, numbers.Real):
        return None
    try:
        number = float(value)
    except (OverflowError, ValueError, TypeError):  # 10**400, or a Real that will not convert
        return None
    return number if math.isfinite(number) else None


def _shown(value: object) -> str:
    try:
        return repr(value)[:300]
    except Exception:
        return f"a {type(value).__name__}"


def _said(exc: BaseException) -> str:
    try:
        return f"{type(exc).__name__}: {str(exc)[:500]}"
    except Exception:
        return type(exc).__name__
