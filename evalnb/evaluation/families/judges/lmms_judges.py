"""The lmms-eval judge family (seed 004) as evaluators: binary, correctness, score, rubric.

The seed's prompt builders and parsers, on the shared judge machinery (batched, cached,
resumable, costed, under the negotiated format contract, read tolerantly, one repair turn).
What differs from the seed is deliberate: its parsers default to the negative class or the
minimum score and clamp out-of-range scores; here an unreadable reply or a score outside the
range is a failure with its reason, never a value.

The seed names its template fields ``question``, ``answer`` (the reference answer) and
``prediction`` / ``pred`` (the answer judged); a ``custom_prompt`` may use those, H2O's
(``{INPUT}``, ``{EXPECTED_OUTPUT}``, ``{ACTUAL_OUTPUT}``, ``{CONTEXT}``) and any
user-defined field of the row.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, ClassVar

from evalnb.evaluation.base import MetricSpec, Param, register, threshold_param
from evalnb.evaluation.families.judges.framework import JudgeEvaluator, judge_params
from evalnb.evaluation.families.judges.lmms_params import (
    CUSTOM_PROMPT,
    OUTPUT_FORMATS,
    SCORE_HIGH,
    SCORE_LOW,
    SCORE_MODE,
    custom_or,
    score_range,
)
from evalnb.evaluation.families.judges.prompts import (
    Messages,
    judge_conversation,
    score_property,
    score_schema,
    verdict_hint,
    verdict_schema,
)
from evalnb.llm.probabilities import score_expectation, verdict_probability
from evalnb.llm.reader import read_object, read_score, read_verdict

if TYPE_CHECKING:
    from collections.abc import Mapping

    from evalnb.evaluation.base import Context
    from evalnb.llm.client import ChatResult
    from evalnb.llm.parsed import Parsed

__all__ = [
    "BinaryJudge",
    "CorrectnessJudge",
    "RubricJudge",
    "ScoreJudge",
    "rubric_judge",
]

_BINARY = (
    "Decide whether the response answers the question correctly.\n\n[Question]\n{question}\n\n"
    "{reference_section}[Response]\n<response>\n{prediction}\n</response>\n\n"
    "Reply {positive} if the response is correct and {negative} if it is not, with nothing else."
)
_CORRECTNESS = (
    "Decide whether the solution reaches the same final answer as the reference. Judge the "
    "meaning, or the mathematics: equivalent forms are the same answer whatever their "
    "formatting, notation, order or wording (for instance \\boxed{{x = \\pm 4}} and "
    '"x = 4 or x = -4" are the same). Ignore how the solution was reached.\n\n'
    "[Question]\n{question}\n\n[Reference answer]\n{answer}\n\n[Solution]\n<solution>\n{prediction}\n</solution>\n\n"
    "Reply {positive} if the final answers agree and {negative} if they do not, with nothing else."
)
_SCORE = (
    "Rate the response to the question for {criteria}.\n\n[Question]\n{question}\n\n"
    "{reference_section}[Response]\n<response>\n{prediction}\n</response>\n\n"
    "Give one whole number from {low} to {high} ({high} is best), with nothing else."
)
_RUBRIC = (
    "Rate the response to the question on each criterion below, from {low} to {high} "
    "({high} is best).\n\n[Criteria]\n{criteria}\n\n[Question]\n{question}\n\n"
    "{reference_section}[Response]\n<response>\n{prediction}\n</response>\n\n"
    "Reply with one JSON object mapping each criterion's name to its score, and nothing else."
)


class _VerdictJudge(JudgeEvaluator):
    """A two-class verdict: 1.0 when the positive class is read, 0.0 for the negative."""

    answer_field: ClassVar[str | None] = "verdict"
    reply_tokens: ClassVar[int] = 8
    template: ClassVar[str]

    def classes(self, params: Mapping[str, object]) -> dict[str, float]:
        """Return the class words of ``output_format`` and their values."""
        positive, negative = OUTPUT_FORMATS[str(params["output_format"])]
        return {positive: 1.0, negative: 0.0}

    def prompts(self, row: dict[str, Any], params: Mapping[str, object]) -> list[Messages]:
        """One conversation: the seed's template (or yours) filled from the row."""
        if not row.get("actual") or any(not row.get(c) for c in self.requires):
            return []
        positive, negative = OUTPUT_FORMATS[str(params["output_format"])]
        text = custom_or(self.template, row, params, positive=positive, negative=negative)
        return [judge_conversation(text)]

    def reply_schema(self, params: Mapping[str, object]) -> dict[str, Any] | None:
        """Return ``{"verdict": <positive> | <negative>}``."""
        return verdict_schema(tuple(self.classes(params)))

    def format_hint(self, params: Mapping[str, object]) -> str:
        """Ask for the class word as a JSON object's ``verdict``."""
        return verdict_hint(tuple(self.classes(params)))

    def parse(
        self, text: str | None, params: Mapping[str, object], *, contract_json: bool = False
    ) -> Parsed:
        """Read the verdict tolerantly (synonyms: yes/true/1 and no/false/0, pass/fail)."""
        return read_verdict(text, self.classes(params), passing=1.0, contract_json=contract_json)

    def probability(
        self, result: ChatResult, text: str, params: Mapping[str, object], *, contract_json: bool
    ) -> float | None:
        """P(pass) at the verdict's token."""
        field = "verdict" if contract_json else None
        return verdict_probability(result.logprobs, text, self.classes(params), 1.0, field=field)

    def read(
        self, replies: list[Parsed], row: dict[str, Any], params: Mapping[str, object], ctx: Context
    ) -> dict[str, float | None] | str:
        """Return the verdict (1/0), or P(pass) under ``score_mode="logprobs"``."""
        del row, ctx
        reply = replies[0]
        if params.get("score_mode") == "logprobs":
            if reply.probability is None:
                return "no probability at the verdict's token (logprobs missing or not aligned)"
            return {self.id: reply.probability}
        return {self.id: float(reply.value)}


