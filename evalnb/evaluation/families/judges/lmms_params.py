"""What the lmms-eval judges (seed 004) share: their parameters and the row's fields by the seed's names.

Used by :mod:`~evalnb.evaluation.families.judges.lmms_judges` (one answer judged) and
:mod:`~evalnb.evaluation.families.judges.comparative` (two answers side by side).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalnb.evaluation.base import Param
from evalnb.evaluation.families.judges.prompts import require_placeholder, template_fields
from evalnb.llm.parsed import Trusted, fill, neutralise

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "CUSTOM_PROMPT",
    "OUTPUT_FORMATS",
    "SCORE_HIGH",
    "SCORE_LOW",
    "SCORE_MODE",
    "custom_or",
    "lmms_fields",
    "score_range",
]

OUTPUT_FORMATS = {"0/1": ("1", "0"), "yes/no": ("yes", "no")}
CUSTOM_PROMPT = Param(
    "custom_prompt",
    str,
    default="",
    description=(
        "your prompt template; fields {question}, {answer} (the reference), {prediction}, "
        "H2O's {INPUT} / {EXPECTED_OUTPUT} / {ACTUAL_OUTPUT} / {CONTEXT} and any field of the row"
    ),
)
SCORE_MODE = Param(
    "score_mode",
    str,
    default="parsed",
    choices=("parsed", "logprobs"),
    description=(
        "'parsed': the value read from the reply; 'logprobs': P(pass), or the expected score, "
        "from the judge's token probabilities (the server must return them)"
    ),
)


def lmms_fields(row: dict[str, Any]) -> dict[str, Any]:
    """Return the row's template fields under the seed's names (``answer``: the reference)."""
    fields = template_fields(row)
    reference = fields["EXPECTED_OUTPUT"]
    return {
        **fields,
        "answer": reference,
        "prediction": fields["ACTUAL_OUTPUT"],
        "pred": fields["ACTUAL_OUTPUT"],
        "reference_section": Trusted(f"[Reference answer]\n{neutralise(reference)}\n\n")
        if reference
        else "",
    }


def custom_or(
    template: str, row: dict[str, Any], params: Mapping[str, object], **extra: object
) -> str:
    """Fill the user's ``custom_prompt`` (which must show ``{prediction}``), else ``template``."""
    custom = str(params.get("custom_prompt") or "")
    if custom:
        require_placeholder(custom, "custom_prompt", "{prediction}")
    return fill(custom or template, {**lmms_fields(row), **extra})


def score_range(params: Mapping[str, object]) -> tuple[int, int]:
    """Return ``(score_low, score_high)``, refusing a range whose low end is not below its high."""
    low, high = int(params["score_low"]), int(params["score_high"])  # type: ignore[call-overload]
    if low >= high:
        msg = f"score_low={low} must be below score_high={high}"
        raise ValueError(msg)
    return low, high


SCORE_LOW = Param("score_low", int, default=1, low=0, high=99, description="the lowest score")
SCORE_HIGH = Param("score_high", int, default=10, low=1, high=100, description="the highest score")
