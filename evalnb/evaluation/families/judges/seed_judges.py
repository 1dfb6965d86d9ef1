"""The lmms-eval judge family (seed 004) as evaluators: binary, correctness, score, rubric, comparative.

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

import json
import re
from typing import TYPE_CHECKING, Any, ClassVar

from evalnb.evaluation.base import MetricSpec, Param, register, threshold_param
from evalnb.evaluation.families.judges.framework import JudgeEvaluator, judge_params
from evalnb.evaluation.families.judges.prompts import (
    Messages,
    judge_conversation,
    require_placeholder,
    score_property,
    score_schema,
    template_fields,
    verdict_hint,
    verdict_schema,
)
from evalnb.llm.judge import Parsed, build_comparative, fill, parse_comparative
from evalnb.llm.probabilities import score_expectation, verdict_probability
from evalnb.llm.reader import read_object, read_score, read_verdict

if TYPE_CHECKING:
    from collections.abc import Mapping

    from evalnb.evaluation.base import Context
    from evalnb.llm.client import ChatResult

__all__ = [
    "BinaryJudge",
    "ComparativeJudge",
    "CorrectnessJudge",
    "RubricJudge",
    "ScoreJudge",
    "rubric_judge",
]

_BINARY = (
    "Decide whether the response answers the question correctly.\n\n[Question]\n{question}\n\n"
    "{reference_section}[Response]\n{prediction}\n\n"
    "Reply {positive} if the response is correct and {negative} if it is not, with nothing else."
)
_CORRECTNESS = (
    "Decide whether the solution reaches the same final answer as the reference. Judge the "
    "meaning, or the mathematics: equivalent forms are the same answer whatever their "
    "formatting, notation, order or wording (for instance \\boxed{{x = \\pm 4}} and "
    '"x = 4 or x = -4" are the same). Ignore how the solution was reached.\n\n'
    "[Question]\n{question}\n\n[Reference answer]\n{answer}\n\n[Solution]\n{prediction}\n\n"
    "Reply {positive} if the final answers agree and {negative} if they do not, with nothing else."
)
_SCORE = (
    "Rate the response to the question for {criteria}.\n\n[Question]\n{question}\n\n"
    "{reference_section}[Response]\n{prediction}\n\n"
    "Give one whole number from {low} to {high} ({high} is best), with nothing else."
)
_RUBRIC = (
    "Rate the response to the question on each criterion below, from {low} to {high} "
    "({high} is best).\n\n[Criteria]\n{criteria}\n\n[Question]\n{question}\n\n"
    "{reference_section}[Response]\n{prediction}\n\n"
    "Reply with one JSON object mapping each criterion's name to its score, and nothing else."
)
_FORMATS = {"0/1": ("1", "0"), "yes/no": ("yes", "no")}
_CUSTOM = Param(
    "custom_prompt",
    str,
    default="",
    description=(
        "your prompt template; fields {question}, {answer} (the reference), {prediction}, "
        "H2O's {INPUT} / {EXPECTED_OUTPUT} / {ACTUAL_OUTPUT} / {CONTEXT} and any field of the row"
    ),
)
_SCORE_MODE = Param(
    "score_mode",
    str,
    default="parsed",
    choices=("parsed", "logprobs"),
    description=(
        "'parsed': the value read from the reply; 'logprobs': P(pass), or the expected score, "
        "from the judge's token probabilities (the server must return them)"
    ),
)


def _seed_fields(row: dict[str, Any]) -> dict[str, Any]:
    """Return the row's template fields under the seed's names (``answer``: the reference)."""
    fields = template_fields(row)
    reference = fields["EXPECTED_OUTPUT"]
    return {
        **fields,
        "answer": reference,
        "prediction": fields["ACTUAL_OUTPUT"],
        "pred": fields["ACTUAL_OUTPUT"],
        "reference_section": f"[Reference answer]\n{reference}\n\n" if reference else "",
    }


def _custom_or(
    template: str, row: dict[str, Any], params: Mapping[str, object], **extra: object
) -> str:
    custom = str(params.get("custom_prompt") or "")
    if custom:
        require_placeholder(custom, "custom_prompt", "{prediction}")
    return fill(custom or template, {**_seed_fields(row), **extra})


class _VerdictJudge(JudgeEvaluator):
    """A two-class verdict: 1.0 when the positive class is read, 0.0 for the negative."""

    answer_field: ClassVar[str | None] = "verdict"
    reply_tokens: ClassVar[int] = 8
    template: ClassVar[str]

    def classes(self, params: Mapping[str, object]) -> dict[str, float]:
        """Return the class words of ``output_format`` and their values."""
        positive, negative = _FORMATS[str(params["output_format"])]
        return {positive: 1.0, negative: 0.0}

    def prompts(self, row: dict[str, Any], params: Mapping[str, object]) -> list[Messages]:
        """One conversation: the seed's template (or yours) filled from the row."""
        if not row.get("actual") or any(not row.get(c) for c in self.requires):
            return []
        positive, negative = _FORMATS[str(params["output_format"])]
        text = _custom_or(self.template, row, params, positive=positive, negative=negative)
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
            choices=tuple(_FORMATS),
            description="the class words",
        ),
        _CUSTOM,
        _SCORE_MODE,
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
            choices=tuple(_FORMATS),
            description="the class words",
        ),
        _SCORE_MODE,
        threshold_param(0.5, "correctness_judge"),
    )


