"""The evaluator contract: specs, parameters, context, the base class.

Each family module subclasses :class:`Evaluator` and adds it with :func:`register`;
:mod:`evalnb.evaluation.catalog` imports every family and answers lookups, so no module
here imports a family.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

import numpy as np
import polars as pl

from evalnb.lab.schema import SCHEMAS
from evalnb.text.patterns import SearchBudget

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from evalnb.llm.budget import Budget
    from evalnb.llm.client import LLMClient
    from evalnb.models.encoder import TextEncoder

__all__ = [
    "BLOCK_ROWS",
    "DOMAINS",
    "VERSION_KEY",
    "Context",
    "Evaluator",
    "JudgeRouter",
    "MetricSpec",
    "Param",
    "key_params",
    "key_version",
    "per_distinct",
    "reasons",
    "register",
    "registered",
    "result_frame",
    "score_rows",
    "threshold_param",
]

DOMAINS = (
    "generation",
    "retrieval",
    "privacy",
    "fairness",
    "summarization",
    "classification",
    "agents",
)
FIELDS = ("prompt", "expected", "actual", "context", "condition")
# What `score` returns: one row per (output row, metric).
RESULT_SCHEMA = pl.Schema(
    {
        "case_id": pl.String(),
        "model": pl.String(),
        "sample": pl.Int64(),
        "metric": pl.String(),
        "value": pl.Float64(),
        "detail": pl.String(),
    }
)


def score_rows(result: pl.DataFrame, evaluator: str, key: str) -> pl.DataFrame:
    """Return an evaluator's result rows as rows of the lab's ``scores`` table.

    ``key`` is the evaluator's scoring key (its ``params`` column: incremental scoring
    skips rows scored under the same one).
    """
    n = result.height
    # Columns put together without a query: each Polars query costs ~0.1 ms, which counts
    # when a vectorised metric takes a few milliseconds.
    columns = {name: result.get_column(name) for name in RESULT_SCHEMA}
    columns["evaluator"] = _constant("evaluator", evaluator, n)
    columns["params"] = _constant("params", key, n)
    return pl.DataFrame([columns[name] for name in SCHEMAS["scores"]])


def _constant(name: str, value: str | None, n: int) -> pl.Series:
    """Return a string column of ``n`` times ``value`` (no query, no Python list)."""
    return pl.Series(name, [value], dtype=pl.String).new_from_index(0, n)


@dataclass(frozen=True)
class MetricSpec:
    """A metric an evaluator produces: H2O's key, range, direction and default threshold."""

    key: str
    title: str
    description: str
    min: float = 0.0
    max: float = 1.0
    higher_is_better: bool = True
    threshold: float = 0.5
    primary: bool = False
    kernel: str = ""
    """The computation this metric needs, when an evaluator bundles costly ones (BLEU's
    sacrebleu statistics, chrF's character n-grams): a metric not asked for leaves its
    kernel unrun (:meth:`Evaluator.kernels`). Empty: the evaluator's one computation."""


ASKED = "metrics"
# The evaluator's version in its scoring key: no parameter can be named so.
VERSION_KEY = "@version"
"""The parameter every evaluator takes: which of its metrics to compute (all when None)."""


@dataclass(frozen=True)
class Param:
    """A typed evaluator parameter with its default and validation."""

    name: str
    kind: type
    default: object
    description: str
    low: float | None = None
    high: float | None = None
    choices: tuple[object, ...] | None = None
    # False for parameters that change no score (a threshold): changing them must not
    # invalidate scores already computed.
    scoring: bool = True
    # Applied to the checked value (the default too), e.g. a model name → the model actually
    # used here, so stored parameters say what produced the scores.
    normalize: Callable[[object], object] | None = None
    # False for a parameter added after scores were kept: at its default it stays out of the
    # scoring key, so the scores made before it existed (the same computation) stay valid.
    keyed_at_default: bool = True

    def check(self, value: object, owner: str) -> object:
        """Return ``value`` converted to the parameter's type, or raise saying why not."""
        kind = self.kind
        if kind is object:  # any value: ``normalize`` checks it
            return value
        ok = isinstance(value, kind) and not (kind is not bool and isinstance(value, bool))
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value, ok = float(value), True
        if not ok:
            msg = (
                f"{owner}: parameter `{self.name}` must be {kind.__name__}, got {value!r} "
                f"({type(value).__name__}); {self.description}"
            )
            raise TypeError(msg)
        if self.choices is not None and value not in self.choices:
            msg = f"{owner}: `{self.name}` must be one of {list(self.choices)}, got {value!r}"
            raise ValueError(msg)
        if isinstance(value, int | float) and not _within(value, self.low, self.high):
            msg = f"{owner}: `{self.name}` must be within [{self.low}, {self.high}], got {value!r}"
            raise ValueError(msg)
        return value


