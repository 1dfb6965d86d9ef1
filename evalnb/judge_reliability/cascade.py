"""Judges that cost less, with a guarantee: a cascade from a cheap judge to a strong one.

Every row goes to the first judge (tier); a row it is confident on keeps its verdict, the
others go to the next tier, and rows no tier is confident on are **abstained** (left
unscored with the reason, for a reviewer) or kept by the last tier. The confidence
thresholds are not guessed: :meth:`Cascade.calibrate` fits them on the lab's human labels so
that, with probability at least ``1 - delta``, the verdicts the cascade keeps agree with
the humans at least ``target`` of the time. This is Jung, Brahman and Choi's *Trust or
Escalate* (ICLR 2025), which guaranteed over 80 % human agreement with a Mistral-7B →
GPT-3.5 → GPT-4 cascade at almost 80 % coverage, where GPT-4 alone did not reach 80 %.

The guarantee, and what it assumes.

- **Fixed-sequence testing** per tier: a grid of thresholds fixed before any data
  (:data:`GRID`, 16 steps from 0.999 down to 0.5) is walked from the most confident end; at each
  threshold λ the rows with confidence ≥ λ are tested for H0 "agreement with humans <
  ``target``" by the exact one-sided binomial test, and the walk stops at the first λ whose
  H0 stands. A λ keeping too few rows (too few for its test to reject even if all agree,
  or under a fifth of the rows) is passed over rather than tested: the confidences alone
  tell, so every test stays exact. The last λ rejected is the tier's threshold (none rejected: the tier keeps
  nothing). Walking a fixed order needs no correction within a tier (the test at λ is only
  reached if all before it rejected); across the K tiers each test is at ``delta / K``
  (Bonferroni), so with probability ≥ 1 − δ every tier's kept rows reach ``target`` and so
  does their union. Tier k is calibrated on the labelled rows that reach it (those the
  earlier tiers escalated), as they will at scoring time.
- The labelled rows must be a **random sample** of the rows the cascade will judge (labeler
  batches drawn ``random``, or ``assume_random=True`` where that holds): the rule PPI's
  corrected pass rates follow (:mod:`evalnb.calibration.corrected`).
- **Confidence** is never the judge's self-report (miscalibrated and model-specific, as the
  paper found). ``"logprobs"``: the probability of the verdict from the judge's token
  probabilities (the evaluator's ``score_mode="logprobs"``: P(pass), so the confidence of a
  pass is P(pass) and of a fail 1 − P(pass)); the server must return them.
  ``"votes"``: ``votes`` fresh replies at ``vote_temperature`` (the reply cache bypassed),
  the share that agree with the majority — for any judge, at ``votes`` times its calls.

The cascade is a :class:`~evalnb.evaluation.base.JudgeRouter`: pass it as ``judge=`` to
:func:`evalnb.evaluate`. Each row's ``detail`` says which tier kept it (``tier``,
``tier_model``, ``confidence``) and what every tier it reached spent (``cascade``), which
:func:`~evalnb.judge_reliability.cascade_report.cascade_report` sums per tier beside the
realised agreement on labelled rows.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from evalnb.analysis.estimate import estimate as estimate_run
from evalnb.calibration.corrected import random_labels
from evalnb.evaluation.base import Context, result_frame
from evalnb.evaluation.catalog import get_evaluator
from evalnb.evaluation.engine import evaluator_params
from evalnb.judge_reliability.measures import wilson
from evalnb.llm.redact import public_url

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from evalnb.evaluation.base import Evaluator
    from evalnb.lab.core import LabCore
    from evalnb.llm.budget import Budget
    from evalnb.llm.client import LLMClient

__all__ = [
    "CONFIDENCES",
    "GRID",
    "Cascade",
    "cascade",
    "fixed_sequence_threshold",
]

CONFIDENCES = ("logprobs", "votes")
GRID: tuple[float, ...] = (
    0.999,
    0.995,
    0.99,
    0.98,
    0.97,
    0.95,
    0.93,
    0.9,
    0.85,
    0.8,
    0.75,
    0.7,
    0.65,
    0.6,
    0.55,
    0.5,
)
"""The thresholds fixed-sequence testing walks, most confident first.

