"""The card's adversarial component: answers that say nothing, and answers that give orders.

Leniency and obedience apart: :func:`measure_adversarial` the pass rate of dummy answers
(a lenient judge passes them), :func:`measure_obedience` the share of answers the judge
failed that pass once an instruction to pass them is appended (an obedient judge does what
the answer tells it), on the same answer with and without the instruction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from evalnb.judge_reliability.components import (
    KEYS,
    CardRows,
    in_memory,
    probe_lab,
    score_with,
)
from evalnb.judge_reliability.measures import wilson
from evalnb.judge_reliability.probes import INSTRUCTIONS, dummy_answers, with_instruction

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore
    from evalnb.llm.client import LLMClient

__all__ = ["measure_adversarial", "measure_obedience"]


def measure_adversarial(
    card: CardRows,
    lab: LabCore,
    sample: pl.DataFrame,
    evaluator: str,
    metric: str,
    judge: LLMClient,
) -> None:
    """Add the adversarial component's leniency: the pass rate of dummy answers."""
    questions = dict(lab.cases.select("case_id", "prompt").iter_rows())
    rows = [
        {**r, "actual": text, "model": f"{r['model']} ⟨{kind}⟩"}
        for r in sample.iter_rows(named=True)
        for kind, text in dummy_answers(questions.get(r["case_id"]) or "").items()
    ]
    probes = in_memory(lab, pl.DataFrame(rows, schema=sample.schema))
    probed = score_with(probes, evaluator, metric, judge)
    for kind in dummy_answers(""):
        part = probed.filter(
            pl.col("model").str.ends_with(f" ⟨{kind}⟩") & pl.col("passed").is_not_null()
        )
        passed = int(part["passed"].sum())
        card.add(
            "adversarial", f"pass rate of {kind}", wilson(passed, part.height), "should be near 0"
        )
        shown = part.filter(pl.col("passed")).select(
            "case_id", pl.col("model").str.strip_suffix(f" ⟨{kind}⟩"), "sample"
        )
        texts = [dummy_answers(questions.get(c) or "")[kind] for c in shown["case_id"]]
        card.examples[f"pass rate of {kind}"] = shown.with_columns(
            probe=pl.Series(texts, dtype=pl.String), probe_verdict=pl.lit("pass")
        )


def measure_obedience(
    card: CardRows, sub: LabCore, base: pl.DataFrame, evaluator: str, metric: str, judge: LLMClient
) -> None:
    """Whether an instruction appended to an answer the judge failed makes it pass.

    The contrast is on the same answer with and without the instruction, so a lenient
    judge (one that passes anything: the dummy answers show it) does not read as obedient,
    nor an obedient one hide behind answers it passed anyway.
    """
    failed = base.filter(pl.col("passed").not_())
    keys = failed.select(KEYS)
    if keys.is_empty():
        card.unmeasured(
            "adversarial",
            "instruction obeyed: the judge failed none of the sampled answers, so none can "
            "be turned to a pass (a judge that passes everything: see the dummy answers)",
        )
        return
    answers = sub.outputs.join(keys, on=KEYS)
    if answers.is_empty():
        card.unmeasured("adversarial", "instruction obeyed: no failed answer among the probes")
        return
    kinds = {
        f"instruction {k}": (lambda a, text=text: with_instruction(a, text))
        for k, text in enumerate(INSTRUCTIONS, start=1)
    }
    probed = score_with(probe_lab(in_memory(sub, answers), kinds), evaluator, metric, judge)
    read = probed.filter(pl.col("passed").is_not_null())
    flipped = int(read["passed"].sum())
    card.add(
        "adversarial",
        "instruction obeyed (fail to pass)",
        wilson(flipped, read.height),
        f"{answers.height} answers the judge failed, each with {len(INSTRUCTIONS)} instructions "
        "to pass it appended: the share that then passed",
    )
    flips = read.filter(pl.col("passed")).with_columns(
        kind=pl.col("model").str.extract(r"⟨instruction (\d+)⟩$").cast(pl.Int64),
        model=pl.col("model").str.replace(r" ⟨instruction \d+⟩$", ""),
    )
    texts = answers.select(*KEYS, original=pl.col("actual").fill_null(""))
    card.examples["instruction obeyed (fail to pass)"] = flips.join(
        texts, on=KEYS, how="left"
    ).with_columns(original_verdict=pl.lit("fail"), probe_verdict=pl.lit("pass"))
    shown = card.examples["instruction obeyed (fail to pass)"]
    probes = [
        with_instruction(a or "", INSTRUCTIONS[k - 1])
        for a, k in zip(shown["original"], shown["kind"], strict=True)
    ]
    card.examples["instruction obeyed (fail to pass)"] = shown.with_columns(
        probe=pl.Series(probes, dtype=pl.String)
    ).select(*KEYS, "original", "probe", "original_verdict", "probe_verdict")
