"""Your own evaluator in ten lines: ``@evalnb.evaluator`` on a plain function of columns.

The decorated function receives the rows to score as a Polars frame (the columns its
``requires`` names, with ``case_id``, ``model`` and ``sample``) and returns either one value
per row (a Series, a NumPy array or a list: the one metric) or a frame with a column per
metric (and, optionally, a ``detail`` column of reasons). With ``per_row=True`` it receives
one row as a dict and returns a number (or a dict of numbers), and evalnb maps it over the
rows — simpler to write, slower to run. Either way a null or NaN value leaves the row
unscored with a reason, as every evaluator does.

The decorator makes a registered :class:`~evalnb.evaluation.base.Evaluator`, so the
function's metrics go everywhere a built-in's go: ``evaluate``, the eye, the weakness grid,
labels and recalibration, the calibration bundle. Its **version is the hash of the
function's source** (with the constants and helper functions of its module it reads:
:func:`source_version`): it is part of every score's key, so a redefined function rescores
(the old one's scores are never kept under the new name), a bundle records it, and a
monitor refuses to score with a function that changed since the thresholds were
calibrated. A function defined in a notebook
(``__main__``) runs in the notebook's process (Ray workers cannot import it); one in an
installed module can also be found by processes that never imported it, through the
``evalnb.evaluators`` entry point group (:mod:`evalnb.evaluation.catalog`).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import polars as pl

from evalnb.evaluation.base import (
    DOMAINS,
    FIELDS,
    Context,
    Evaluator,
    MetricSpec,
    Param,
    register,
    result_frame,
    threshold_param,
)
from evalnb.evaluation.catalog import all_evaluators

__all__ = ["evaluator", "source_version"]

_ID = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


# Values whose repr is their whole meaning: a constant a function reads from its module.
_PLAIN = (int, float, complex, str, bytes, bool, type(None), range)


def source_version(func: Callable[..., object]) -> str:
    """Return ``src-`` and 12 hex digits of what the function computes (its evaluator's version).

    The hash covers the function's source (or, with none to read, its byte code *and* its
    constants: ``> 5`` and ``> 50`` differ), and what it reads from outside itself: each
    plain constant of its module or closure by value (``LIMIT = 5`` changed to 50), and
    each helper function of its module by the same hash, recursively. A library it calls
    counts by name only: its own version is the library's business.
    """
    parts: list[str] = []
    _describe(func, parts, seen=set())
    return "src-" + hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:12]


def _describe(func: object, parts: list[str], seen: set[int]) -> None:
    if id(func) in seen:
        return
    seen.add(id(func))
    code = getattr(func, "__code__", None)
    try:
        parts.append(inspect.getsource(func))  # type: ignore[arg-type]
    except (OSError, TypeError):  # no source to read (a lambda typed at a prompt): its code
        parts.append(
            repr(code.co_code) + repr(_constants(code)) if code is not None else repr(func)
        )
    if code is None:
        return
    module = getattr(func, "__module__", None)
    scope = dict(getattr(func, "__globals__", {}))
    for cell_name, cell in zip(
        code.co_freevars, getattr(func, "__closure__", None) or (), strict=False
    ):
        try:
            scope[cell_name] = cell.cell_contents
        except ValueError:  # an empty cell: nothing bound yet
            continue
    for name in sorted(_names(code) | set(code.co_freevars)):
        if name not in scope:
            continue
        value = scope[name]
        if isinstance(value, _PLAIN) or (
            isinstance(value, tuple | frozenset) and all(isinstance(v, _PLAIN) for v in value)
        ):
            parts.append(f"{name}={value!r}")
        elif inspect.isfunction(value) and value.__module__ == module:
            parts.append(f"{name}:")
            _describe(value, parts, seen)


def _names(code: object) -> set[str]:
    """Return the global names a code object and its nested functions read."""
    names = set(getattr(code, "co_names", ()))
    for const in getattr(code, "co_consts", ()):
        if inspect.iscode(const):
            names |= _names(const)
    return names


def _constants(code: object) -> tuple[object, ...]:
    return tuple(_constants(c) if inspect.iscode(c) else c for c in getattr(code, "co_consts", ()))


def evaluator(
    *,
    metrics: Sequence[str] | str,
    requires: Sequence[str] = ("actual",),
    id: str | None = None,  # noqa: A002 - the evaluator's id, as every evaluator has
    title: str | None = None,
    description: str | None = None,
    domain: str = "generation",
    threshold: float | Mapping[str, float] = 0.5,
    higher_is_better: bool = True,
    value_range: tuple[float, float] = (0.0, 1.0),
    per_row: bool = False,
) -> Callable[[Callable[..., Any]], type[Evaluator]]:
    """Make ``func`` an evaluator of the catalog; see the module's description.

    Parameters
    ----------
    metrics
        The metric names it gives (the first is primary), e.g. ``["politeness"]``.
    requires
        The fields it reads, of ``prompt``, ``actual``, ``expected``, ``context``,
        ``condition``, ...: rows lacking one are not given to it.
    id
        The evaluator's id (default: the function's name), lower case.
    title, description
        Shown in the catalog and the eye (default: the name, the docstring).
    domain
        One of H2O's problem domains (``generation``, ``retrieval``, ...).
    threshold
        The default pass threshold, one for all metrics or one per metric.
    higher_is_better
        Whether a higher value is better (all its metrics).
    value_range
        The range of its values (the eye's scales; values outside it are refused).
    per_row
        ``func(row: dict) -> number | dict`` instead of ``func(rows: DataFrame)``.

    Returns
    -------
    type[Evaluator]
        The registered evaluator class: ``evalnb.evaluate(lab, [its id])`` (or the class).

    Examples
    --------
    >>> import evalnb, polars as pl
    >>> @evalnb.evaluator(metrics="says_please", threshold=0.5)
    ... def says_please(rows: pl.DataFrame) -> pl.Series:
    ...     return rows["actual"].str.contains("(?i)please").cast(pl.Float64)
    >>> lab = evalnb.load(pl.DataFrame({"prompt": ["a", "b"], "actual": ["Please.", "No."]}))
    >>> evalnb.evaluate(lab, ["says_please"], progress=False).scores["value"].to_list()
    [1.0, 0.0]
    """
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    if not names or any(not isinstance(n, str) or not _ID.match(n) for n in names):
        msg = f"metrics are names in lower case (a-z, 0-9, _), at least one; got {metrics!r:.80}"
        raise ValueError(msg)
    unknown = [f for f in requires if f not in FIELDS]
    if unknown or domain not in DOMAINS:
        msg = f"requires is some of {FIELDS} (unknown {unknown}); domain one of {DOMAINS}"
        raise ValueError(msg)
    low, high = (float(value_range[0]), float(value_range[1]))
    if not low < high:
        msg = f"value_range is (low, high) with low < high; got {value_range!r}"
        raise ValueError(msg)

    def make(func: Callable[..., Any]) -> type[Evaluator]:
        name = id or func.__name__
        if not _ID.match(name):
            msg = f"an evaluator id is lower case (a-z, 0-9, _); got {name!r} (pass id=...)"
            raise ValueError(msg)
        cuts = threshold if isinstance(threshold, Mapping) else dict.fromkeys(names, threshold)
        specs = tuple(
            MetricSpec(
                key,
                key.replace("_", " ").capitalize(),
                f"{name}: {key} (a user evaluator)",
                min=low,
                max=high,
                higher_is_better=higher_is_better,
                threshold=float(cuts.get(key, 0.5)),
                primary=i == 0,
            )
            for i, key in enumerate(names)
        )
        doc = (description or inspect.getdoc(func) or f"{name}, a user evaluator").strip()
        attributes: dict[str, Any] = {
            "id": name,
            "title": title or name.replace("_", " ").capitalize(),
            "domain": domain,
            "description": doc.splitlines()[0],
            "requires": tuple(requires),
            "metrics": specs,
            "version": source_version(func),
            "params": (threshold_param(specs[0].threshold, names[0], low=low, high=high),),
            "block_rows": None,
            "local_only": func.__module__ == "__main__",
            "function": staticmethod(func),
            "per_row": per_row,
            "__module__": func.__module__,
            "__doc__": doc,
        }
        cls = type(f"UserEvaluator_{name}", (_UserEvaluator,), attributes)
        held = all_evaluators().get(name)  # the built-ins loaded first: never shadowed
        if held is not None and not issubclass(held, _UserEvaluator):
            msg = f"{name!r} is a built-in evaluator's id: give yours another (id=...)"
            raise ValueError(msg)
        # A cell run again defines the function again: the new one replaces the old.
        return register(cls, replace=held is not None)

    return make


class _UserEvaluator(Evaluator):
    """An evaluator made by :func:`evaluator` from a user's function (never registered itself)."""

    function: ClassVar[Callable[..., Any]]
    per_row: ClassVar[bool]
    params: ClassVar[tuple[Param, ...]] = ()

    def score(
        self,
        rows: pl.DataFrame,
        params: Mapping[str, object],  # noqa: ARG002 - its threshold only
        ctx: Context,  # noqa: ARG002 - a user function needs no shared service
    ) -> pl.DataFrame:
        """Call the user's function on the rows and check what it returned."""
        keys = [m.key for m in self.metrics]
        where = f"evaluator {self.id!r} ({type(self).function.__qualname__})"
        try:
            got = self._call(rows)
        except Exception as err:
            err.add_note(f"raised by the function of {where}")
            raise
        values, detail = _columns(got, keys, rows.height, where)
        reasons: list[str | None] = list(detail) if detail is not None else [None] * rows.height
        for key in keys:
            bad = values[key]
            outside = np.isfinite(bad) & ((bad < self.metrics[0].min) | (bad > self.metrics[0].max))
            if outside.any():
                i = int(np.flatnonzero(outside)[0])
                msg = (
                    f"{where} gave {key} = {bad[i]!r} for row {i}, outside its value_range "
                    f"[{self.metrics[0].min:g}, {self.metrics[0].max:g}]: fix the function or "
                    "declare value_range"
                )
                raise ValueError(msg)
            for row in np.flatnonzero(np.isinf(bad)).tolist():
                # inf is no score (it passes any threshold and makes every mean inf): null,
                # with the row's reason saying what the function gave.
                reasons[row] = json.dumps(
                    {
                        "reason": f"{self.id} gave {key} = {bad[row]!r} for this row, not a finite number"
                    }
                )
                bad[row] = math.nan
            for row in np.flatnonzero(~np.isfinite(bad)).tolist():
                if reasons[row] is None:
                    reasons[row] = json.dumps({"reason": f"{self.id} gave no value for this row"})
        return result_frame(rows, values, reasons)

    def _call(self, rows: pl.DataFrame) -> object:
        function = type(self).function
        if not self.per_row:
            # A copy (cheap: Polars shares the columns): a function that grows its input in
            # place (insert_column, hstack(in_place=True)) must not change the rows scored.
            return function(rows.clone())
        out = [function(row) for row in rows.iter_rows(named=True)]
        if out and all(isinstance(o, Mapping) for o in out):
            return pl.DataFrame([dict(o) for o in out])
        return out


def _columns(
    got: object, keys: list[str], n: int, where: str
) -> tuple[dict[str, np.ndarray], list[str | None] | None]:
    """Return the metric columns of what a user function returned, checked (length, numbers)."""
    detail = None
    if isinstance(got, pl.DataFrame):
        missing = [k for k in keys if k not in got.columns]
        if missing:
            msg = f"{where} returned a frame without the column(s) {missing}; it has {got.columns}"
            raise ValueError(msg)
        if "detail" in got.columns:
            detail = [None if d is None else json.dumps({"reason": str(d)}) for d in got["detail"]]
        columns: dict[str, object] = {k: got[k] for k in keys}
    elif len(keys) == 1:
        columns = {keys[0]: got}
    else:
        msg = f"{where} declares {len(keys)} metrics {keys}: return a frame with those columns"
        raise ValueError(msg)
    out = {}
    for key, column in columns.items():
        try:
            values = np.asarray(
                [math.nan if v is None else v for v in _list(column)], dtype=np.float64
            )
        except (TypeError, ValueError) as err:
            msg = f"{where} returned {key} values that are not numbers ({err})"
            raise ValueError(msg) from None
        if values.shape != (n,):
            msg = (
                f"{where} returned {values.size} value(s) of {key} for {n} rows: one per row, "
                "in the rows' order"
            )
            raise ValueError(msg)
        out[key] = values
    return out, detail


def _list(column: object) -> list[object]:
    if isinstance(column, pl.Series):
        return column.to_list()
    if isinstance(column, np.ndarray):
        return column.tolist()  # type: ignore[no-any-return]
    if isinstance(column, list | tuple):
        return list(column)
    msg = f"expected a Series, an array or a list of numbers; got {type(column).__name__}"
    raise TypeError(msg)
