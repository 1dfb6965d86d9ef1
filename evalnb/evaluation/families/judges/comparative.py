"""The seed's comparative judge (lmms-eval, seed 004): two answers to one question, side by side.

:func:`evalnb.judges.pairwise` asks it about two models' answers in both orders; the answer judged
is the row's, the other its ``other_answer`` field (:func:`other_answer_extra`).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, ClassVar

from evalnb.evaluation.base import MetricSpec, Param, register, threshold_param
from evalnb.evaluation.families.judges.framework import JudgeEvaluator, judge_params
from evalnb.evaluation.families.judges.lmms_params import (
    CUSTOM_PROMPT,
    SCORE_HIGH,
    SCORE_LOW,
    lmms_fields,
    score_range,
)
from evalnb.evaluation.families.judges.prompts import (
    Messages,
    judge_conversation,
    score_property,
)
from evalnb.llm.parsed import Parsed, Trusted, fill, neutralise
from evalnb.llm.reader import read_object

if TYPE_CHECKING:
    from collections.abc import Mapping

    from evalnb.evaluation.base import Context

__all__ = [
    "COMPARATIVE_PROMPT",
    "ComparativeJudge",
    "build_comparative",
    "other_answer_extra",
    "parse_comparative",
]

COMPARATIVE_PROMPT = (
    "You compare two assistants' answers to the same question.\n\n{context_section}"
    "[Question]\n{question}\n\n[Answer 1]\n{response1}\n\n[Answer 2]\n{response2}\n\n"
    "{instruction}\nOn the first line write only the two scores separated by a space (answer 1 "
    "first); then explain briefly."
)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def build_comparative(
    question: str,
    response1: str,
    response2: str,
    *,
    context: str | None = None,
    score_range: tuple[int, int] = (1, 10),
    custom_prompt: str | None = None,
    instruction: str | None = None,
    **fields: Any,  # noqa: ANN401
) -> str:
    """Build a prompt asking for one score per answer on the first line."""
    lo, hi = score_range
    values = {
        "question": question,
        "response1": response1,
        "response2": response2,
        "context": context or "",
        "context_section": Trusted(f"[Context]\n{neutralise(context)}\n\n") if context else "",
        "instruction": instruction or f"Score each answer from {lo} to {hi} (higher is better).",
        **fields,
    }
    return fill(custom_prompt or COMPARATIVE_PROMPT, values)


def parse_comparative(text: str | None) -> Parsed:
    """Two scores from the first line ("8 7", "8.5, 7", "9; 6"); else a parse failure.

    Exactly two numbers: the seed takes the first two of any, which reads "9/10 6/10" as
    9 and 10.
    """
    raw = text or ""
    first = raw.strip().splitlines()[0] if raw.strip() else ""
    numbers = _NUMBER.findall(first.replace(",", " ").replace(";", " "))
    if len(numbers) != 2:
        return Parsed(None, False, raw, f"{len(numbers)} numbers on the first line, expected 2")
    return Parsed((float(numbers[0]), float(numbers[1])), True, raw)


@register
class ComparativeJudge(JudgeEvaluator):
    """Two answers to the same question scored side by side (the seed's comparative judge).

    The answer judged is the row's; the other is the row's ``other_answer`` field (an extra
    field of the output or the case). :func:`evalnb.judges.pairwise` fills it from a second model
    and asks in both orders.
    """

    id = "comparative_judge"
    reply_tokens: ClassVar[int] = 16
    title = "Comparative judge"
    domain = "generation"
    description = "The judge scores the answer and another one to the same question, side by side."
    requires = ("prompt", "actual")
    metrics = (
        MetricSpec(
            "comparative_judge",
            "Win",
            "1 when the answer scores higher, 0.5 a tie, else 0",
            primary=True,
        ),
        MetricSpec("comparative_score", "Score", "the answer's score, scaled to 0…1"),
        MetricSpec("comparative_score_other", "Other's score", "the other answer's score, 0…1"),
    )
    params: ClassVar[tuple[Param, ...]] = (
        *judge_params(),
        SCORE_LOW,
        SCORE_HIGH,
        Param("instruction", str, default="", description="what to judge on (default: overall)"),
        CUSTOM_PROMPT,
        threshold_param(0.5, "comparative_judge"),
    )

    def prompts(self, row: dict[str, Any], params: Mapping[str, object]) -> list[Messages]:
        """One conversation: the row's answer first, the other second."""
        fields = lmms_fields(row)
        other = fields.get("other_answer")
        if not row.get("actual") or not other:
            return []
        custom = str(params.get("custom_prompt") or "")
        text = build_comparative(
            fields["question"],
            fields["prediction"],
            str(other),
            context=fields["context"] or None,
            score_range=score_range(params),
            custom_prompt=custom or None,
            instruction=str(params.get("instruction") or "") or None,
        )
        return [judge_conversation(text)]

    def reply_schema(self, params: Mapping[str, object]) -> dict[str, Any] | None:
        """Return ``{"score_1": <in range>, "score_2": <in range>}``."""
        low, high = score_range(params)
        one = score_property(low, high)
        return {
            "type": "object",
            "properties": {"score_1": one, "score_2": one},
            "required": ["score_1", "score_2"],
            "additionalProperties": False,
        }

    def format_hint(self, params: Mapping[str, object]) -> str:
        """Ask for both scores as one JSON object."""
        low, high = score_range(params)
        return (
            f'Reply with one JSON object and nothing else: {{"score_1": <{low} to {high}, '
            f'answer 1>, "score_2": <{low} to {high}, answer 2>}}'
        )

    def parse(
        self, text: str | None, params: Mapping[str, object], *, contract_json: bool = False
    ) -> Parsed:
        """Both scores: the JSON object, or the seed's first line ``8 7``; in range."""
        low, high = score_range(params)
        obj = read_object(text, self.reply_schema(params))
        if obj.ok:
            return Parsed(
                (float(obj.value["score_1"]), float(obj.value["score_2"])),
                True,
                obj.raw,
                salvages=obj.salvages,
            )
        if contract_json:
            return obj
        first_line = parse_comparative(text)
        if not first_line.ok:
            return first_line
        a, b = first_line.value
        if not (low <= a <= high and low <= b <= high):
            return Parsed(None, False, first_line.raw, f"scores {a:g} {b:g} outside {low}…{high}")
        return first_line

    def read(
        self, replies: list[Parsed], row: dict[str, Any], params: Mapping[str, object], ctx: Context
    ) -> dict[str, float | None] | str:
        """Win (1 / 0.5 / 0) and both scores scaled to 0…1."""
        del row, ctx
        low, high = score_range(params)
        a, b = replies[0].value
        win = 1.0 if a > b else 0.5 if a == b else 0.0
        return {
            "comparative_judge": win,
            "comparative_score": (a - low) / (high - low),
            "comparative_score_other": (b - low) / (high - low),
        }


def other_answer_extra(extra: str | None, other: str) -> str:
    """Return an output's ``extra`` JSON with ``other_answer`` set (for :class:`ComparativeJudge`)."""
    data = json.loads(extra) if extra else {}
    if not isinstance(data, dict):
        data = {}
    return json.dumps({**data, "other_answer": other}, ensure_ascii=False)