@register
class BinaryJudge(_VerdictJudge):
    """The seed's binary judge: is the response correct? (0/1 or yes/no)."""

    id = "binary_judge"
    title = "Binary judge"
    domain = "generation"
    description = (
        "The judge says whether the response is correct (lmms-eval's binary judge; "
        "reference answer shown when the case has one)."
    )
    requires = ("prompt", "actual")
    metrics = (
        MetricSpec("binary_judge", "Binary judge", "1 when judged correct, else 0", primary=True),
    )
    template = _BINARY
    params: ClassVar[tuple[Param, ...]] = (
        *judge_params(),
        Param(
            "output_format",
            str,
            default="0/1",
            choices=tuple(OUTPUT_FORMATS),
            description="the class words",
        ),
        CUSTOM_PROMPT,
        SCORE_MODE,
        threshold_param(0.5, "binary_judge"),
    )


@register
class CorrectnessJudge(_VerdictJudge):
    """The seed's correctness judge: the same final answer, whatever the formatting."""

    id = "correctness_judge"
    title = "Correctness judge"
    domain = "generation"
    description = (
        "The judge says whether the answer's final result equals the reference's in meaning or "
        "mathematically, ignoring formatting (lmms-eval's correctness judge)."
    )
    requires = ("prompt", "expected", "actual")
    metrics = (
        MetricSpec(
            "correctness_judge", "Correctness judge", "1 when the final answers agree", primary=True
        ),
    )
    template = _CORRECTNESS
    params: ClassVar[tuple[Param, ...]] = (
        *judge_params(),
        Param(
            "output_format",
            str,
            default="yes/no",
            choices=tuple(OUTPUT_FORMATS),
            description="the class words",
        ),
        SCORE_MODE,
        threshold_param(0.5, "correctness_judge"),
    )