Few steps, so that each test adds enough rows to the last: the walk ends at the first test
that fails, and many small steps would give chance many tries at ending it early."""
_KEY = ["case_id", "model", "sample"]
_ABSTAINED = "no tier was confident enough to keep its verdict (abstained: a reviewer's to label)"


def fixed_sequence_threshold(
    confidence: np.ndarray,
    agree: np.ndarray,
    *,
    target: float,
    delta: float,
    grid: Sequence[float] = GRID,
    min_share: float = 0.2,
) -> dict[str, Any]:
    """Return the lowest threshold of ``grid`` that fixed-sequence testing certifies.

    Parameters
    ----------
    confidence, agree
        Per labelled row: the tier's confidence, and whether its verdict matched the human's.
    target, delta
        Certify agreement ≥ ``target`` on the kept rows at level ``delta``.
    grid
        Thresholds in the order they are tested (descending).
    min_share
        A threshold keeping fewer than this share of the rows is not tested (see below).

    Returns
    -------
    dict
        ``threshold`` (``inf`` when the first test already fails: the tier keeps nothing),
        ``n`` and ``agreement`` of the rows it keeps on the labels, ``p_value`` of its test.
    """
    from scipy.stats import binom  # noqa: PLC0415 - loaded when a cascade is calibrated

    conf = np.asarray(confidence, dtype=float)
    ok = np.asarray(agree, dtype=bool)
    chosen: dict[str, Any] = {"threshold": math.inf, "n": 0, "agreement": math.nan, "p_value": 1.0}
    # A threshold keeping few rows is passed over, not tested: too few for its test to
    # reject even if all agree, or under ``min_share`` of the rows, where one unlucky row
    # would end the walk (and a tier keeping so few saves little). The skip reads the
    # confidences alone, never the agreements, so each test stays exact given them.
    least = max(math.ceil(math.log(delta) / math.log(target)), math.ceil(min_share * conf.size))
    for lam in grid:
        kept = conf >= lam
        n = int(kept.sum())
        if n < least:
            continue
        hits = int(ok[kept].sum())
        # H0: agreement < target. Reject when hits this many are unlikely at target itself.
        p = float(binom.sf(hits - 1, n, target))
        if p > delta:
            break
        chosen = {"threshold": float(lam), "n": n, "agreement": hits / n, "p_value": p}
    return chosen


@dataclass(frozen=True)
class _Judged:
    """One tier's reading of some rows: the result rows, and per row verdict and confidence."""

    result: pl.DataFrame
    verdict: np.ndarray  # float: 1 pass, 0 fail, NaN none
    confidence: np.ndarray  # NaN where the tier gave no verdict
    spent: list[dict[str, float]]  # per row: cost and tokens of this tier's calls


