"""Harbor's metric protocol: rewards JSONL in, a JSON object of numbers out."""

from __future__ import annotations

import importlib
import json
import math
import random
import statistics
from typing import TYPE_CHECKING

from evalnb.io.fields import Where
from evalnb.io.source import decode_text, read_bytes, read_jsonl
from evalnb.lab.files import write_atomic

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

__all__ = ["AGGREGATES", "harbor_metrics", "read_rewards", "write_json_atomic"]


def _pass_rate(values: Sequence[float], threshold: float) -> float:
    return sum(v >= threshold for v in values) / len(values) if values else 0.0


AGGREGATES: dict[str, Callable[[Sequence[float]], float]] = {
    "mean": lambda v: statistics.fmean(v) if v else 0.0,
    "median": lambda v: statistics.median(v) if v else 0.0,
    "min": lambda v: min(v) if v else 0.0,
    "max": lambda v: max(v) if v else 0.0,
    "sum": lambda v: math.fsum(v),
    "count": lambda v: float(len(v)),
    "std": lambda v: statistics.stdev(v) if len(v) > 1 else 0.0,
}


def read_rewards(path: Path) -> list[float]:
    """Read a rewards file the way Harbor does: ``null`` (line or value) counts as 0.

    Raises
    ------
    InputError
        On a line with more or fewer than one key, or a non-numeric reward, naming the line.
    """
    data = read_bytes(path)
    if not data.strip():
        return []  # Harbor: no rewards → mean 0
    rewards: list[float] = []
    for number, value in read_jsonl(decode_text(data, str(path)), str(path)):
        where = Where(str(path), f"line {number}")
        if value is None:
            rewards.append(0.0)
            continue
        rec = where.record(value, "an object with exactly one key, or null")
        if len(rec) != 1:
            raise where.error(None, "exactly one key in the reward object", value)
        ((name, _),) = rec.items()
        reward = where.number(rec, name)
        rewards.append(0.0 if reward is None else reward)
    return rewards


def _custom(spec: str) -> Callable[[Sequence[float]], object]:
    module, _, func = spec.partition(":")
    try:
        fn = getattr(importlib.import_module(module), func)
    except (ImportError, AttributeError) as exc:
        msg = f"aggregate {spec!r}: cannot import {func!r} from {module!r} ({exc})"
        raise ValueError(msg) from None
    if not callable(fn):
        msg = f"aggregate {spec!r} is not callable"
        raise ValueError(msg)
    return fn  # type: ignore[no-any-return]


def harbor_metrics(
    rewards: Sequence[float],
    aggregates: Sequence[str] = ("mean",),
    *,
    pass_threshold: float = 1.0,
    ci: float | None = None,
    resamples: int = 2000,
    seed: int = 0,
) -> dict[str, float]:
    """Aggregate rewards into named numbers.

    ``aggregates`` are built-in names (``mean``, ``pass_rate``, ``median``, ``min``, ``max``,
    ``sum``, ``count``, ``std``) or ``module:function`` for your own, which gets the list of
    rewards and returns a number or a dict of named numbers. With ``ci`` (e.g. 0.95) every
    built-in statistic except ``count`` also gets a percentile-bootstrap interval
    ``<name>_ci_low`` / ``<name>_ci_high`` over ``resamples`` resamples (seeded).

    Examples
    --------
    >>> harbor_metrics([1.0, 0.0, 0.5, 0.0], ["mean", "pass_rate"])
    {'mean': 0.375, 'pass_rate': 0.25}
    """
    _check_options(ci, resamples, pass_threshold)
    builtins: dict[str, Callable[[Sequence[float]], float]] = {
        **AGGREGATES,
        "pass_rate": lambda v: _pass_rate(v, pass_threshold),
    }
    out: dict[str, float] = {}
    for name in aggregates:
        if name in builtins:
            out[name] = builtins[name](rewards)
            continue
        if ":" not in name:
            msg = (
                f"unknown aggregate {name!r}; expected one of {sorted(builtins)} or module:function"
            )
            raise ValueError(msg)
        result = _custom(name)(list(rewards))
        items = result.items() if isinstance(result, dict) else [(name.partition(":")[2], result)]
        for key, value in items:
            if isinstance(value, bool) or not isinstance(value, int | float):
                msg = f"aggregate {name!r} returned {value!r} for {key!r}; expected a number"
                raise ValueError(msg)
            out[str(key)] = float(value)
    if ci is not None and rewards:
        rng = random.Random(seed)
        n = len(rewards)
        for name in [a for a in aggregates if a in builtins and a != "count"]:
            stats = sorted(
                builtins[name]([rewards[rng.randrange(n)] for _ in range(n)])
                for _ in range(resamples)
            )
            alpha = (1 - ci) / 2
            out[f"{name}_ci_low"] = stats[int(alpha * (resamples - 1))]
            out[f"{name}_ci_high"] = stats[int((1 - alpha) * (resamples - 1))]
    bad = {k: v for k, v in out.items() if not math.isfinite(v)}
    if bad:
        msg = (
            f"aggregates {bad} are not finite numbers, which JSON cannot hold; expected finite "
            "rewards and aggregates defined for this many rewards"
        )
        raise ValueError(msg)
    return out


def _check_options(ci: float | None, resamples: int, pass_threshold: float) -> None:
    if ci is not None and not 0 < ci < 1:
        msg = f"--ci is a confidence level strictly between 0 and 1, e.g. 0.95; got {ci!r}"
        raise ValueError(msg)
    if resamples < 1:
        msg = f"--resamples is how many bootstrap resamples to draw (at least 1); got {resamples!r}"
        raise ValueError(msg)
    if not math.isfinite(pass_threshold):
        msg = f"--pass-threshold must be a finite number; got {pass_threshold!r}"
        raise ValueError(msg)


def write_json_atomic(path: Path, payload: object) -> None:
    """Write JSON to ``path`` through a temporary file, so a reader never sees half of it."""
    write_atomic(path, json.dumps(payload, ensure_ascii=False))