def threshold_param(
    default: float, metric: str, *, low: float = 0.0, high: float | None = 1.0
) -> Param:
    """Build the ``metric_threshold`` parameter every evaluator has (it changes no score)."""
    return Param(
        "metric_threshold",
        float,
        default=default,
        low=low,
        high=high,
        scoring=False,
        description=f"pass threshold of {metric}",
    )


def _within(value: float, low: float | None, high: float | None) -> bool:
    return (low is None or value >= low) and (high is None or value <= high)


@dataclass
class Context:
    """Shared services handed to evaluators: progress, the text encoder, the LLM judge."""

    progress: object | None = None
    judge: LLMClient | None = None
    budgets: dict[tuple[float, float], SearchBudget] = field(default_factory=dict)

    def search_budget(self, per_search_s: float, per_run_s: float) -> SearchBudget:
        """Return the time budget of user patterns for this run (one per evaluator run).

        Blocks of one run share it, so ``per_run_s`` bounds the whole run, not each block.
        """
        key = (per_search_s, per_run_s)
        if key not in self.budgets:
            self.budgets[key] = SearchBudget(per_search_s=per_search_s, per_run_s=per_run_s)
        return self.budgets[key]

    def encoder(self, model: str, precision: str = "fp32") -> TextEncoder:
        """Return the process-wide encoder for ``model`` (loaded on first use)."""
        from evalnb.models.encoder import get_encoder  # noqa: PLC0415 - torch loads only when needed

        return get_encoder(model, precision=precision)


@runtime_checkable
class JudgeRouter(Protocol):
    """A judge that picks, row by row, which client judges (a cascade of judges).

    Passed as ``judge=`` to :func:`evalnb.evaluate` in place of one
    :class:`~evalnb.llm.client.LLMClient`. The scorer hands it each block of a judge
    evaluator's rows; it returns the evaluator's result rows (``RESULT_SCHEMA``), a row it
    will not judge left null with its reason, as every evaluator does. ``identity`` names it
    in the scoring key (``judge_model``), so another routing rescores.
    """

    @property
    def identity(self) -> str:
        """The router's name in scoring keys: its clients, and the settings of its routing."""
        ...

    @property
    def strongest(self) -> LLMClient:
        """The client for evaluators that only use a judge (their own, not routed, calls)."""
        ...

    def judge_rows(
        self, evaluator: Evaluator, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context
    ) -> pl.DataFrame:
        """Return ``evaluator``'s result rows for ``rows``, each judged by the client it picks."""
        ...

    def with_budget(self, budget: Budget) -> JudgeRouter:
        """Return the router with every client it calls under one ``budget``."""
        ...


# Rows per scoring call of the row-local evaluators (n-grams, regexes): large enough that
# per-call costs vanish, small enough that their working memory stays a few hundred MB.
BLOCK_ROWS = 50_000