@dataclass(frozen=True)
class Cascade:
    """Judges tried in order, each keeping the rows it is confident on (see the module docstring).

    Build it with :func:`cascade`, then :meth:`calibrate` it on a labelled lab; pass the
    calibrated cascade as ``judge=`` to :func:`evalnb.evaluate`.
    """

    tiers: tuple[LLMClient, ...]
    target: float = 0.9
    delta: float = 0.1
    confidence: str = "logprobs"
    votes: int = 5
    vote_temperature: float = 0.7
    abstain: bool = True
    calibration: Mapping[str, Any] | None = field(default=None, compare=False)

    @property
    def identity(self) -> str:
        """The cascade's name in scoring keys: its judges, settings and calibrated thresholds."""
        names = ">".join(f"{t.model}@{public_url(str(t.base_url))}" for t in self.tiers)
        cal = self.calibration or {}
        return (
            f"cascade[{names}; target={self.target:g}, delta={self.delta:g}, "
            f"confidence={self.confidence}, thresholds={cal.get('thresholds')}, "
            f"abstain={self.abstain}]"
        )

    @property
    def strongest(self) -> LLMClient:
        """The last tier: the judge of evaluators that only use one."""
        return self.tiers[-1]

    def with_budget(self, budget: Budget) -> Cascade:
        """Return the cascade with every tier's calls under one hard ``budget``."""
        return replace(self, tiers=tuple(t.with_settings(budget=budget) for t in self.tiers))

    # -- calibration ------------------------------------------------------------------------
    def calibrate(
        self,
        lab: LabCore,
        evaluator: str,
        metric: str | None = None,
        *,
        assume_random: bool = False,
        **params: object,
    ) -> Cascade:
        """Fit each tier's threshold on ``lab``'s human labels of ``evaluator``/``metric``.

        Parameters
        ----------
        lab
            A lab with human labels of the metric (random labeler batches).
        evaluator, metric
            The judge evaluator the cascade will run, and the metric the labels are of
            (default: its primary metric).
        assume_random
            Count labels given outside labeler batches as a random sample (say so only where
            that holds).
        **params
            The evaluator's parameters, as they will be given to :func:`evalnb.evaluate`.

        Returns
        -------
        Cascade
            A copy with ``calibration``: per tier its threshold, the labelled rows that
            reached it, those it kept and their agreement, and the test's p-value.
        """
        cls = get_evaluator(evaluator)
        if not cls.judge:
            msg = f"{evaluator!r} is not an LLM judge evaluator; a cascade routes judges' calls"
            raise ValueError(msg)
        metric = metric or next(m.key for m in cls.metrics if m.primary)
        threshold, higher = _verdict_rule(lab, cls, metric)
        labels = random_labels(lab, evaluator, metric, assume_random=assume_random)
        # Uniform draws only: a stratified batch over-samples some scores, and agreement on
        # it is not agreement on the rows the cascade will judge.
        usable = labels.filter(
            pl.col("usable") & (pl.col("design").fill_null("random") == "random")
        )
        if usable.height < 10:
            msg = (
                f"calibrating a cascade needs labels of {evaluator}/{metric} drawn at random: "
                f"{usable.height} usable of {labels.height} (label a random batch, "
                "evalnb.labeler(lab, ..., strategy='random'), or pass assume_random=True "
                "where the labels were drawn at random)"
            )
            raise ValueError(msg)
        rows = lab.rows().join(usable.select(*_KEY, "human_pass"), on=_KEY, how="inner").sort(_KEY)
        _, resolved = evaluator_params([evaluator], self.tiers[0], params)
        run = replace(
            self, calibration={"metric": metric, "threshold": threshold, "higher": higher}
        )
        k = len(self.tiers)
        reach = np.ones(rows.height, dtype=bool)
        tiers = []
        human = rows["human_pass"].to_numpy().astype(bool)
        for i, client in enumerate(self.tiers):
            at = np.flatnonzero(reach)
            judged = run._judge(cls(), rows[at], resolved[evaluator], client)
            agree = (judged.verdict == human[at].astype(float)) & ~np.isnan(judged.verdict)
            conf = np.nan_to_num(judged.confidence, nan=-1.0)
            found = fixed_sequence_threshold(conf, agree, target=self.target, delta=self.delta / k)
            kept = conf >= found["threshold"]
            tiers.append(
                {
                    "tier": i,
                    "model": client.model,
                    "reached": int(at.size),
                    "kept": int(kept.sum()),
                    **found,
                }
            )
            reach[at[kept]] = False
        calibration = {
            "evaluator": evaluator,
            "metric": metric,
            "threshold": threshold,
            "higher": higher,
            "target": self.target,
            "delta": self.delta,
            "confidence": self.confidence,
            "labels": int(rows.height),
            "thresholds": [t["threshold"] for t in tiers],
            "tiers": tiers,
            "abstained": int(reach.sum()),
            "guarantee": (
                f"with probability >= {1 - self.delta:g}, the verdicts kept agree with the "
                f"reviewers at least {self.target:.0%} of the time (fixed-sequence testing, "
                f"{rows.height} random labels)"
            ),
        }
        return replace(self, calibration=calibration)

    def estimate(self, lab: LabCore, **params: object) -> pl.DataFrame:
        """Forecast what judging ``lab`` would cost, per tier, with intervals (nothing sent).

        Each tier's share of the rows comes from the calibration (the labelled rows that
        reached it, with Wilson's 95 % interval: the labels are a random sample of the
        rows), its cost from :func:`evalnb.judges.estimate` of that tier on the whole lab
        scaled by the share. Returns ``tier``, ``model``, ``share`` (``share_low``,
        ``share_high``), expected ``calls``, ``cost`` (``cost_low``, ``cost_high``; null
        without a price), and a last row: the strongest judge alone on every row.
        """
        cal = self.calibration
        if not cal or "tiers" not in cal:
            msg = "calibrate the cascade first: its tiers' shares come from the calibration"
            raise ValueError(msg)
        evaluator, labels = str(cal["evaluator"]), int(cal["labels"])
        rows = []
        for tier, client in zip(cal["tiers"], self.tiers, strict=True):
            share = wilson(int(tier["reached"]), labels)
            run = estimate_run(lab, evaluator, judge=client, **params).frame.row(0, named=True)
            cost = run["cost"]
            rows.append(
                {
                    "tier": int(tier["tier"]),
                    "model": client.model,
                    "share": share.estimate,
                    "share_low": share.low,
                    "share_high": share.high,
                    "calls": round(share.estimate * run["calls"]),
                    "cost": None if cost is None else cost * share.estimate,
                    "cost_low": None if cost is None else cost * share.low,
                    "cost_high": None if cost is None else cost * share.high,
                }
            )
        alone = estimate_run(lab, evaluator, judge=self.strongest, **params).frame.row(
            0, named=True
        )
        rows.append(
            {
                "tier": None,
                "model": f"{self.strongest.model} alone",
                "share": 1.0,
                "share_low": 1.0,
                "share_high": 1.0,
                "calls": alone["calls"],
                "cost": alone["cost"],
                "cost_low": alone["cost"],
                "cost_high": alone["cost"],
            }
        )
        return pl.DataFrame(rows, schema_overrides={"tier": pl.Int64})

    # -- scoring ----------------------------------------------------------------------------
    def judge_rows(
        self, evaluator: Evaluator, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context
    ) -> pl.DataFrame:
        """Return ``evaluator``'s result rows, each row judged by the first confident tier."""
        del ctx
        cal = self.calibration
        if not cal or "thresholds" not in cal:
            msg = (
                "the cascade is not calibrated: judge = judge.calibrate(lab, evaluator, metric) "
                "on a lab with random human labels first (its thresholds carry the guarantee)"
            )
            raise ValueError(msg)
        if evaluator.id != cal["evaluator"]:
            msg = (
                f"this cascade was calibrated for {cal['evaluator']!r}, not {evaluator.id!r}: "
                "its thresholds say nothing of another evaluator's verdicts"
            )
            raise ValueError(msg)
        n = rows.height
        chosen: list[pl.DataFrame] = []
        paths: list[list[dict[str, Any]]] = [[] for _ in range(n)]
        reach = np.ones(n, dtype=bool)
        for i, client in enumerate(self.tiers):
            at = np.flatnonzero(reach)
            if not at.size:
                break
            judged = self._judge(evaluator, rows[at], params, client)
            threshold = cal["thresholds"][i]
            last = i == len(self.tiers) - 1
            conf = np.nan_to_num(judged.confidence, nan=-1.0)
            kept = conf >= threshold
            if last and not self.abstain:
                kept = ~np.isnan(judged.verdict)
            for j, row in enumerate(at):
                paths[row].append(
                    {
                        "tier": i,
                        "model": client.model,
                        "confidence": None if conf[j] < 0 else round(float(conf[j]), 6),
                        "kept": bool(kept[j]),
                        **judged.spent[j],
                    }
                )
            if kept.any():
                mine = rows[at[kept]]
                keyed = {
                    key: paths[r] for key, r in zip(mine.select(_KEY).rows(), at[kept], strict=True)
                }
                part = judged.result.join(mine.select(_KEY), on=_KEY, how="semi")
                chosen.append(_annotated(part, keyed, i, client.model))
            reach[at[kept]] = False
        out = pl.concat(chosen) if chosen else None
        left = np.flatnonzero(reach)
        if left.size:
            values = {m.key: np.full(left.size, np.nan) for m in evaluator.metrics}
            details = [
                json.dumps(
                    {"reason": _ABSTAINED, "abstained": True, "cascade": paths[r]},
                    ensure_ascii=False,
                )
                for r in left
            ]
            abstained = result_frame(rows[left], values, details)
            out = abstained if out is None else pl.concat([out, abstained])
        if out is None:  # no rows: nothing kept, nothing abstained
            return result_frame(rows, {m.key: np.zeros(0) for m in evaluator.metrics}, [])
        return _in_order(out, rows)

    def _judge(
        self,
        evaluator: Evaluator,
        rows: pl.DataFrame,
        params: Mapping[str, object],
        client: LLMClient,
    ) -> _Judged:
        """Score ``rows`` with one tier; read each row's verdict and confidence."""
        cal = self.calibration or {}
        metric = str(cal.get("metric") or next(m.key for m in evaluator.metrics if m.primary))
        threshold = float(cal.get("threshold", 0.5))
        higher = bool(cal.get("higher", True))
        if self.confidence == "logprobs":
            if "score_mode" not in params:
                msg = (
                    f"{evaluator.id} has no score_mode parameter, so its verdicts carry no token "
                    "probabilities: use confidence='votes'"
                )
                raise ValueError(msg)
            asked = {**params, "score_mode": "logprobs"}
            result = evaluator.score(rows, asked, Context(judge=client))
            value = _metric_values(result, rows, metric)
            verdict = _verdicts(value, threshold, higher)
            p_pass = value if higher else 1.0 - value
            confidence = np.where(verdict == 1.0, p_pass, 1.0 - p_pass)
            return _Judged(result, verdict, confidence, _spent(result, rows))
        fresh = client.with_settings(
            cache=False, params={**client.params, "temperature": self.vote_temperature}
        )
        runs = [evaluator.score(rows, params, Context(judge=fresh)) for _ in range(self.votes)]
        verdicts = np.stack(
            [_verdicts(_metric_values(r, rows, metric), threshold, higher) for r in runs]
        )
        passes = np.nansum(verdicts == 1.0, axis=0)
        fails = np.nansum(verdicts == 0.0, axis=0)
        verdict = np.where(passes + fails == 0, np.nan, (passes > fails).astype(float))
        confidence = np.where(passes + fails == 0, np.nan, np.maximum(passes, fails) / self.votes)
        # the values kept are those of the first run that gave the majority's verdict
        pick = np.argmax(verdicts == verdict[None, :], axis=0)
        frames = [
            r.join(rows.select(_KEY).with_row_index("_row"), on=_KEY, how="left") for r in runs
        ]
        result = pl.concat(
            [f.filter(pl.Series(pick[f["_row"].to_numpy()] == v)) for v, f in enumerate(frames)]
        ).drop("_row")
        spent = [_sum_spent(parts) for parts in zip(*(_spent(r, rows) for r in runs), strict=True)]
        return _Judged(result, verdict, confidence, spent)