@register
class ScoreJudge(JudgeEvaluator):
    """The seed's score judge: one score in a range, checked, never clamped."""

    id = "score_judge"
    title = "Score judge"
    domain = "generation"
    description = (
        "The judge scores the response from score_low to score_high; a score outside the "
        "range is a parse failure with its reason (lmms-eval clamps it)."
    )
    requires = ("prompt", "actual")
    metrics = (
        MetricSpec(
            "score_judge",
            "Score judge",
            "the score scaled to 0…1: (score - low) / (high - low)",
            threshold=0.5,
            primary=True,
        ),
        MetricSpec("score_judge_raw", "Score judge (raw)", "the score as given", max=100.0),
    )
    answer_field: ClassVar[str | None] = "score"
    reply_tokens: ClassVar[int] = 8
    params: ClassVar[tuple[Param, ...]] = (
        *judge_params(),
        SCORE_LOW,
        SCORE_HIGH,
        Param(
            "criteria",
            str,
            default="correctness, completeness and clarity",
            description="what the score rates (in the default prompt)",
        ),
        CUSTOM_PROMPT,
        SCORE_MODE,
        threshold_param(0.5, "score_judge"),
    )

    def prompts(self, row: dict[str, Any], params: Mapping[str, object]) -> list[Messages]:
        """One conversation asking for one score."""
        if not row.get("actual"):
            return []
        low, high = score_range(params)
        text = custom_or(_SCORE, row, params, low=low, high=high, criteria=str(params["criteria"]))
        return [judge_conversation(text)]

    def reply_schema(self, params: Mapping[str, object]) -> dict[str, Any] | None:
        """Return ``{"score": <integer in range>}``."""
        return score_schema(*score_range(params))

    def format_hint(self, params: Mapping[str, object]) -> str:
        """Ask for the score as a JSON object's ``score``."""
        low, high = score_range(params)
        return f'Give the score as one JSON object and nothing else: {{"score": <{low} to {high}>}}'

    def parse(
        self, text: str | None, params: Mapping[str, object], *, contract_json: bool = False
    ) -> Parsed:
        """Read one score in range (``Score: 8/10``, ``8 out of 10`` …)."""
        return read_score(text, *score_range(params), contract_json=contract_json)

    def probability(
        self, result: ChatResult, text: str, params: Mapping[str, object], *, contract_json: bool
    ) -> float | None:
        """Return the expected score over the score tokens in range."""
        field = "score" if contract_json else None
        return score_expectation(result.logprobs, text, *score_range(params), field=field)

    def read(
        self, replies: list[Parsed], row: dict[str, Any], params: Mapping[str, object], ctx: Context
    ) -> dict[str, float | None] | str:
        """Return the score, raw and scaled to 0…1 (its expectation under logprobs)."""
        del row, ctx
        low, high = score_range(params)
        reply = replies[0]
        value = float(reply.value)
        if params.get("score_mode") == "logprobs":
            if reply.probability is None:
                return "no expected score (logprobs missing, or the score spans several tokens)"
            value = reply.probability
        return {"score_judge": (value - low) / (high - low), "score_judge_raw": value}