class Evaluator(ABC):
    """Base class: declare the class variables and implement :meth:`score`.

    ``score`` receives the rows to score (``Lab.rows()`` columns) as one frame and returns
    one row per (row, metric) with the columns of ``RESULT_SCHEMA``; a row it cannot score
    gets a null value and the reason in ``detail``.
    """

    id: ClassVar[str]
    title: ClassVar[str]
    domain: ClassVar[str]
    description: ClassVar[str]
    requires: ClassVar[tuple[str, ...]]
    metrics: ClassVar[tuple[MetricSpec, ...]]
    params: ClassVar[tuple[Param, ...]] = ()
    # Raised when a change gives other scores for the same rows and parameters: a
    # calibration bundle records it, and a monitor refuses scores from another version.
    version: ClassVar[str] = "1"
    judge: ClassVar[bool] = False
    # Evaluators that use the LLM judge when one is given (step extraction by the judge):
    # the judge's model joins their parameters, so changing it rescores.
    uses_judge: ClassVar[bool] = False
    # Evaluators made in this process for an object (a ragas metric) cannot be rebuilt by
    # a Ray worker from their id: they always run here.
    local_only: ClassVar[bool] = False
    # Agent evaluators read each row's steps and its case's reference tool calls: the engine
    # adds them as the list columns ``steps`` and ``reference`` (evaluation/families/agents/trajectory_metrics.py).
    trajectory: ClassVar[bool] = False
    # Retrieval evaluators read each row's ranked documents and its case's relevance grades:
    # the engine adds them as the list columns ``ranked`` and ``judged`` (evalnb/lab/rankings.py).
    ranked: ClassVar[bool] = False
    # Judges and media metrics read each row's media: the engine adds the resolved items as
    # ``case_media_items``, ``answer_media_items``, ``context_media_items`` (lab/media_rows.py).
    reads_media: ClassVar[bool] = False
    # Rows per ``score`` call. Row-local evaluators set it so their working memory stays
    # bounded on large labs; None gives all rows at once (to share work across rows, such
    # as encoding each distinct text once).
    block_rows: ClassVar[int | None] = None

    @abstractmethod
    def score(self, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context) -> pl.DataFrame:
        """Score every row of ``rows``."""

    @classmethod
    def resolve(cls, given: Mapping[str, object]) -> dict[str, object]:
        """Defaults overlaid with ``given``, each validated.

        Every evaluator also takes ``metrics``: the metrics to compute, of those it
        declares (None, the default: every metric its documentation promises).
        """
        known = {p.name: p for p in cls.params}
        asked = cls._asked(given.get(ASKED))
        given = {k: v for k, v in given.items() if k != ASKED}
        unknown = sorted(set(given) - set(known))
        if unknown:
            msg = f"{cls.id}: unknown parameters {unknown}; expected some of {sorted(known)}"
            raise TypeError(msg)
        values = {
            name: p.check(given[name], cls.id) if name in given else p.default
            for name, p in known.items()
        }
        for name, p in known.items():
            if p.normalize is not None:
                values[name] = p.normalize(values[name])
        if asked is not None:
            values[ASKED] = asked
        return values

    @classmethod
    def _asked(cls, value: object) -> tuple[str, ...] | None:
        if value is None:
            return None
        names = [value] if isinstance(value, str) else value
        keys = [m.key for m in cls.metrics]
        if (
            not isinstance(names, list | tuple)
            or not names
            or any(not isinstance(n, str) or n not in keys for n in names)
        ):
            msg = f"{cls.id}: metrics names some of its metrics {keys}; got {value!r:.80}"
            raise ValueError(msg)
        return tuple(k for k in keys if k in names)  # the declared order, once each

    @classmethod
    def kernels(cls, params: Mapping[str, object]) -> frozenset[str]:
        """Return the kernels the asked metrics need (every declared one when none were asked)."""
        asked = params.get(ASKED)
        return frozenset(
            m.kernel
            for m in cls.metrics
            if asked is None or m.key in asked  # type: ignore[operator]
        )

    @classmethod
    def keep_asked(cls, result: pl.DataFrame, params: Mapping[str, object]) -> pl.DataFrame:
        """Return ``result`` without the metrics that were not asked for."""
        asked = params.get(ASKED)
        if asked is None:
            return result
        return result.filter(pl.col("metric").is_in(list(asked)))  # type: ignore[call-overload]

    @classmethod
    def scoring_key(cls, params: Mapping[str, object]) -> str:
        """Canonical JSON of what decides the scores (stored with each score).

        The parameters that change scores, the metrics asked for (a later run asking for
        more rescores) and the evaluator's :attr:`version` under :data:`VERSION_KEY` (a
        redefined user function, or a built-in whose computation changed, rescores rather
        than keep the old function's scores). :func:`key_params` reads the parameters back.
        """
        scoring = {
            p.name
            for p in cls.params
            if p.scoring and (p.keyed_at_default or params.get(p.name, p.default) != p.default)
        }
        if params.get(ASKED) is not None:
            scoring.add(ASKED)
        key: dict[str, object] = {k: params[k] for k in sorted(scoring)}
        key[VERSION_KEY] = cls.version
        return json.dumps(key, sort_keys=True)

    @classmethod
    def primary(cls) -> MetricSpec:
        """Return the primary metric."""
        return next((m for m in cls.metrics if m.primary), cls.metrics[0])


def key_params(key: str | None) -> dict[str, Any]:
    """Return the scoring parameters of a scoring key (its version left out)."""
    params = json.loads(key) if key else {}
    if not isinstance(params, dict):
        return {}
    params.pop(VERSION_KEY, None)
    return params


def key_version(key: str | None) -> str | None:
    """Return the evaluator version a scoring key records (None: a key from before versions)."""
    params = json.loads(key) if key else {}
    version = params.get(VERSION_KEY) if isinstance(params, dict) else None
    return str(version) if version is not None else None