def _verdict_rule(lab: LabCore, cls: type[Evaluator], metric: str) -> tuple[float, bool]:
    """Return the metric's threshold in force in ``lab`` and its direction (its own, unscored)."""
    scored = lab.metrics.filter((pl.col("evaluator") == cls.id) & (pl.col("metric") == metric))
    if scored.height:
        spec = lab.metric_spec(cls.id, metric)
        return float(spec["threshold"]), bool(spec["higher_is_better"])
    own = next((m for m in cls.metrics if m.key == metric), None)
    if own is None:
        msg = f"{cls.id} has no metric {metric!r}; its metrics: {[m.key for m in cls.metrics]}"
        raise KeyError(msg)
    return (0.5 if own.threshold is None else float(own.threshold)), bool(own.higher_is_better)


def _metric_values(result: pl.DataFrame, rows: pl.DataFrame, metric: str) -> np.ndarray:
    """Return the metric's value per row of ``rows`` (NaN where none), in the rows' order."""
    got = result.filter(pl.col("metric") == metric).select(*_KEY, "value")
    joined = rows.select(_KEY).join(got, on=_KEY, how="left", maintain_order="left")
    return joined["value"].fill_null(np.nan).to_numpy().astype(float)


def _verdicts(value: np.ndarray, threshold: float, higher: bool) -> np.ndarray:
    passed = value >= threshold if higher else value <= threshold
    return np.where(np.isnan(value), np.nan, passed.astype(float))


