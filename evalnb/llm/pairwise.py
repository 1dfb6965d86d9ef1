"""Pairwise comparison of two models' answers by an LLM judge, asked in both positions.

Asking with each model shown first measures the judge's position stability; the judge's
other bookkeeping lives with its concern (:mod:`evalnb.analysis.judge_costs` reports parse
failures and cost, :mod:`evalnb.calibration.judge_agreement` measures agreement with humans).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from evalnb.llm.judge import build_comparative, parse_comparative

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore
    from evalnb.llm.client import LLMClient

__all__ = ["pairwise"]


def pairwise(
    lab: LabCore,
    model_a: str,
    model_b: str,
    judge: LLMClient,
    *,
    score_range: tuple[int, int] = (1, 10),
    instruction: str | None = None,
) -> pl.DataFrame:
    """Compare two models' answers case by case, asking the judge in both orders.

    Each case is judged with A shown first and with B shown first; ``score_a``/``score_b``
    average the two orders, ``winner`` is ``a``, ``b`` or ``tie``, and ``consistent`` says
    whether both orders picked the same winner — the judge's position stability. A reply
    that cannot be read leaves the case without scores (``parse_failed``).
    """
    keys = ["case_id", "sample"]
    a = lab.outputs.filter(pl.col("model") == model_a).select(*keys, a="actual")
    b = lab.outputs.filter(pl.col("model") == model_b).select(*keys, b="actual")
    both = a.join(b, on=keys).join(lab.cases.select("case_id", "prompt"), on="case_id").sort(keys)
    if both.is_empty():
        msg = f"no case answered by both {model_a!r} and {model_b!r}; models: {lab.models}"
        raise ValueError(msg)
    asks = []
    for q, ra, rb in both.select("prompt", "a", "b").iter_rows():
        for first, second in ((ra, rb), (rb, ra)):
            text = build_comparative(
                q or "", first or "", second or "", score_range=score_range, instruction=instruction
            )
            asks.append([{"role": "user", "content": text}])
    replies = judge.chat_many(asks, progress=False)
    rows: list[dict[str, Any]] = []
    for i, (case_id, sample) in enumerate(both.select(keys).iter_rows()):
        ab, ba = (
            parse_comparative(r.content) if r.error is None else None
            for r in replies[2 * i : 2 * i + 2]
        )
        raw = [
            r.content if r.error is None else f"error: {r.error}"
            for r in replies[2 * i : 2 * i + 2]
        ]
        if ab is None or ba is None or not ab.ok or not ba.ok:
            rows.append({"case_id": case_id, "sample": sample, "parse_failed": True, "raw": raw})
            continue
        (a1, b1), (b2, a2) = ab.value, ba.value
        w1 = "a" if a1 > b1 else "b" if b1 > a1 else "tie"
        w2 = "a" if a2 > b2 else "b" if b2 > a2 else "tie"
        sa, sb = (a1 + a2) / 2, (b1 + b2) / 2
        rows.append(
            {
                "case_id": case_id,
                "sample": sample,
                "score_a": sa,
                "score_b": sb,
                "winner": "a" if sa > sb else "b" if sb > sa else "tie",
                "winner_a_first": w1,
                "winner_b_first": w2,
                "consistent": w1 == w2,
                "parse_failed": False,
                "raw": raw,
            }
        )
    schema = pl.Schema(
        dict[str, pl.DataType](
            {
                "case_id": pl.String(),
                "sample": pl.Int64(),
                "score_a": pl.Float64(),
                "score_b": pl.Float64(),
                "winner": pl.String(),
                "winner_a_first": pl.String(),
                "winner_b_first": pl.String(),
                "consistent": pl.Boolean(),
                "parse_failed": pl.Boolean(),
                "raw": pl.List(pl.String()),
            }
        )
    )
    return pl.DataFrame(rows, schema=schema).with_columns(
        model_a=pl.lit(model_a), model_b=pl.lit(model_b)
    )
