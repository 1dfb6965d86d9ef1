"""The media-blind control: a judge that looks changes its mind when the media are withheld.

The sampled rows that hold media are judged twice, with their media and with them withheld
(``media="none"``); the share whose verdict differs is the flip rate, with Wilson's
interval. A judge that reads the image flips where the image decides the verdict; one that
never flips grades the text around the image. Lit against a floor of 0.1: red when even
the interval's top is below it ("grading text": no sign it looks), amber when the estimate
is, green above. Rows the judge never saw the media of (its server takes no images) are
counted apart: where none was seen, the component says so and lights red, since every
verdict then graded a text shadow.

The bound is a judgement on samples where the media matter (a chart question, a photo's
colour); on a lab whose images are decoration a sound judge flips rarely too, and the note
says how many rows were compared so the reader can weigh it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from evalnb.evaluation.engine import evaluate
from evalnb.judge_reliability.components import KEYS, scored_rows
from evalnb.judge_reliability.measures import wilson

if TYPE_CHECKING:
    from evalnb.judge_reliability.components import CardRows
    from evalnb.lab.core import LabCore
    from evalnb.llm.client import LLMClient

__all__ = ["FLIP_FLOOR", "has_media", "measure_media_blind"]

FLIP_FLOOR = 0.1
_COMPONENT = "media"


def has_media(lab: LabCore) -> bool:
    """Whether any answer of ``lab`` has media in its case, its contexts or itself."""
    if not lab.height("media"):
        return False
    rows = lab.rows()
    columns = [c for c in ("case_media", "answer_media", "context_media") if c in rows.columns]
    return bool(
        rows.select(
            pl.any_horizontal(pl.col(c).list.len().fill_null(0) > 0 for c in columns).any()
        ).item()
    )


def measure_media_blind(
    card: CardRows, sub: LabCore, evaluator: str, metric: str, judge: LLMClient
) -> None:
    """Add the media component: the verdict flip rate with the media withheld."""
    seen = scored_rows(evaluate(sub, [evaluator], judge=judge, progress=False), evaluator, metric)
    sent = seen.with_columns(
        sent=pl.col("detail")
        .str.json_decode(pl.Struct({"media": pl.Struct({"sent": pl.List(pl.String)})}))
        .struct.field("media")
        .struct.field("sent")
        .list.len()
        .fill_null(0)
    )
    looked = sent.filter(pl.col("sent") > 0)
    if looked.is_empty():
        card.add_bounded(
            _COMPONENT,
            "rows whose media the judge saw",
            wilson(0, sent.height),
            (1.0, 1.0),
            f"none of {sent.height} rows: the judge's server took no images, so every verdict "
            "graded a text shadow of the input",
        )
        return
    blind = evaluate(sub, [evaluator], judge=judge, progress=False, media="none")
    without = scored_rows(blind, evaluator, metric).select(*KEYS, blind="passed")
    both = looked.select(*KEYS, "passed").join(without, on=KEYS).drop_nulls(["passed", "blind"])
    flips = both.filter(pl.col("passed") != pl.col("blind"))
    estimate = wilson(flips.height, both.height)
    note = f"{both.height} rows judged with and without their media; the verdict moved on {flips.height}"
    if both.height and estimate.high < FLIP_FLOOR:
        note += ": grading text, no sign the judge looks at the media"
    card.add_bounded(
        _COMPONENT, "verdict flip rate without media", estimate, (FLIP_FLOOR, 1.0), note
    )
    if flips.height:
        card.examples["verdict flip rate without media"] = flips.select(
            *KEYS, with_media="passed", without_media="blind"
        )