def _spent(result: pl.DataFrame, rows: pl.DataFrame) -> list[dict[str, float]]:
    """Per row: the cost and tokens its judge calls took (from the primary detail)."""
    first = result.unique(_KEY, keep="first", maintain_order=True)
    details = rows.select(_KEY).join(first, on=_KEY, how="left", maintain_order="left")["detail"]
    out = []
    for text in details.to_list():
        d = json.loads(text) if text else {}
        out.append(
            {
                "cost": float(d.get("cost") or 0.0),
                "prompt_tokens": float(d.get("prompt_tokens") or 0),
                "completion_tokens": float(d.get("completion_tokens") or 0),
            }
        )
    return out


def _sum_spent(parts: Sequence[dict[str, float]]) -> dict[str, float]:
    return {k: sum(p[k] for p in parts) for k in ("cost", "prompt_tokens", "completion_tokens")}


def _annotated(
    result: pl.DataFrame,
    paths: Mapping[tuple[Any, ...], list[dict[str, Any]]],
    tier: int,
    model: str,
) -> pl.DataFrame:
    """Add to each result's detail the tier that kept it, its confidence and the row's path."""
    details = []
    for key, text in zip(result.select(_KEY).rows(), result["detail"].to_list(), strict=True):
        d = json.loads(text) if text else {}
        path = paths[key]
        d.update(tier=tier, tier_model=model, confidence=path[-1]["confidence"], cascade=path)
        details.append(json.dumps(d, ensure_ascii=False))
    return result.with_columns(detail=pl.Series(details, dtype=pl.String))


