"""``evalnb.evaluate``: run evaluators over a lab, incrementally, filling scores and metrics."""

from __future__ import annotations

import datetime as dt
import json
import warnings
from typing import TYPE_CHECKING, TypeVar

import polars as pl
from tqdm.auto import tqdm

from evalnb.evaluation.base import ASKED, Evaluator, JudgeRouter, registered, score_rows
from evalnb.evaluation.catalog import catalog, get_evaluator
from evalnb.evaluation.on_disk import score_on_disk
from evalnb.evaluation.ragas_objects import is_ragas_metric, ragas_evaluator
from evalnb.evaluation.ray_engine import RayEngine, RayScorer
from evalnb.evaluation.scoring import Scorer
from evalnb.lab.core import LabCore
from evalnb.lab.schema import SCHEMAS
from evalnb.llm.budget import Budget
from evalnb.llm.redact import public_url

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from evalnb.llm.client import LLMClient

__all__ = ["NothingScoredWarning", "evaluate", "evaluator_params", "evaluators", "resolve_params"]

_KEY = ["case_id", "model", "sample"]
# The lab comes back as the class it came in (a user's evalnb.Lab stays one).
L = TypeVar("L", bound=LabCore)


def evaluators() -> pl.DataFrame:
    """List the evaluators available: id, title, domain, needs, parameters and metrics.

    Examples
    --------
    >>> import evalnb
    >>> "text_matching" in evalnb.evaluators()["id"].to_list()
    True
    """
    return catalog()


def _split_params(
    classes: Sequence[type[Evaluator]], given: Mapping[str, object]
) -> dict[str, dict[str, object]]:
    """Route keyword arguments to evaluators.

    ``{evaluator_id: {...}}`` goes to that evaluator; any other name goes to every selected
    evaluator that declares such a parameter.
    """
    ids = {c.id for c in classes}
    routed: dict[str, dict[str, object]] = {c.id: {} for c in classes}
    for name, value in given.items():
        if name in ids:
            if not isinstance(value, dict):
                msg = f"parameters for evaluator {name!r} must be a dict, got {value!r}"
                raise TypeError(msg)
            routed[name].update(value)
            continue
        takers = [c.id for c in classes if any(p.name == name for p in c.params)]
        if not takers:
            known = sorted({p.name for c in classes for p in c.params})
            msg = (
                f"no selected evaluator takes parameter {name!r}; known: {known}, or pass "
                "a dict per evaluator id"
            )
            raise TypeError(msg)
        for evaluator_id in takers:
            routed[evaluator_id].setdefault(name, value)
    return routed


def resolve_params(
    classes: Sequence[type[Evaluator]],
    routed: Mapping[str, dict[str, object]],
    judge: LLMClient | JudgeRouter | None,
) -> dict[str, dict[str, object]]:
    """Return each evaluator's checked parameters, the judge's model named where it judges."""
    for cls in classes:
        if (cls.judge or cls.uses_judge) and judge is not None:
            if isinstance(judge, JudgeRouter):
                name = judge.identity
            else:
                name = f"{judge.model}@{public_url(str(judge.base_url))}"
                decoding = judge.fingerprint["decoding"]
                if decoding != {"temperature": 0}:  # another sampling is another judge
                    name += " " + json.dumps(decoding, sort_keys=True, default=str)
            routed[cls.id].setdefault("judge_model", name)
    return {c.id: c.resolve(routed[c.id]) for c in classes}


def evaluator_params(
    names: str | Sequence[object],
    judge: LLMClient | JudgeRouter | None,
    params: Mapping[str, object],
) -> tuple[list[type[Evaluator]], dict[str, dict[str, object]]]:
    """Return the evaluators ``names`` selects and their parameters, as :func:`evaluate` would."""
    classes = _classes([names] if isinstance(names, str) else list(names))
    return classes, resolve_params(classes, _split_params(classes, params), judge)


