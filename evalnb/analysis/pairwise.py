"""Pairwise comparison of two models' answers by an LLM judge, asked in both positions.

Asking with each model shown first measures the judge's position stability. The calls are
:class:`~evalnb.evaluation.families.judges.comparative.ComparativeJudge`'s: batched,
cached, resumable, under the format contract negotiated with the judge, read tolerantly
and repaired once. The judge's other bookkeeping lives with its concern
(:mod:`evalnb.analysis.judge_costs` reports parse failures and cost,
:mod:`evalnb.calibration.judge_agreement` measures agreement with humans).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import polars as pl

from evalnb.evaluation.base import Context, JudgeRouter
from evalnb.evaluation.families.judges.comparative import ComparativeJudge, other_answer_extra
from evalnb.lab.core import with_cases
from evalnb.lab.media_rows import with_media

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore
    from evalnb.llm.client import LLMClient

__all__ = ["pairwise"]

_SCHEMA = pl.Schema(
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
        "contract": pl.String(),
        "raw": pl.List(pl.String()),
    }
)


def pairwise(
    lab: LabCore,
    model_a: str,
    model_b: str,
    judge: LLMClient | JudgeRouter,
    *,
    score_range: tuple[int, int] = (1, 10),
    instruction: str | None = None,
    contract: str = "auto",
) -> pl.DataFrame:
    """Compare two models' answers case by case, asking the judge in both orders.

    Each case is judged with A shown first and with B shown first; ``score_a``/``score_b``
    average the two orders, ``winner`` is ``a``, ``b`` or ``tie``, and ``consistent`` says
    whether both orders picked the same winner — the judge's position stability. A reply
    that cannot be read (after its repair turn) leaves the case without scores
    (``parse_failed``); ``contract`` is the reply format the judge was held to. ``judge``
    may be a cascade calibrated on labels of ``comparative_judge``
    (:func:`evalnb.cascade`), which then picks a tier per order of each pair.
    """
    keys = ["case_id", "sample"]
    outputs = lab.outputs
    a = outputs.filter(pl.col("model") == model_a)
    b = outputs.filter(pl.col("model") == model_b).select(*keys, other="actual")
    both = a.join(b, on=keys).sort(keys)
    if both.is_empty():
        msg = f"no case answered by both {model_a!r} and {model_b!r}; models: {lab.models}"
        raise ValueError(msg)
    a_first = both.with_columns(
        extra=pl.struct("extra", "other").map_elements(
            lambda s: other_answer_extra(s["extra"], s["other"] or ""), return_dtype=pl.String
        )
    )
    b_first = both.with_columns(
        actual=pl.col("other"),
        extra=pl.struct("extra", "actual").map_elements(
            lambda s: other_answer_extra(s["extra"], s["actual"] or ""), return_dtype=pl.String
        ),
        sample=pl.col("sample") + 1_000_000,  # the swapped order, told apart in the result
    )
    rows = with_cases(pl.concat([a_first, b_first]).drop("other"), lab.cases)
    if lab.height("media"):  # the case's pictures go to the judge as in evaluate
        rows = with_media(lab, rows)
    evaluator = ComparativeJudge()
    params = ComparativeJudge.resolve(
        {
            "judge_model": judge.identity if isinstance(judge, JudgeRouter) else judge.model,
            "score_low": score_range[0],
            "score_high": score_range[1],
            "instruction": instruction or "",
            "contract": contract,
        }
    )
    if isinstance(judge, JudgeRouter):  # a cascade calibrated for the comparative judge
        result = judge.judge_rows(evaluator, rows, params, Context(judge=judge.strongest))
    else:
        result = evaluator.score(rows, params, Context(judge=judge))
    wide = result.pivot(on="metric", index=["case_id", "sample"], values="value").join(
        result.filter(pl.col("metric") == "comparative_judge").select(
            "case_id", "sample", "detail"
        ),
        on=["case_id", "sample"],
    )
    by_key = {(r["case_id"], r["sample"]): r for r in wide.iter_rows(named=True)}
    lo, hi = score_range
    out: list[dict[str, Any]] = []
    for case_id, sample in both.select(keys).iter_rows():
        ab, ba = by_key[(case_id, sample)], by_key[(case_id, sample + 1_000_000)]
        details = [json.loads(r["detail"] or "{}") for r in (ab, ba)]
        raw = [d.get("raw", [d.get("reason", "")])[0] for d in details]
        contract_used = details[0].get("contract") or details[1].get("contract")
        if ab["comparative_judge"] is None or ba["comparative_judge"] is None:
            out.append(
                {
                    **dict(zip(keys, (case_id, sample), strict=True)),
                    "parse_failed": True,
                    "contract": contract_used,
                    "raw": raw,
                }
            )
            continue
        a1 = ab["comparative_score"] * (hi - lo) + lo
        b1 = ab["comparative_score_other"] * (hi - lo) + lo
        b2 = ba["comparative_score"] * (hi - lo) + lo
        a2 = ba["comparative_score_other"] * (hi - lo) + lo
        w1 = "a" if a1 > b1 else "b" if b1 > a1 else "tie"
        w2 = "a" if a2 > b2 else "b" if b2 > a2 else "tie"
        sa, sb = (a1 + a2) / 2, (b1 + b2) / 2
        out.append(
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
                "contract": contract_used,
                "raw": raw,
            }
        )
    return pl.DataFrame(out, schema=_SCHEMA).with_columns(
        model_a=pl.lit(model_a), model_b=pl.lit(model_b)
    )