def _in_order(result: pl.DataFrame, rows: pl.DataFrame) -> pl.DataFrame:
    order = rows.select(_KEY).with_row_index("_row")
    return (
        result.join(order, on=_KEY, how="left")
        .sort("_row", "metric", maintain_order=True)
        .drop("_row")
    )


def cascade(
    tiers: Sequence[LLMClient],
    *,
    target: float = 0.9,
    delta: float = 0.1,
    confidence: str = "logprobs",
    votes: int = 5,
    vote_temperature: float = 0.7,
    abstain: bool = True,
) -> Cascade:
    """Return a cascade of judges, cheapest first, to calibrate (see :class:`Cascade`).

    Parameters
    ----------
    tiers
        The judges in the order they are asked (a local judge, then a strong one…).
    target, delta
        The guarantee: with probability ≥ ``1 - delta``, agreement with humans ≥ ``target``
        on the verdicts kept.
    confidence
        ``"logprobs"`` (the verdict's token probability; the server must give them) or
        ``"votes"`` (the majority's share of ``votes`` fresh replies at ``vote_temperature``).
    abstain
        Leave rows no tier is confident on unscored (the default), or keep the last tier's
        verdict on them (the guarantee then covers only the confident rows).
    """
    if len(tiers) < 1:
        msg = "a cascade needs at least one judge"
        raise ValueError(msg)
    if not (0 < target < 1 and 0 < delta < 1):
        msg = f"target and delta are probabilities in (0, 1); got target={target}, delta={delta}"
        raise ValueError(msg)
    if confidence not in CONFIDENCES:
        msg = f"confidence: expected one of {CONFIDENCES}; got {confidence!r}"
        raise ValueError(msg)
    if isinstance(votes, bool) or not isinstance(votes, int) or votes < 3 or votes % 2 == 0:
        msg = f"votes: an odd number of at least 3 (a majority needs one); got {votes!r}"
        raise ValueError(msg)
    return Cascade(
        tuple(tiers),
        target=target,
        delta=delta,
        confidence=confidence,
        votes=votes,
        vote_temperature=vote_temperature,
        abstain=abstain,
    )