def _classes(items: list[object]) -> list[type[Evaluator]]:
    """Return the evaluator classes of ids and ragas metric objects, each once, in order."""
    out: dict[str, type[Evaluator]] = {}
    for item in items:
        if isinstance(item, str):
            cls = get_evaluator(item)
        elif isinstance(item, type) and issubclass(item, Evaluator) and item.id in registered():
            cls = item  # what @evalnb.evaluator returns, or a registered subclass
        elif is_ragas_metric(item):
            cls = ragas_evaluator(item)
        else:
            msg = (
                "evaluators are ids (see evalnb.evaluators()), registered evaluator classes "
                f"(@evalnb.evaluator) or ragas metric objects; got {type(item).__name__}"
            )
            raise TypeError(msg)
        if cls.id in out and out[cls.id] is not cls and not isinstance(item, str):
            msg = (
                f"two ragas metrics named {cls.id.removeprefix('ragas.')!r} in one call: "
                "give one of them another name (metric.name = ...)"
            )
            raise ValueError(msg)
        out.setdefault(cls.id, cls)
    return list(out.values())


def evaluate(
    lab: L,
    names: str | Sequence[object],
    *,
    progress: bool = True,
    judge: LLMClient | JudgeRouter | None = None,
    engine: str | RayEngine = "local",
    metrics: Mapping[str, Sequence[str]] | None = None,
    budget: float | Budget | None = None,
    **params: object,
) -> L:
    """Run evaluators over every output of ``lab`` and return the lab with their scores.

    Parameters
    ----------
    lab
        The lab to score. When it is backed by a store (``lab.path``), the new scores,
        metrics and thresholds are written to it in one transaction.
    names
        Evaluator ids (see :func:`evaluators`), or one id; ragas metric objects too
        (``RougeScore()``, ``Faithfulness(llm=...)``: see
        :mod:`evalnb.evaluation.ragas_objects`), scored as ``ragas.<name>``.
    progress
        Show a ``tqdm`` progress bar.
    judge
        The :class:`evalnb.LLMClient` the judge evaluators call (its model is part of their
        scoring parameters: another judge rescores), or a cascade of judges
        (:func:`evalnb.cascade`, calibrated) that picks a judge per row.
    **params
        Parameters by name (given to every selected evaluator that has them), or a dict per
        evaluator id, e.g. ``text_matching={"evaluate_retrieved_context": True}``.
    engine
        ``"local"`` (default): this process. ``"ray"``, or a :class:`evalnb.RayEngine`
        naming a cluster address: Ray Data tasks and actors over Parquet shards of the
        rows (``pip install 'evalnb[ray]'``), with scores equal to the local engine's.
        Worth it on a cluster: model evaluators on several GPUs, or tens of millions of
        answers; on one machine the local engine is faster.
    metrics
        Per evaluator id, the metrics to compute (``{"bleu": ["sacrebleu"]}``): only those
        are stored, and an evaluator that bundles costly computations runs only those the
        asked metrics need (BLEU's H2O n-grams, sacrebleu's statistics and chrF are three).
        Evaluators not named give every metric their documentation promises.
    budget
        A hard cap on this run's judge calls: US dollars at the judge's ``prices`` (a
        number), or an :class:`evalnb.llm.budget.Budget` of tokens and/or dollars. A call
        that could exceed it is not made; its row is left unscored saying so, and a later
        run with a larger budget asks only those calls (the rest come from the reply cache).

    Notes
    -----
    Incremental: rows already scored by an evaluator with the same scoring parameters are
    skipped; changing a scoring parameter rescores every row of that evaluator. A
    ``metric_threshold`` is recorded as a user threshold and never causes rescoring.

    A lab whose store keeps its scores on disk (``lab.save(path, on_disk=("outputs",
    "scores"))``) is scored a batch of answers at a time: each evaluator's new scores
    become one new Parquet part, and no table is loaded whole. Processes scoring different
    evaluators of such a lab at once both land.
    """
    ray = _ray_engine(engine)
    if budget is not None:
        judge = _budgeted(judge, budget, lab)
    # One id is one evaluator: iterating a string would ask for evaluators "b", "l", ...
    classes = _classes([names] if isinstance(names, str) else list(names))
    routed = _split_params(classes, params)
    for evaluator_id, asked in (metrics or {}).items():
        if evaluator_id not in routed:
            msg = f"metrics names {evaluator_id!r}, which is not among the evaluators run {sorted(routed)}"
            raise ValueError(msg)
        routed[evaluator_id][ASKED] = list(asked)
    resolved = resolve_params(classes, routed, judge)
    keys = {c.id: c.scoring_key(resolved[c.id]) for c in classes}
    metric_rows, thresholds = lab.metrics, lab.thresholds
    for cls in classes:
        metric_rows = merge_metrics(metric_rows, cls)
        thresholds = _user_threshold(thresholds, cls, routed[cls.id])
    bar = tqdm(total=lab.height("outputs") * len(classes), disable=not progress, desc="evaluate")

    scorer = Scorer(lab, classes, resolved, bar, judge=judge, ray=ray)
    try:
        if "scores" in lab.on_disk:  # the scores stay on disk: new parts, a batch at a time
            remote = None if ray is None else RayScorer(ray, resolved, lab.path, bar)
            run = score_on_disk(lab, keys, scorer, remote)
            for cls in classes:
                _warn_if_nothing_scored(cls, run.new.get(cls.id))
            return lab.with_parts(
                {"scores": run.parts}, {"metrics": metric_rows, "thresholds": thresholds}
            )
        scores = lab.scores
        # What each evaluator already scored, read once: merging one evaluator's scores
        # leaves another's as they were.
        new = scorer.score(lab.rows(), {c.id: _done(scores, c.id, keys[c.id]) for c in classes})
    finally:
        bar.close()
    for cls in classes:
        if cls.id in new:
            _warn_if_nothing_scored(cls, new[cls.id])
            scores = _merge_scores(scores, new[cls.id], cls.id, keys[cls.id])
    return lab.with_tables({"scores": scores, "metrics": metric_rows, "thresholds": thresholds})


