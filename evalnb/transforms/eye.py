"""Eval eye levels as small tables: what the widget draws for one drill path.

The drill path is ``[domain, evaluator, metric, model]`` cut at any depth. For each depth
:func:`eye_nodes` gives the two rings (inner: ``ring`` 1, outer: ``ring`` 2) with status and
problem counts, and :func:`eye_bars` the centre's bar chart (metric × model means). Both read
an :class:`EyeIndex` built once per lab, so one interaction costs a filter of a few hundred
aggregate rows, whatever the lab's size.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import polars as pl

from evalnb.analysis.derived import lab_leaderboard
from evalnb.analysis.problems import problems
from evalnb.evaluation.base import DOMAINS
from evalnb.evaluation.catalog import all_evaluators
from evalnb.lab.verdicts import current_thresholds, lazy_verdicts

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = [
    "BAR_SCHEMA",
    "LEVELS",
    "NODE_SCHEMA",
    "EyeIndex",
    "Parts",
    "check_path",
    "eye_bars",
    "eye_index",
    "eye_nodes",
    "path_titles",
]

LEVELS = ("domain", "evaluator", "metric", "model")
NODE_SCHEMA = pl.Schema(
    dict[str, pl.DataType](
        {
            "id": pl.String(),
            "parent": pl.String(),
            "ring": pl.Int8(),
            "kind": pl.String(),
            "keys": pl.List(pl.String()),
            "label": pl.String(),
            "title": pl.String(),
            "n_problems": pl.Int32(),
            "severity": pl.String(),
            "value": pl.Float64(),
            "passed": pl.Boolean(),
            "selected": pl.Boolean(),
            "not_scored": pl.String(),
        }
    )
)
"""One ring segment: ``keys`` are appended to the path when it is clicked.

