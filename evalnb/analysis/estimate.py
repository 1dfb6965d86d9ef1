"""What a judge run will cost, before any of its calls: calls, tokens, money and time.

:func:`estimate` builds every conversation the judge evaluators would send (the same
prompts, system message, format hint and contract as the run), counts their prompt tokens
as the judge's server will (:mod:`evalnb.llm.tokens`), leaves out the calls the reply cache
already holds, and prices the rest. Reply tokens come from the lab's earlier runs of the
same evaluator where there are some, else from the evaluator's typical reply length;
repair turns are not foreseen (they are counted when they happen). Money comes from the
client's ``prices`` or :data:`PRICES` (per model; extend it), time from the endpoint's
measured pace (the probe's calls), with the client's concurrency.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from evalnb.evaluation.engine import evaluator_params
from evalnb.evaluation.families.judges.framework import JudgeEvaluator
from evalnb.lab.core import with_cases
from evalnb.llm.reply_cache import ReplyCache, reply_key
from evalnb.llm.tokens import token_counter

if TYPE_CHECKING:
    from collections.abc import Sequence

    from evalnb.lab.core import LabCore
    from evalnb.llm.client import LLMClient

__all__ = ["PRICES", "Estimate", "estimate"]

PRICES: dict[str, tuple[float, float]] = {}
"""US dollars per million (prompt, completion) tokens by model name; add your models'.
No vendor's prices are shipped: they change, and a stale price is worse than none."""


@dataclass(frozen=True)
class Estimate:
    """One row per judge evaluator: calls (and cached ones), tokens, cost, seconds.

    Attributes
    ----------
    frame
        ``evaluator``, ``contract``, ``calls``, ``cached``, ``prompt_tokens``,
        ``completion_tokens``, ``cost`` (null: no price known), ``seconds``, ``tokenizer``.
    """

    frame: pl.DataFrame

    @property
    def calls(self) -> int:
        """Calls the run will send (cached ones excluded)."""
        return int(self.frame["calls"].sum())

    @property
    def prompt_tokens(self) -> int:
        """Prompt tokens of those calls."""
        return int(self.frame["prompt_tokens"].sum())

    @property
    def seconds(self) -> float:
        """Time the calls should take at the endpoint's measured pace."""
        return float(self.frame["seconds"].sum())

    def __str__(self) -> str:
        costs = self.frame["cost"].drop_nulls()
        cost = (
            f"${costs.sum():,.2f}" if len(costs) == self.frame.height else "cost unknown (no price)"
        )
        return (
            f"{self.calls:,} judge calls ({int(self.frame['cached'].sum()):,} cached), "
            f"{self.prompt_tokens:,} prompt + {int(self.frame['completion_tokens'].sum()):,} "
            f"completion tokens, {cost}, about {_duration(self.seconds)}"
        )

    def _repr_html_(self) -> str:
        import html  # noqa: PLC0415

        return f"<p>{html.escape(str(self))}</p>" + self.frame._repr_html_()


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _measured_reply_tokens(lab: LabCore, evaluator: str) -> float | None:
    scores = lab.scores.filter(pl.col("evaluator") == evaluator)
    if scores.is_empty():
        return None
    tokens = (
        scores.select(pl.col("detail").str.json_path_match("$.completion_tokens").cast(pl.Float64))
        .to_series()
        .drop_nulls()
    )
    positive = tokens.filter(tokens > 0)
    return float(positive.mean()) if len(positive) else None  # type: ignore[arg-type]


def estimate(
    lab: LabCore,
    evaluators: str | Sequence[object],
    *,
    judge: LLMClient,
    **params: object,
) -> Estimate:
    """Estimate a judge run of ``evaluators`` on ``lab`` before sending any of its calls.

    Parameters
    ----------
    lab
        The lab the run would score (every output, as :func:`evalnb.evaluate` does).
    evaluators, params
        As for :func:`evalnb.evaluate`; evaluators that use no judge cost nothing here.
    judge
        The client the run would use. It is probed for its format contract if it was not
        yet (a few tiny calls, once per endpoint and model): the contract decides the prompts.

    Returns
    -------
    Estimate
        Per evaluator: calls, cached calls, prompt and completion tokens, cost, seconds.
    """
    classes, resolved = evaluator_params(evaluators, judge, params)
    rows = with_cases(lab.outputs, lab.cases)
    counter = token_counter(judge)
    price = judge.prices or PRICES.get(judge.model)
    pace = judge.capabilities().seconds_per_call
    path = judge.cache_path()
    records = []
    for cls in classes:
        if not issubclass(cls, JudgeEvaluator):  # fact_check's agent loop cannot be foreseen
            continue
        evaluator = cls()
        chosen = resolved[cls.id]
        kind = evaluator.contract_for(judge, chosen)
        request = evaluator.request_params(judge, chosen, kind)
        conversations = [c for a in evaluator.conversations(rows, chosen, kind) for c in a]
        body = {**judge.params, **request}
        keys = [reply_key(judge.cache_endpoint, judge.model, c, body) for c in conversations]
        cached: set[str] = set()
        if path is not None and path.exists() and keys:
            cache = ReplyCache(path)
            try:
                cached = set(cache.get(sorted(set(keys))))
            finally:
                cache.close()
        todo = [c for c, k in zip(conversations, keys, strict=True) if k not in cached]
        prompt = sum(counter.conversations(todo))
        per_reply = _measured_reply_tokens(lab, cls.id) or float(cls.reply_tokens)
        completion = round(per_reply * len(todo))
        cost = (prompt * price[0] + completion * price[1]) / 1e6 if price else None
        seconds = len(todo) * (pace or 1.0) / max(1, judge.concurrency)
        records.append(
            {
                "evaluator": cls.id,
                "contract": kind,
                "calls": len(todo),
                "cached": len(conversations) - len(todo),
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "cost": cost,
                "seconds": seconds,
                "tokenizer": counter.method,
                "params": json.dumps(
                    {k: v for k, v in chosen.items() if k != "judge_examples"}, default=str
                )[:500],
            }
        )
    schema = {
        "evaluator": pl.String,
        "contract": pl.String,
        "calls": pl.Int64,
        "cached": pl.Int64,
        "prompt_tokens": pl.Int64,
        "completion_tokens": pl.Int64,
        "cost": pl.Float64,
        "seconds": pl.Float64,
        "tokenizer": pl.String,
        "params": pl.String,
    }
    return Estimate(pl.DataFrame(records, schema=schema))