class RubricJudge(JudgeEvaluator):
    """Scores on named criteria from one JSON reply, one metric per criterion.

    Make one with :func:`rubric_judge`; ``rubric_judge`` in the catalog rates correctness,
    completeness and clarity.
    """

    criteria: ClassVar[dict[str, str]]
    score_range: ClassVar[tuple[int, int]] = (1, 5)
    reply_tokens: ClassVar[int] = 30
    requires = ("prompt", "actual")
    params: ClassVar[tuple[Param, ...]] = (*judge_params(), CUSTOM_PROMPT)

    def prompts(self, row: dict[str, Any], params: Mapping[str, object]) -> list[Messages]:
        """One conversation listing the criteria."""
        if not row.get("actual"):
            return []
        low, high = self.score_range
        listed = "\n".join(f"- {name}: {text}" for name, text in self.criteria.items())
        return [
            judge_conversation(custom_or(_RUBRIC, row, params, low=low, high=high, criteria=listed))
        ]

    def reply_schema(self, params: Mapping[str, object]) -> dict[str, Any] | None:
        """Return one integer in range per criterion, every criterion required."""
        del params
        low, high = self.score_range
        return {
            "type": "object",
            "properties": {name: score_property(low, high) for name in self.criteria},
            "required": list(self.criteria),
            "additionalProperties": False,
        }

    def format_hint(self, params: Mapping[str, object]) -> str:
        """Ask for the JSON object with every criterion."""
        del params
        low, high = self.score_range
        shape = ", ".join(f'"{name}": <{low} to {high}>' for name in self.criteria)
        return f"Reply with this JSON object filled in, and nothing else: {{{shape}}}"

    def parse(
        self, text: str | None, params: Mapping[str, object], *, contract_json: bool = False
    ) -> Parsed:
        """Read the JSON object, checked against the schema (a score out of range fails)."""
        del contract_json
        return read_object(text, self.reply_schema(params))

    def read(
        self, replies: list[Parsed], row: dict[str, Any], params: Mapping[str, object], ctx: Context
    ) -> dict[str, float | None] | str:
        """Each criterion scaled to 0…1, and their mean as the rubric's score."""
        del row, params, ctx
        low, high = self.score_range
        scaled = {
            f"{self.id}_{name}": (float(replies[0].value[name]) - low) / (high - low)
            for name in self.criteria
        }
        return {self.id: sum(scaled.values()) / len(scaled), **scaled}


_DEFAULT_RUBRIC = {
    "correctness": "the facts and the final answer are right",
    "completeness": "every part of the question is answered",
    "clarity": "easy to follow, no padding",
}


def rubric_judge(
    criteria: Mapping[str, str],
    *,
    id: str = "rubric_judge",  # noqa: A002 - the evaluator's id, as everywhere in the catalog
    score_range: tuple[int, int] = (1, 5),
    replace: bool = False,
) -> type[RubricJudge]:
    """Make (and register) a rubric judge: one metric per criterion and their mean.

    Parameters
    ----------
    criteria
        Criterion name (a metric key: letters, digits and ``_``) → what it rates.
    id
        The evaluator's id; its metrics are ``<id>`` (the mean) and ``<id>_<criterion>``.
    score_range
        The whole-number scale each criterion is scored on.
    replace
        Replace an evaluator registered under the same id.

    Examples
    --------
    >>> support = rubric_judge(
    ...     {"empathy": "acknowledges the customer", "accuracy": "the policy is right"},
    ...     id="support_rubric", replace=True,
    ... )
    >>> [m.key for m in support.metrics]
    ['support_rubric', 'support_rubric_empathy', 'support_rubric_accuracy']
    """
    bad = [name for name in criteria if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,40}", name)]
    if not criteria or bad:
        msg = f"criteria need names of letters, digits and _ (at most 41); got {bad or 'none'}"
        raise ValueError(msg)
    low, high = score_range
    if not 0 <= low < high <= 100:
        msg = f"score_range={score_range}: expected whole numbers with 0 <= low < high <= 100"
        raise ValueError(msg)
    metrics = (
        MetricSpec(id, "Rubric (mean)", "the criteria's mean, each scaled to 0…1", primary=True),
        *(
            MetricSpec(f"{id}_{name}", name.replace("_", " ").capitalize(), text)
            for name, text in criteria.items()
        ),
    )
    cls = type(
        f"RubricJudge_{id}",
        (RubricJudge,),
        {
            "id": id,
            "title": f"Rubric judge ({id})",
            "domain": "generation",
            "description": "The judge scores each criterion: " + ", ".join(criteria),
            "metrics": metrics,
            "criteria": dict(criteria),
            "score_range": (int(low), int(high)),
            "params": (*judge_params(), CUSTOM_PROMPT, threshold_param(0.5, id)),
            "__module__": __name__,
        },
    )
    register(cls, replace=replace)
    return cls


rubric_judge(_DEFAULT_RUBRIC)