def reasons(
    n: int, *masks: tuple[np.ndarray, str], base: Sequence[str | None] | None = None
) -> list[str | None]:
    """Per-row ``detail`` JSON: ``{"reason": text}`` where a mask is true (later masks win).

    ``base`` gives each row's detail where no mask applies (default: none).
    """
    out: list[str | None] = list(base) if base is not None else [None] * n
    for mask, text in masks:
        for i in np.flatnonzero(mask):
            out[i] = json.dumps({"reason": text})
    return out


def result_frame(
    rows: pl.DataFrame,
    values: Mapping[str, Sequence[float | None] | np.ndarray],
    details: Sequence[str | None] | np.ndarray,
    *,
    detail_on: str | None = None,
) -> pl.DataFrame:
    """Long result rows (``RESULT_SCHEMA``) from per-metric value arrays (NaN → null).

    ``details`` (JSON text per row) go on every metric, or with ``detail_on`` on that
    metric only — except that a row left unscored explains itself on every metric.
    """
    n = rows.height
    keys = [rows.get_column(c) for c in ("case_id", "model", "sample")]
    # An all-None object array would make an Object series: hand Polars a list.
    given = details.tolist() if isinstance(details, np.ndarray) else list(details)
    if given.count(None) == len(given):  # every row scored: no list of nulls to convert
        detail = _constant("detail", None, n)
    else:
        detail = pl.Series("detail", given, dtype=pl.String)
    parts = []
    for metric, vals in values.items():
        if isinstance(vals, np.ndarray) and vals.dtype.kind == "f":
            series = pl.Series("value", vals, dtype=pl.Float64, nan_to_null=True)
        else:
            series = pl.Series("value", vals, dtype=pl.Float64).fill_nan(None)
        shown = detail
        if detail_on is not None and metric != detail_on:
            shown = pl.select(pl.when(series.is_null()).then(detail)).to_series()
        # Put together without a query (see score_rows), in RESULT_SCHEMA's order.
        parts.append(
            pl.DataFrame([*keys, _constant("metric", metric, n), series, shown.alias("detail")])
        )
    if not parts:
        return pl.DataFrame(schema=RESULT_SCHEMA)
    return parts[0] if len(parts) == 1 else pl.concat(parts)


def per_distinct(
    keys: pl.Series | pl.DataFrame,
    compute: Callable[..., tuple[object, ...]],
    schema: Mapping[str, pl.DataType],
) -> pl.DataFrame:
    """Run ``compute`` once per distinct key; one result row per row of ``keys``.

    For work that is inherently per text (a JSON parse, a decoder, a suffix structure): the
    Python call happens per distinct value, and the results reach every row through a join.
    A Series' null entries get null results; a frame's rows are passed whole, one argument
    per column, nulls included.
    """
    frame = keys.to_frame() if isinstance(keys, pl.Series) else keys
    names = [f"\x00k{i}" for i in range(frame.width)]
    frame = frame.rename(dict(zip(frame.columns, names, strict=True)))
    distinct = (frame.drop_nulls() if isinstance(keys, pl.Series) else frame).unique()
    table = pl.DataFrame(
        [compute(*row) for row in distinct.iter_rows()], schema=pl.Schema(schema), orient="row"
    )
    table = pl.concat([distinct, table], how="horizontal")
    joined = frame.join(table, on=names, how="left", maintain_order="left", nulls_equal=True)
    return joined.drop(names)


_REGISTRY: dict[str, type[Evaluator]] = {}


def register(cls: type[Evaluator], *, replace: bool = False) -> type[Evaluator]:
    """Class decorator adding an evaluator to the catalog (checks its declarations).

    ``replace``: an evaluator of the same id is replaced (a user's function defined again in
    a notebook); otherwise two classes under one id are refused.
    """
    problems = [f for f in cls.requires if f not in FIELDS]
    if cls.domain not in DOMAINS or problems or not cls.metrics:
        msg = (
            f"evaluator {cls.__name__}: domain must be one of {DOMAINS} (got {cls.domain!r}), "
            f"requires a subset of {FIELDS} (unknown {problems}) and at least one metric"
        )
        raise TypeError(msg)
    if cls.id in _REGISTRY and _REGISTRY[cls.id] is not cls and not replace:
        msg = f"evaluator id {cls.id!r} is registered twice"
        raise TypeError(msg)
    _REGISTRY[cls.id] = cls
    return cls


def unregister(evaluator_id: str) -> None:
    """Remove an evaluator from the catalog (a user's, no longer wanted); unknown ids pass."""
    _REGISTRY.pop(evaluator_id, None)


def registered() -> MappingProxyType[str, type[Evaluator]]:
    """Return the evaluators registered so far, by id (read-only).

    :mod:`evalnb.evaluation.catalog` imports every family, so they are all there after it.
    """
    return MappingProxyType(_REGISTRY)
