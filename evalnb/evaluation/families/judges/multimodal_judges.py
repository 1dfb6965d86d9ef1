"""Multimodal judges: is the answer supported by, and in line with, text *and* images.

ragas' ``MultiModalFaithfulness`` and ``MultiModalRelevance`` ask one yes/no question of a
vision judge about the answer against the retrieved contexts, text and images together, and
score 1 or 0; a lab's mean of them is ragas' rate. The images go with the question as
content parts (the judge framework attaches every row's media, :mod:`evalnb.media.policy`),
so these judges see what the retriever returned rather than a caption standing in for it.
Run them with ``media="required"`` to refuse a judge whose server takes no images.

DeepEval's ``MultimodalAnswerRelevancyMetric`` and ``MultimodalFaithfulnessMetric`` count
verdicts on the answer's statements (or claims): the share not judged "no", "idk" counting
for the answer, 1 for an answer that states nothing (:class:`_Statements`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from evalnb.evaluation.base import MetricSpec, Param, register, threshold_param
from evalnb.evaluation.families.judges.framework import JudgeEvaluator, judge_params
from evalnb.evaluation.families.judges.prompts import Messages, judge_conversation

if TYPE_CHECKING:
    from collections.abc import Mapping

    from evalnb.evaluation.base import Context
    from evalnb.llm.parsed import Parsed

__all__ = [
    "MultimodalAnswerRelevancy",
    "MultimodalFaithfulness",
    "MultimodalFaithfulnessDeepEval",
    "MultimodalRelevance",
]

_FAITHFUL = (
    "Decide whether every claim of the answer can be inferred from the context: its text "
    "below and the images attached to this message, taken together.\n"
    "[CONTEXT TEXT]\n{context}\n[IMAGES]\n{images}\n[ANSWER]\n{answer}\n"
    'Reply with JSON only: {{"faithful": true}} or {{"faithful": false}}.'
)
_RELEVANT = (
    "Decide whether the answer to the question is in line with the context: its text below "
    "and the images attached to this message, taken together.\n"
    "[QUESTION]\n{question}\n[CONTEXT TEXT]\n{context}\n[IMAGES]\n{images}\n[ANSWER]\n{answer}\n"
    'Reply with JSON only: {{"relevant": true}} or {{"relevant": false}}.'
)


def _images(row: dict[str, Any]) -> str:
    """Say how many images go with the question (the case's, the contexts', the answer's)."""
    items = [
        i
        for c in ("case_media_items", "context_media_items", "answer_media_items")
        for i in (row.get(c) or [])
        if i.get("kind") == "image"
    ]
    return f"{len(items)} image(s) attached" if items else "none"


def _asked(template: str, row: dict[str, Any]) -> list[Messages]:
    """Return the one conversation of ``template`` filled from ``row``."""
    text = template.format(
        question=row.get("prompt") or "",
        context="\n".join(row.get("context") or []) or "(none)",
        images=_images(row),
        answer=row["actual"],
    )
    return [judge_conversation(text)]


def _has_context(row: dict[str, Any]) -> bool:
    return bool(row.get("context")) or bool(row.get("context_media")) or bool(row.get("case_media"))


class _Binary(JudgeEvaluator):
    """One yes/no JSON question per row; the metric is 1 for yes, 0 for no."""

    field: ClassVar[str]
    template: ClassVar[str]
    reply_tokens = 12

    def reply_schema(self, params: Mapping[str, object]) -> dict[str, Any] | None:
        """Return ``{"<field>": boolean}``."""
        del params
        return {
            "type": "object",
            "properties": {self.field: {"type": "boolean"}},
            "required": [self.field],
        }

    def prompts(self, row: dict[str, Any], params: Mapping[str, object]) -> list[Messages]:
        """Ask the question (none when the row has no answer or no context at all)."""
        del params
        if not row.get("actual") or not _has_context(row):
            return []
        return _asked(self.template, row)

    def read(
        self, replies: list[Parsed], row: dict[str, Any], params: Mapping[str, object], ctx: Context
    ) -> dict[str, float | None] | str:
        """Read the boolean: 1.0 or 0.0."""
        del row, params, ctx
        value = replies[0].value.get(self.field) if isinstance(replies[0].value, dict) else None
        if not isinstance(value, bool):
            return f"the reply has no boolean {self.field!r}"
        return {self.metrics[0].key: 1.0 if value else 0.0}


@register
class MultimodalFaithfulness(_Binary):
    """ragas' MultiModalFaithfulness: the answer inferred from the text and image contexts."""

    id = "multimodal_faithfulness"
    title = "Multimodal faithfulness (judge, ragas)"
    domain = "generation"
    description = (
        "1 when every claim of the answer can be inferred from the retrieved text and images "
        "(ragas' MultiModalFaithfulness), else 0; needs a judge that takes images."
    )
    requires = ("actual",)
    field = "faithful"
    answer_field = "faithful"
    template = _FAITHFUL
    metrics = (
        MetricSpec(
            "faithful_rate",
            "Faithful",
            "1 when the answer is supported by the text and image contexts.",
            threshold=0.5,
            primary=True,
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (*judge_params(), threshold_param(0.5, "faithful_rate"))


@register
class MultimodalRelevance(_Binary):
    """ragas' MultiModalRelevance: the answer in line with the question's text and images."""

    id = "multimodal_relevance"
    title = "Multimodal relevance (judge, ragas)"
    domain = "generation"
    description = (
        "1 when the answer to the question is in line with the retrieved text and images "
        "(ragas' MultiModalRelevance), else 0; needs a judge that takes images."
    )
    requires = ("prompt", "actual")
    field = "relevant"
    answer_field = "relevant"
    template = _RELEVANT
    metrics = (
        MetricSpec(
            "relevance_rate",
            "Relevant",
            "1 when the answer is in line with the question's text and image contexts.",
            threshold=0.5,
            primary=True,
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (*judge_params(), threshold_param(0.5, "relevance_rate"))


_DE_RELEVANCY = (
    "List every statement the answer makes (its text, and what any image attached as part of "
    "the answer shows) and decide for each whether it is relevant to the question, which may "
    "refer to the attached images: 'yes', 'no', or 'idk' when it is ambiguous or supporting.\n"
    "[QUESTION]\n{question}\n[IMAGES]\n{images}\n[ANSWER]\n{answer}\n"
    'Reply with JSON only: {{"statements": [{{"statement": "...", "verdict": "yes"}}]}}'
)
_DE_FAITHFUL = (
    "List every claim the answer makes and decide for each whether the retrieval context (its "
    "text below and the images attached to this message) contradicts it: 'no' when it "
    "contradicts the context, 'yes' when the context supports it, 'idk' when the context says "
    "nothing of it.\n[CONTEXT TEXT]\n{context}\n[IMAGES]\n{images}\n[ANSWER]\n{answer}\n"
    'Reply with JSON only: {{"claims": [{{"claim": "...", "verdict": "yes"}}]}}'
)
_VERDICTS = ("yes", "no", "idk")


class _Statements(JudgeEvaluator):
    """DeepEval's statement verdicts in one call: the share of items whose verdict is not 'no'.

    DeepEval asks twice (the statements, then a verdict for each); here one reply lists both,
    which keeps its formula (``idk`` counts for the answer, no statement at all scores 1)
    at half the calls.
    """

    items: ClassVar[str]
    text: ClassVar[str]
    template: ClassVar[str]
    needs_context: ClassVar[bool] = False

    def reply_schema(self, params: Mapping[str, object]) -> dict[str, Any] | None:
        """Return ``{"<items>": [{"<text>": string, "verdict": "yes"|"no"|"idk"}]}``."""
        del params
        item = {
            "type": "object",
            "properties": {self.text: {"type": "string"}, "verdict": {"enum": list(_VERDICTS)}},
            "required": [self.text, "verdict"],
        }
        return {
            "type": "object",
            "properties": {self.items: {"type": "array", "items": item}},
            "required": [self.items],
        }

    def prompts(self, row: dict[str, Any], params: Mapping[str, object]) -> list[Messages]:
        """Ask for the items and their verdicts (none without an answer, or a context)."""
        del params
        if not row.get("actual") or (self.needs_context and not _has_context(row)):
            return []
        return _asked(self.template, row)

    def read(
        self, replies: list[Parsed], row: dict[str, Any], params: Mapping[str, object], ctx: Context
    ) -> dict[str, float | None] | str:
        """Score = items not judged 'no' / items (1 when there are none, as DeepEval)."""
        del row, params, ctx
        value = replies[0].value
        listed = value.get(self.items) if isinstance(value, dict) else None
        if not isinstance(listed, list):
            return f"the reply has no list {self.items!r}"
        verdicts = [
            str(i.get("verdict", "")).strip().lower() for i in listed if isinstance(i, dict)
        ]
        if len(verdicts) != len(listed) or any(v not in _VERDICTS for v in verdicts):
            return f"each of {self.items!r} needs a verdict of 'yes', 'no' or 'idk'"
        if not verdicts:
            return {self.metrics[0].key: 1.0}
        return {self.metrics[0].key: sum(v != "no" for v in verdicts) / len(verdicts)}


@register
class MultimodalAnswerRelevancy(_Statements):
    """DeepEval's MultimodalAnswerRelevancyMetric: the answer's statements relevant to the input."""

    id = "multimodal_answer_relevancy"
    title = "Multimodal answer relevancy (judge, DeepEval)"
    domain = "generation"
    description = (
        "Share of the answer's statements (text and images) relevant to the question and its "
        "images (DeepEval's MultimodalAnswerRelevancyMetric; 'idk' counts as relevant)."
    )
    requires = ("prompt", "actual")
    items, text, template = "statements", "statement", _DE_RELEVANCY
    metrics = (
        MetricSpec(
            "multimodal_answer_relevancy",
            "Answer relevancy (multimodal)",
            "Relevant statements / statements.",
            threshold=0.5,
            primary=True,
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (
        *judge_params(),
        threshold_param(0.5, "multimodal_answer_relevancy"),
    )


@register
class MultimodalFaithfulnessDeepEval(_Statements):
    """DeepEval's MultimodalFaithfulnessMetric: the answer's claims the context does not contradict."""

    id = "multimodal_faithfulness_deepeval"
    title = "Multimodal faithfulness (judge, DeepEval)"
    domain = "generation"
    description = (
        "Share of the answer's claims that the retrieval context, text and images, does not "
        "contradict (DeepEval's MultimodalFaithfulnessMetric; 'idk' counts as faithful)."
    )
    requires = ("actual",)
    needs_context = True
    items, text, template = "claims", "claim", _DE_FAITHFUL
    metrics = (
        MetricSpec(
            "multimodal_faithfulness_deepeval",
            "Faithfulness (multimodal, DeepEval)",
            "Claims not contradicted / claims.",
            threshold=0.5,
            primary=True,
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (
        *judge_params(),
        threshold_param(0.5, "multimodal_faithfulness_deepeval"),
    )