def _range(params: Mapping[str, object]) -> tuple[int, int]:
    low, high = int(params["score_low"]), int(params["score_high"])  # type: ignore[call-overload]
    if low >= high:
        msg = f"score_low={low} must be below score_high={high}"
        raise ValueError(msg)
    return low, high


_LOW = Param("score_low", int, default=1, low=0, high=99, description="the lowest score")
_HIGH = Param("score_high", int, default=10, low=1, high=100, description="the highest score")


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
        _LOW,
        _HIGH,
        Param(
            "criteria",
            str,
            default="correctness, completeness and clarity",
            description="what the score rates (in the default prompt)",
        ),
        _CUSTOM,
        _SCORE_MODE,
        threshold_param(0.5, "score_judge"),
    )

    def prompts(self, row: dict[str, Any], params: Mapping[str, object]) -> list[Messages]:
        """One conversation asking for one score."""
        if not row.get("actual"):
            return []
        low, high = _range(params)
        text = _custom_or(_SCORE, row, params, low=low, high=high, criteria=str(params["criteria"]))
        return [judge_conversation(text)]

    def reply_schema(self, params: Mapping[str, object]) -> dict[str, Any] | None:
        """Return ``{"score": <integer in range>}``."""
        return score_schema(*_range(params))

    def format_hint(self, params: Mapping[str, object]) -> str:
        """Ask for the score as a JSON object's ``score``."""
        low, high = _range(params)
        return f'Give the score as one JSON object and nothing else: {{"score": <{low} to {high}>}}'

    def parse(
        self, text: str | None, params: Mapping[str, object], *, contract_json: bool = False
    ) -> Parsed:
        """Read one score in range (``Score: 8/10``, ``8 out of 10`` …)."""
        return read_score(text, *_range(params), contract_json=contract_json)

    def probability(
        self, result: ChatResult, text: str, params: Mapping[str, object], *, contract_json: bool
    ) -> float | None:
        """Return the expected score over the score tokens in range."""
        field = "score" if contract_json else None
        return score_expectation(result.logprobs, text, *_range(params), field=field)

    def read(
        self, replies: list[Parsed], row: dict[str, Any], params: Mapping[str, object], ctx: Context
    ) -> dict[str, float | None] | str:
        """Return the score, raw and scaled to 0…1 (its expectation under logprobs)."""
        del row, ctx
        low, high = _range(params)
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
    params: ClassVar[tuple[Param, ...]] = (*judge_params(), _CUSTOM)

    def prompts(self, row: dict[str, Any], params: Mapping[str, object]) -> list[Messages]:
        """One conversation listing the criteria."""
        if not row.get("actual"):
            return []
        low, high = self.score_range
        listed = "\n".join(f"- {name}: {text}" for name, text in self.criteria.items())
        return [
            judge_conversation(
                _custom_or(_RUBRIC, row, params, low=low, high=high, criteria=listed)
            )
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
            "params": (*judge_params(), _CUSTOM, threshold_param(0.5, id)),
            "__module__": __name__,
        },
    )
    register(cls, replace=replace)
    return cls


rubric_judge(_DEFAULT_RUBRIC)


@register
class ComparativeJudge(JudgeEvaluator):
    """Two answers to the same question scored side by side (the seed's comparative judge).

    The answer judged is the row's; the other is the row's ``other_answer`` field (an extra
    field of the output or the case). :func:`evalnb.pairwise` fills it from a second model
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
        _LOW,
        _HIGH,
        Param("instruction", str, default="", description="what to judge on (default: overall)"),
        _CUSTOM,
        threshold_param(0.5, "comparative_judge"),
    )

    def prompts(self, row: dict[str, Any], params: Mapping[str, object]) -> list[Messages]:
        """One conversation: the row's answer first, the other second."""
        fields = _seed_fields(row)
        other = fields.get("other_answer")
        if not row.get("actual") or not other:
            return []
        custom = str(params.get("custom_prompt") or "")
        text = build_comparative(
            fields["question"],
            fields["prediction"],
            str(other),
            context=fields["context"] or None,
            score_range=_range(params),
            custom_prompt=custom or None,
            instruction=str(params.get("instruction") or "") or None,
        )
        return [judge_conversation(text)]

    def reply_schema(self, params: Mapping[str, object]) -> dict[str, Any] | None:
        """Return ``{"score_1": <in range>, "score_2": <in range>}``."""
        low, high = _range(params)
        one = score_property(low, high)
        return {
            "type": "object",
            "properties": {"score_1": one, "score_2": one},
            "required": ["score_1", "score_2"],
            "additionalProperties": False,
        }

    def format_hint(self, params: Mapping[str, object]) -> str:
        """Ask for both scores as one JSON object."""
        low, high = _range(params)
        return (
            f'Reply with one JSON object and nothing else: {{"score_1": <{low} to {high}, '
            f'answer 1>, "score_2": <{low} to {high}, answer 2>}}'
        )

    def parse(
        self, text: str | None, params: Mapping[str, object], *, contract_json: bool = False
    ) -> Parsed:
        """Both scores: the JSON object, or the seed's first line ``8 7``; in range."""
        low, high = _range(params)
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
        low, high = _range(params)
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