``not_scored`` is set (why) when nothing under the segment was scored here — a metric not
meaningful for the language chosen, answers without an expected answer: its own state,
neither passed nor failed (``passed`` and ``value`` are null)."""
BAR_SCHEMA = pl.Schema(
    dict[str, pl.DataType](
        {
            "group": pl.String(),
            "model": pl.String(),
            "value": pl.Float64(),
            "threshold": pl.Float64(),
            "passed": pl.Boolean(),
        }
    )
)
"""One bar of the centre chart: ``group`` is the metric (x axis), one bar per model."""
_SEVERITY_RANK = {"HIGH": 3, "MEDIUM": 2, "LOW": 1}
_SEVERITY_NAME = {v: k for k, v in _SEVERITY_RANK.items()}
_DOMAIN_TITLES = {d: d.capitalize() for d in DOMAINS}


@dataclass(frozen=True)
class EyeIndex:
    """Aggregates of one lab that every eye level is cut from (build with :func:`eye_index`).

    Attributes
    ----------
    verdicts
        Every score with its threshold, ``passed`` and ``domain``, as a query: collect the
        rows needed (a filter on the scores' columns runs before the join), never the whole
        table on a large lab.
    board
        Per (domain, evaluator, metric, model): mean, pass rate, threshold, ``passed``
        (the mean is on the right side of the threshold), problem count and worst severity.
    specs
        Per metric: titles, descriptions, direction and the threshold in force.
    parts
        Per (evaluator, metric, model): its rows ``case_id, sample, value, passed`` sorted by
        value — the dots of the model level, cut on first use and kept for the next clicks.
    """

    verdicts: pl.LazyFrame
    board: pl.DataFrame
    specs: pl.DataFrame
    problems: pl.DataFrame
    parts: Parts = field(repr=False)


class Parts(Mapping[tuple[str, str, str], pl.DataFrame]):
    """The rows of each (evaluator, metric, model), cut from the verdicts when first asked for.

    Cutting all of them when the eye opens cost more than a second per ten million scores
    and a copy of every score; a click needs one or two, so each is cut on demand (one
    filter of the verdicts, tens of milliseconds) and the last few are kept.
    """

    def __init__(
        self, verdicts: pl.LazyFrame, keys: Iterable[tuple[str, str, str]], keep: int = 16
    ) -> None:
        self._verdicts, self._keys, self._keep = verdicts, frozenset(keys), keep
        self._cut: dict[tuple[str, str, str], pl.DataFrame] = {}

    def __getitem__(self, key: tuple[str, str, str]) -> pl.DataFrame:
        if key not in self._keys:
            raise KeyError(key)
        if key in self._cut:
            self._cut[key] = self._cut.pop(key)  # most recently used last
            return self._cut[key]
        ev, metric, model = key
        wanted = (
            (pl.col("evaluator") == ev) & (pl.col("metric") == metric) & (pl.col("model") == model)
        )
        part = self._verdicts.filter(wanted).select(_PART_COLUMNS).collect()
        self._cut[key] = part.sort("value", nulls_last=True)
        while len(self._cut) > self._keep:
            self._cut.pop(next(iter(self._cut)))
        return self._cut[key]

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __iter__(self) -> Iterator[tuple[str, str, str]]:
        return iter(sorted(self._keys))

    def __len__(self) -> int:
        return len(self._keys)


_PART_COLUMNS = ["case_id", "sample", "value", "passed"]
_NOT_SCORED = (
    "not scored here: no row under it has a value (the metric is not meaningful for these "
    "rows, or they lack what it needs; each row's detail says why)"
)


def eye_index(lab: LabCore, *, seed: int = 0, cases: pl.DataFrame | None = None) -> EyeIndex:
    """Aggregate ``lab`` once for the eye: verdicts, per-model means, problem counts.

    ``cases`` (a frame with ``case_id``) keeps those cases only: the eye's language filter.

    Examples
    --------
    >>> import evalnb, polars as pl
    >>> lab = evalnb.load(pl.DataFrame({"prompt": ["a", "b"], "expected": ["x y", "y"],
    ...                                 "actual": ["x y", "z"]}))
    >>> idx = eye_index(evalnb.evaluate(lab, ["rouge"], progress=False))
    >>> idx.board.select("evaluator", "metric", "mean").sort("metric").row(0)
    ('rouge', 'rouge_1', 0.5)
    """
    # A query, not a table: on ten million scores the joined table alone is a second and
    # a gigabyte, and each reader below needs only some of its rows.
    v = lazy_verdicts(lab.scan("scores"), lab.metrics, lab.thresholds)
    if cases is not None:
        v = v.join(cases.lazy().select("case_id"), on="case_id", how="semi")
    board = lab_leaderboard(lab, v, n_boot=200, seed=seed)
    found = problems(lab, v, board, case_ids=False)  # the eye counts problems
    specs = current_thresholds(lab.metrics, lab.thresholds).join(
        board.select("evaluator", "metric").unique(), on=["evaluator", "metric"], how="semi"
    )
    counts = found.filter(pl.col("evaluator").is_not_null()).select(
        "evaluator",
        "metric",
        "model",
        worst=pl.col("severity").replace_strict(_SEVERITY_RANK, default=0, return_dtype=pl.Int8),
    )
    per_model = counts.group_by("evaluator", "metric", "model").agg(
        n_problems=pl.len().cast(pl.Int32), worst=pl.col("worst").max()
    )
    agg = (
        board.join(specs.select("evaluator", "metric", "domain"), on=["evaluator", "metric"])
        .join(per_model, on=["evaluator", "metric", "model"], how="left")
        .with_columns(
            pl.col("n_problems").fill_null(0),
            pl.col("worst").fill_null(0),
            passed=pl.when(pl.col("mean").is_null())
            .then(None)
            .when(pl.col("higher_is_better"))
            .then(pl.col("mean") >= pl.col("threshold"))
            .otherwise(pl.col("mean") <= pl.col("threshold")),
        )
    )
    # The leaderboard has a row for every (evaluator, metric, model) with scores.
    keys = board.select("evaluator", "metric", "model").iter_rows()
    return EyeIndex(v, agg, specs, counts, Parts(v, keys))


def check_path(index: EyeIndex, path: list[str]) -> list[str]:
    """Return ``path`` when every step names something at its level, else raise ValueError."""
    if len(path) > len(LEVELS):
        msg = f"a drill path has at most {len(LEVELS)} steps {LEVELS}; got {path!r}"
        raise ValueError(msg)
    rows = index.board
    for level, step in zip(LEVELS, path, strict=False):
        options = rows[level].unique().sort().to_list()
        if step not in options:
            msg = (
                f"path step {step!r} is not a {level} under {path[: LEVELS.index(level)]!r}; "
                f"expected one of {options}"
            )
            raise ValueError(msg)
        rows = rows.filter(pl.col(level) == step)
    return path


def _scoped(index: EyeIndex, path: list[str]) -> pl.DataFrame:
    rows = index.board
    for level, step in zip(LEVELS, path, strict=False):
        rows = rows.filter(pl.col(level) == step)
    return rows


def _rollup(rows: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """Problem count and worst severity per group, in the eye's display order."""
    order = {d: i for i, d in enumerate(DOMAINS)}
    return (
        rows.group_by(by, maintain_order=True)
        .agg(
            n_problems=pl.col("n_problems").sum().cast(pl.Int32),
            worst=pl.col("worst").max(),
            value=pl.col("mean").mean(),
            # Nothing scored under the node is not "passed": all() of no verdicts is True.
            passed=pl.when(pl.col("passed").count() > 0).then(pl.col("passed").all()),
            primary=pl.col("primary").first(),
        )
        .with_columns(_o=pl.col(by[0]).replace_strict(order, default=99, return_dtype=pl.Int32))
        .sort("_o", *by)
        .drop("_o")
    )


def _titles(index: EyeIndex) -> dict[tuple[str, str], tuple[str, str]]:
    return {
        (e, m): (t or m, d or "")
        for e, m, t, d in index.specs.select(
            "evaluator", "metric", "title", "description"
        ).iter_rows()
    }


def eye_nodes(index: EyeIndex, path: list[str]) -> pl.DataFrame:
    """Return the two rings at ``path`` (``NODE_SCHEMA``): status, problem counts, values.

    ========  ==========================  ===========================
    depth     inner ring (``ring`` 1)     outer ring (``ring`` 2)
    ========  ==========================  ===========================
    0         problem domains             their evaluators
    1         the domain's evaluators     their metrics
    2         the evaluator's metrics     models (per metric)
    3, 4      models with their mean      model names
    ========  ==========================  ===========================

    At depth 4 the selected model's segments have ``selected`` true.
    """
    check_path(index, path)
    depth = min(len(path), 3)
    inner_level, outer_level = LEVELS[depth], LEVELS[min(depth + 1, 3)]
    rows = _scoped(index, path[:depth])
    titles = _titles(index)
    ev_titles = _evaluator_titles(index)
    nodes: list[dict[str, object]] = []
    sel = path[3] if len(path) == 4 else None

    def label(level: str, key: str, parent: str | None) -> tuple[str, str]:
        if level == "domain":
            return _DOMAIN_TITLES.get(key, key), f"Problem domain: {key}"
        if level == "evaluator":
            return ev_titles.get(key, key), f"Evaluator {key}"
        if level == "metric":
            ev = path[1] if depth >= 2 else parent or ""
            title, desc = titles.get((ev, key), (key, ""))
            return title, desc
        return key, f"Model {key}"

    inner = _rollup(rows, [inner_level])
    outer = _rollup(rows, [inner_level, outer_level]) if depth < 3 else inner
    for r in inner.iter_rows(named=True):
        key = r[inner_level]
        text, title = label(inner_level, key, None)
        if depth >= 3:
            text = "–" if r["value"] is None else f"{r['value']:.3f}"
            title = f"{key}: mean {text}"
        nodes.append(_node(f"1:{key}", None, 1, inner_level, [key], text, title, r, key == sel))
    for r in outer.iter_rows(named=True):
        key = r[outer_level]
        parent = r[inner_level]
        text, title = label(outer_level, key, parent)
        keys = [key] if depth >= 3 else [parent, key]
        nodes.append(
            _node(
                f"2:{parent}/{key}", f"1:{parent}", 2, outer_level, keys, text, title, r, key == sel
            )
        )
    return pl.DataFrame(nodes, schema=NODE_SCHEMA)


def _evaluator_titles(index: EyeIndex) -> dict[str, str]:
    """Look up evaluator titles in the catalog (the metric table holds metric titles only)."""
    titles = catalog_titles()
    return {e: titles.get(e, e) for e in index.board["evaluator"].unique()}


def catalog_titles() -> dict[str, str]:
    """Return each evaluator's title by id, as the catalog holds it now.

    Read live, not cached: an evaluator defined after the first eye (a notebook cell's
    ``@evalnb.evaluator``) showed its bare id.
    """
    return {name: cls.title for name, cls in all_evaluators().items()}


def _node(
    id_: str,
    parent: str | None,
    ring: int,
    kind: str,
    keys: list[str],
    label: str,
    title: str,
    r: dict[str, object],
    selected: bool,
) -> dict[str, object]:
    return {
        "id": id_,
        "parent": parent,
        "ring": ring,
        "kind": kind,
        "keys": keys,
        "label": label,
        "title": title,
        "n_problems": r["n_problems"],
        "severity": _SEVERITY_NAME.get(cast("int", r["worst"]) or 0),
        "value": r["value"],
        "passed": r["passed"],
        "selected": selected,
        "not_scored": _NOT_SCORED if r["value"] is None and r["passed"] is None else None,
    }


def path_titles(index: EyeIndex, path: list[str]) -> list[str]:
    """Display title of every step of ``path`` (domain, evaluator, metric, model)."""
    titles = []
    for level, step in zip(LEVELS, path, strict=False):
        if level == "domain":
            titles.append(_DOMAIN_TITLES.get(step, step))
        elif level == "evaluator":
            titles.append(catalog_titles().get(step, step))
        elif level == "metric":
            title = _titles(index).get((path[1], step), (step, ""))[0]
            # A judge's one metric often bears its evaluator's title: "Binary judge ›
            # Binary judge" reads as a doubled crumb, so the metric says what it is.
            titles.append(f"{title} (metric)" if titles and title == titles[-1] else title)
        else:
            titles.append(step)
    return titles


def eye_bars(index: EyeIndex, path: list[str]) -> pl.DataFrame:
    """Return the centre's bar chart at ``path`` (``BAR_SCHEMA``): one bar per (metric, model).

    Depth 0 and 1 show each evaluator's primary metric; depth 2 all the evaluator's
    metrics; depth 3 and 4 the chosen metric.
    """
    check_path(index, path)
    rows = _scoped(index, path[:3])
    if len(path) < 2:
        rows = rows.filter(pl.col("primary"))
    titles = _titles(index)
    group = [
        titles.get((e, m), (m, ""))[0] for e, m in rows.select("evaluator", "metric").iter_rows()
    ]
    return pl.DataFrame(
        {
            "group": group,
            "model": rows["model"],
            "value": rows["mean"],
            "threshold": rows["threshold"],
            "passed": rows["passed"],
        },
        schema=BAR_SCHEMA,
    )