def _budgeted(
    judge: LLMClient | JudgeRouter | None, budget: float | Budget, lab: LabCore
) -> LLMClient | JudgeRouter:
    """Return ``judge`` with its calls (a router's, all of them) under one hard budget."""
    if judge is None:
        msg = "budget= caps a judge's calls: pass judge= too"
        raise ValueError(msg)
    if "scores" in lab.on_disk:
        msg = (
            "budget= on a lab whose scores are kept on disk is not supported yet (a row a "
            "budget left could not be asked again): evaluate it in memory, or without a budget"
        )
        raise ValueError(msg)
    cap = budget if isinstance(budget, Budget) else Budget(usd=float(budget))
    if isinstance(judge, JudgeRouter):
        return judge.with_budget(cap)
    return judge.with_settings(budget=cap)


def _ray_engine(engine: str | RayEngine) -> RayEngine | None:
    if isinstance(engine, RayEngine):
        return engine
    if engine == "ray":
        return RayEngine()
    if engine == "local":
        return None
    msg = f"engine must be 'local', 'ray' or an evalnb.RayEngine, got {engine!r}"
    raise ValueError(msg)


class NothingScoredWarning(UserWarning):
    """An evaluator ran but gave no row a value (e.g. BLEU on a lab with no expected answers)."""


def _warn_if_nothing_scored(cls: type[Evaluator], new: pl.DataFrame | pl.LazyFrame | None) -> None:
    """Warn, where a notebook shows it, when every value is null, with the commonest reason.

    ``new`` may be a scan of the scores just written to disk: only counts are collected.
    """
    if new is None:
        return
    # In memory: two counts, no query.
    if isinstance(new, pl.DataFrame) and new["value"].null_count() < max(new.height, 1):
        return
    rows = new.lazy()
    n, scored = rows.select(pl.len(), pl.col("value").is_not_null().any()).collect().row(0)
    if not n or scored:
        return
    reasons = (
        rows.select(pl.col("detail").str.json_path_match("$.reason")).drop_nulls().collect()
    ).to_series()
    answers = rows.select(pl.struct("case_id", "model", "sample").n_unique()).collect().item()
    message = f"{cls.id} scored none of the {answers} answers it was given"
    if reasons.len():
        message += f"; the commonest reason: {reasons.mode().sort()[0]}"
    else:  # no reason recorded: say what the evaluator reads, the usual cause
        message += (
            f"; it needs {', '.join(cls.requires)} on each row: map the missing columns when "
            "loading, e.g. evalnb.load(path, expected='reference_column')"
        )
    warnings.warn(message, NothingScoredWarning, stacklevel=3)


def _done(scores: pl.DataFrame, evaluator: str, key: str) -> pl.DataFrame:
    """Output rows already scored by ``evaluator`` with these scoring parameters.

    A row left unscored for the next run (``asks_again`` in its detail: a budget refused
    its call, or its batch had not ended) is not done: the next run asks its calls.
    """
    # Series by Series: a select or filter on the whole many-chunk table first copies it
    # into one chunk (1 GB and more for 18M scores).
    mine = _where(scores, evaluator, key, same_params=True)
    waiting = scores.get_column("value").is_null() & mine
    if waiting.any():  # few rows: only the unscored ones' details are read
        details = scores.get_column("detail").filter(waiting)
        left = details.str.contains('"asks_again": true', literal=True).fill_null(value=False)
        mine = mine.scatter(waiting.arg_true().filter(left), False)
    if not mine.any():
        return scores.clear().select(_KEY)
    return pl.DataFrame([scores.get_column(c).filter(mine) for c in _KEY]).unique()


def _where(scores: pl.DataFrame, evaluator: str, key: str, *, same_params: bool) -> pl.Series:
    """Mask of this evaluator's scores with (or without) these scoring parameters."""
    params = scores.get_column("params")
    return (scores.get_column("evaluator") == evaluator) & (
        (params == key) if same_params else (params != key)
    )


def _merge_scores(
    scores: pl.DataFrame, new: pl.DataFrame, evaluator: str, key: str
) -> pl.DataFrame:
    new = score_rows(new, evaluator, key)
    # Scores of this evaluator under other parameters are replaced, not kept beside. The
    # filter copies the whole table, so it runs only when there is something to drop.
    stale = _where(scores, evaluator, key, same_params=False)
    waiting = (
        _where(scores, evaluator, key, same_params=True) & scores.get_column("value").is_null()
    )
    if new.height and waiting.any():  # rows a budget left, asked again: the new rows stand
        at = waiting.arg_true()
        old = pl.DataFrame([scores.get_column(c).gather(at) for c in _KEY]).with_columns(at=at)
        again = old.join(new.select(_KEY).unique(), on=_KEY, how="semi")["at"]
        stale = stale.scatter(again, True)
    kept = scores.filter(~stale) if stale.any() else scores
    if kept.height == 0 and new.schema == kept.schema:  # a first run: nothing to append to
        return new
    return pl.concat([kept, new])  # score_rows gives the scores table's columns in order


def merge_metrics(metrics: pl.DataFrame, cls: type[Evaluator]) -> pl.DataFrame:
    spec = pl.DataFrame(
        [
            {
                "evaluator": cls.id,
                "metric": m.key,
                "domain": cls.domain,
                "title": m.title,
                "description": m.description,
                "min": m.min,
                "max": m.max,
                "higher_is_better": m.higher_is_better,
                "default_threshold": m.threshold,
                "primary": m.primary,
            }
            for m in cls.metrics
        ],
        schema=SCHEMAS["metrics"],
    )
    return pl.concat([metrics.filter(pl.col("evaluator") != cls.id), spec])


def _user_threshold(
    thresholds: pl.DataFrame, cls: type[Evaluator], given: Mapping[str, object]
) -> pl.DataFrame:
    if "metric_threshold" not in given:
        return thresholds
    value = cls.resolve({"metric_threshold": given["metric_threshold"]})["metric_threshold"]
    row = pl.DataFrame(
        [
            {
                "evaluator": cls.id,
                "metric": cls.primary().key,
                "threshold": value,
                "source": "user",
                "created_at": dt.datetime.now(dt.UTC),
            }
        ],
        schema=SCHEMAS["thresholds"],
    )
    return pl.concat([thresholds, row])
