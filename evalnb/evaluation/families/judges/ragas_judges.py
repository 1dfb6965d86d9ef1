"""RAGAs-style numeric judges: each component asks one JSON question per row.

Faithfulness, answer relevancy, context precision / recall / relevancy and answer
correctness are each a :class:`_Component`: a prompt (``ask``) and a reading of the JSON
reply (``value``). The Ragas composite asks the same four component questions — the same
text, so it shares their cached calls — and takes the harmonic mean.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from evalnb.evaluation.base import MetricSpec, Param, register, threshold_param
from evalnb.evaluation.families.judges.framework import JudgeEvaluator, judge_params
from evalnb.evaluation.families.judges.prompts import Messages, judge_conversation, template_fields
from evalnb.evaluation.families.shared import EMBEDDING_MODEL
from evalnb.llm.parsed import fill
from evalnb.text.sentences import split_sentences

if TYPE_CHECKING:
    from collections.abc import Mapping

    from evalnb.evaluation.base import Context
    from evalnb.llm.parsed import Parsed

__all__ = [
    "AnswerCorrectness",
    "AnswerRelevancyJudge",
    "ContextPrecision",
    "ContextRecall",
    "ContextRelevancyJudge",
    "Faithfulness",
    "Ragas",
]

_FAITHFULNESS = (
    "List every factual claim of the answer and decide for each whether it can be inferred "
    "from the context.\n[CONTEXT]\n{CONTEXT}\n[ANSWER]\n{ACTUAL_OUTPUT}\n"
    'Reply with JSON only: {{"claims": [{{"claim": "...", "supported": true}}]}}'
)
_RELEVANCY = (
    "Write {n} different questions that the answer below would be a direct answer to.\n"
    "[ANSWER]\n{ACTUAL_OUTPUT}\n"
    'Reply with JSON only: {{"questions": ["...", "..."], "noncommittal": false}} '
    '(noncommittal: true when the answer evades, e.g. "I don\'t know").'
)
_PRECISION = (
    "For each numbered context chunk, decide whether it was useful to arrive at the expected "
    "answer to the question.\n[QUESTION]\n{INPUT}\n[EXPECTED ANSWER]\n{EXPECTED_OUTPUT}\n"
    "[CHUNKS]\n{chunks}\n"
    'Reply with JSON only: {{"verdicts": [1, 0, ...]}} with one 1/0 per chunk, in order.'
)
_RECALL = (
    "For each sentence of the expected answer, decide whether it can be attributed to the "
    "context.\n[CONTEXT]\n{CONTEXT}\n[EXPECTED ANSWER SENTENCES]\n{sentences}\n"
    'Reply with JSON only: {{"attributed": [1, 0, ...]}} with one 1/0 per sentence, in order.'
)
_CONTEXT_RELEVANCY = (
    "Copy, word for word, the sentences of the context that are relevant to answering the "
    "question.\n[QUESTION]\n{INPUT}\n[CONTEXT]\n{CONTEXT}\n"
    'Reply with JSON only: {{"relevant_sentences": ["...", "..."]}}'
)
_CORRECTNESS = (
    "Split the answer and the reference answer into statements. Classify them: TP — in the "
    "answer and supported by the reference; FP — in the answer but not in the reference; FN — "
    "in the reference but missing from the answer.\n[QUESTION]\n{INPUT}\n[ANSWER]\n"
    "{ACTUAL_OUTPUT}\n[REFERENCE]\n{EXPECTED_OUTPUT}\n"
    'Reply with JSON only: {{"TP": ["..."], "FP": ["..."], "FN": ["..."]}}'
)


_N_QUESTIONS = Param("n_questions", int, default=3, description="questions to generate", low=1)


def _flags(value: object, n: int) -> list[int] | None:
    """Return the list as ``n`` 0/1 verdicts, or None when it is not exactly that."""
    if not isinstance(value, list) or len(value) != n:
        return None
    if not all(isinstance(v, bool | int) and v in (0, 1) for v in value):
        return None
    return [int(v) for v in value]


def _unit(emb: np.ndarray) -> np.ndarray:
    return np.asarray(emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12))


def _expected_sentences(row: dict[str, Any]) -> list[str]:
    return split_sentences(["\n".join(row.get("expected") or [])])[0]


def _numbered(items: list[str]) -> str:
    return "\n".join(f"{i + 1}. {x}" for i, x in enumerate(items))


def _arr(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


def _obj(optional: tuple[str, ...] = (), **fields: dict[str, Any]) -> dict[str, Any]:
    required = sorted(set(fields) - set(optional))
    return {"type": "object", "properties": fields, "required": required}


class _Component(JudgeEvaluator):
    """One JSON question per row and one metric read from the reply."""

    key: ClassVar[str]
    reply_shape: ClassVar[dict[str, Any]]

    def reply_schema(self, params: Mapping[str, object]) -> dict[str, Any] | None:
        """Return the schema of the component's JSON reply."""
        del params
        return self.reply_shape

    @abstractmethod
    def ask(self, row: dict[str, Any], params: Mapping[str, object]) -> Messages | None:
        """Return the conversation for one row, or None when the row lacks an input."""

    @abstractmethod
    def value(
        self, js: dict[str, Any], row: dict[str, Any], params: Mapping[str, object], ctx: Context
    ) -> float | str:
        """Return the metric from the JSON reply, or why the reply does not give one."""

    def prompts(self, row: dict[str, Any], params: Mapping[str, object]) -> list[Messages]:
        """Ask the component's question (none when an input is missing)."""
        conversation = self.ask(row, params)
        return [conversation] if conversation is not None else []

    def read(
        self, replies: list[Parsed], row: dict[str, Any], params: Mapping[str, object], ctx: Context
    ) -> dict[str, float | None] | str:
        """Read the metric from the one reply."""
        v = self.value(replies[0].value, row, params, ctx)
        return v if isinstance(v, str) else {self.key: v}


def _numeric(key: str, title: str, description: str) -> tuple[MetricSpec, ...]:
    return (MetricSpec(key, title, description, threshold=0.75, primary=True),)


@register
class Faithfulness(_Component):
    """Share of the answer's claims the retrieved context supports."""

    reply_shape: ClassVar[dict[str, Any]] = _obj(
        claims=_arr(
            {
                "type": "object",
                "properties": {"claim": {"type": "string"}, "supported": {"type": "boolean"}},
                "required": ["claim", "supported"],
            }
        )
    )
    id = "faithfulness"
    key = "faithfulness"
    title = "Faithfulness (judge)"
    domain = "generation"
    description = (
        "Claims in the answer that can be inferred from the retrieved context / all claims."
    )
    requires = ("context", "actual")
    metrics = _numeric(
        "faithfulness", "Faithfulness", "Share of the answer's claims supported by the context."
    )
    params: ClassVar[tuple[Param, ...]] = (*judge_params(), threshold_param(0.75, "faithfulness"))

    def ask(self, row: dict[str, Any], params: Mapping[str, object]) -> Messages | None:
        """List the claims and check each against the context."""
        return (
            judge_conversation(fill(_FAITHFULNESS, template_fields(row)))
            if row.get("context") and row.get("actual")
            else None
        )

    def value(
        self, js: dict[str, Any], row: dict[str, Any], params: Mapping[str, object], ctx: Context
    ) -> float | str:
        """Supported claims / claims (0 when the answer makes none)."""
        claims = js.get("claims")
        if not isinstance(claims, list) or not all(
            isinstance(c, dict) and "supported" in c for c in claims
        ):
            return "claims missing or malformed"
        return sum(bool(c["supported"]) for c in claims) / len(claims) if claims else 0.0


@register
class AnswerRelevancyJudge(_Component):
    """Mean similarity of the question to questions the judge writes for the answer."""

    reply_shape: ClassVar[dict[str, Any]] = _obj(
        optional=("noncommittal",),
        questions=_arr({"type": "string"}),
        noncommittal={"type": "boolean"},
    )
    id = "answer_relevancy"
    key = "answer_relevancy"
    title = "Answer relevancy (judge)"
    domain = "generation"
    description = (
        "The judge writes n questions the answer answers; mean cosine similarity to the question."
    )
    requires = ("prompt", "actual")
    metrics = _numeric(
        "answer_relevancy",
        "Answer relevancy",
        "Mean similarity of generated questions to the question.",
    )
    params: ClassVar[tuple[Param, ...]] = (
        *judge_params(),
        EMBEDDING_MODEL,
        _N_QUESTIONS,
        threshold_param(0.75, "answer_relevancy"),
    )

    def ask(self, row: dict[str, Any], params: Mapping[str, object]) -> Messages | None:
        """Ask for n questions the answer would answer."""
        n = int(str(params["n_questions"]))
        return (
            judge_conversation(fill(_RELEVANCY, {**template_fields(row), "n": n}))
            if row.get("actual")
            else None
        )

    def value(
        self, js: dict[str, Any], row: dict[str, Any], params: Mapping[str, object], ctx: Context
    ) -> float | str:
        """Mean cosine similarity (shared encoder) of the question and the generated ones."""
        questions = js.get("questions")
        if (
            not isinstance(questions, list)
            or not questions
            or not all(isinstance(q, str) for q in questions)
        ):
            return "questions missing"
        if js.get("noncommittal") is True:
            return 0.0  # an evasive answer is not relevant, whatever questions it suggests
        emb = _unit(ctx.encoder(str(params["model"])).encode([row.get("prompt") or "", *questions]))
        # float32 rounding can put the cosine of identical texts a hair above 1
        return float(np.mean(np.clip(emb[1:] @ emb[0], -1.0, 1.0)))


@register
class ContextPrecision(_Component):
    """Whether the chunks useful for the expected answer sit at the top of the context."""

    reply_shape: ClassVar[dict[str, Any]] = _obj(verdicts=_arr({"type": "integer", "enum": [0, 1]}))
    id = "context_precision"
    key = "context_precision"
    title = "Context precision (judge)"
    domain = "retrieval"
    description = "Mean precision@k over the ranks of the chunks the judge finds useful."
    requires = ("prompt", "expected", "context")
    metrics = _numeric("context_precision", "Context precision", "Useful chunks ranked first.")
    params: ClassVar[tuple[Param, ...]] = (
        *judge_params(),
        threshold_param(0.75, "context_precision"),
    )

    def ask(self, row: dict[str, Any], params: Mapping[str, object]) -> Messages | None:
        """Ask for one useful/not verdict per numbered chunk."""
        chunks = row.get("context") or []
        if not chunks or not row.get("expected"):
            return None
        return judge_conversation(
            fill(_PRECISION, {**template_fields(row), "chunks": _numbered(chunks)})
        )

    def value(
        self, js: dict[str, Any], row: dict[str, Any], params: Mapping[str, object], ctx: Context
    ) -> float | str:
        """Average precision: precision@k summed where a useful chunk sits, over the useful ones."""
        v = _flags(js.get("verdicts"), len(row["context"]))
        if v is None:
            return f"expected {len(row['context'])} chunk verdicts"
        if not sum(v):
            return 0.0
        hits, total = 0, 0.0
        for k, flag in enumerate(v, start=1):
            hits += flag
            total += flag * hits / k
        return total / sum(v)


@register
class ContextRecall(_Component):
    """Share of expected-answer sentences attributable to the context."""

    reply_shape: ClassVar[dict[str, Any]] = _obj(
        attributed=_arr({"type": "integer", "enum": [0, 1]})
    )
    id = "context_recall"
    key = "context_recall"
    title = "Context recall (judge)"
    domain = "retrieval"
    description = "Expected-answer sentences the judge attributes to the context / all of them."
    requires = ("expected", "context")
    metrics = _numeric(
        "context_recall", "Context recall", "Expected-answer sentences found in the context."
    )
    params: ClassVar[tuple[Param, ...]] = (*judge_params(), threshold_param(0.75, "context_recall"))

    def ask(self, row: dict[str, Any], params: Mapping[str, object]) -> Messages | None:
        """Ask for one attributed/not verdict per expected-answer sentence."""
        sentences = _expected_sentences(row)
        if not sentences or not row.get("context"):
            return None
        return judge_conversation(
            fill(_RECALL, {**template_fields(row), "sentences": _numbered(sentences)})
        )

    def value(
        self, js: dict[str, Any], row: dict[str, Any], params: Mapping[str, object], ctx: Context
    ) -> float | str:
        """Attributed sentences / sentences."""
        n = len(_expected_sentences(row))
        v = _flags(js.get("attributed"), n)
        return f"expected {n} sentence verdicts" if v is None else sum(v) / n


@register
class ContextRelevancyJudge(_Component):
    """Share of context sentences relevant to the question."""

    reply_shape: ClassVar[dict[str, Any]] = _obj(relevant_sentences=_arr({"type": "string"}))
    id = "context_relevancy_judge"
    key = "context_relevancy"
    title = "Context relevancy (judge)"
    domain = "retrieval"
    description = "Context sentences the judge quotes as relevant / all context sentences (sentence splitter)."
    requires = ("prompt", "context")
    metrics = _numeric(
        "context_relevancy", "Context relevancy", "Relevant share of the context sentences."
    )
    params: ClassVar[tuple[Param, ...]] = (
        *judge_params(),
        threshold_param(0.75, "context_relevancy"),
    )

    def ask(self, row: dict[str, Any], params: Mapping[str, object]) -> Messages | None:
        """Ask the judge to quote the relevant sentences."""
        return (
            judge_conversation(fill(_CONTEXT_RELEVANCY, template_fields(row)))
            if row.get("context")
            else None
        )

    def value(
        self, js: dict[str, Any], row: dict[str, Any], params: Mapping[str, object], ctx: Context
    ) -> float | str:
        """Quoted sentences found in the context, over the context's sentence count."""
        quoted = js.get("relevant_sentences")
        if not isinstance(quoted, list) or not all(isinstance(q, str) for q in quoted):
            return "relevant_sentences missing"
        sentences = [s for chunk in split_sentences(list(row["context"])) for s in chunk]
        if not sentences:
            return "the context has no sentence"
        text = " ".join(sentences)
        found = sum(1 for q in dict.fromkeys(quoted) if q.strip() and q.strip() in text)
        return min(1.0, found / len(sentences))


@register
class AnswerCorrectness(_Component):
    """Factuality F1 of the judge's statement classification, blended with similarity."""

    reply_shape: ClassVar[dict[str, Any]] = _obj(
        TP=_arr({"type": "string"}), FP=_arr({"type": "string"}), FN=_arr({"type": "string"})
    )
    id = "answer_correctness"
    key = "answer_correctness"
    title = "Answer correctness (judge)"
    domain = "generation"
    description = (
        "0.75 × statement F1 (TP / (TP + ½(FP + FN))) + 0.25 × answer semantic similarity."
    )
    requires = ("prompt", "expected", "actual")
    metrics = _numeric(
        "answer_correctness", "Answer correctness", "Weighted factuality and similarity."
    )
    params: ClassVar[tuple[Param, ...]] = (
        *judge_params(),
        EMBEDDING_MODEL,
        Param(
            "factuality_weight",
            float,
            default=0.75,
            description="weight of the F1",
            low=0.0,
            high=1.0,
        ),
        threshold_param(0.75, "answer_correctness"),
    )

    def ask(self, row: dict[str, Any], params: Mapping[str, object]) -> Messages | None:
        """Ask for the TP / FP / FN statements."""
        return (
            judge_conversation(fill(_CORRECTNESS, template_fields(row)))
            if row.get("expected") and row.get("actual")
            else None
        )

    def value(
        self, js: dict[str, Any], row: dict[str, Any], params: Mapping[str, object], ctx: Context
    ) -> float | str:
        """F1 from the classified statements, similarity from the shared encoder."""
        lists = [c for c in (js.get(k) for k in ("TP", "FP", "FN")) if isinstance(c, list)]
        if len(lists) != 3:
            return "TP/FP/FN lists missing"
        tp, fp, fn = map(len, lists)
        f1 = tp / (tp + 0.5 * (fp + fn)) if tp + fp + fn else 0.0
        emb = _unit(ctx.encoder(str(params["model"])).encode([row["actual"], row["expected"][0]]))
        similarity = float(np.clip(emb[0] @ emb[1], -1.0, 1.0))
        w = float(str(params["factuality_weight"]))
        return w * f1 + (1 - w) * similarity


_PARTS = (Faithfulness(), AnswerRelevancyJudge(), ContextPrecision(), ContextRecall())


@register
class Ragas(JudgeEvaluator):
    """Harmonic mean of faithfulness, answer relevancy, context precision and recall."""

    id = "ragas"
    title = "Ragas (judge)"
    domain = "generation"
    description = "4 / (1/F + 1/AR + 1/CP + 1/CR) of the four RAGAs components."
    requires = ("prompt", "expected", "context", "actual")
    metrics = (
        MetricSpec(
            "ragas", "RAGAS", "Harmonic mean of the four components.", threshold=0.75, primary=True
        ),
        *(
            MetricSpec(p.key, p.metrics[0].title, p.metrics[0].description, threshold=0.75)
            for p in _PARTS
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (
        *judge_params(),
        EMBEDDING_MODEL,
        _N_QUESTIONS,
        threshold_param(0.75, "ragas"),
    )

    def prompts(self, row: dict[str, Any], params: Mapping[str, object]) -> list[Messages]:
        """Ask the four component questions (none unless the row has every input)."""
        asks = [part.ask(row, params) for part in _PARTS]
        return [a for a in asks if a is not None] if all(asks) else []

    def read(
        self, replies: list[Parsed], row: dict[str, Any], params: Mapping[str, object], ctx: Context
    ) -> dict[str, float | None] | str:
        """Each component, then their harmonic mean (0 when any component is 0)."""
        parts = {
            p.key: p.value(r.value, row, params, ctx) for p, r in zip(_PARTS, replies, strict=True)
        }
        bad = [f"{k}: {v}" for k, v in parts.items() if isinstance(v, str)]
        if bad:
            return "; ".join(bad)
        values = [float(v) for v in parts.values()]
        ragas = 0.0 if min(values) <= 0 else 4 / sum(1 / v for v in values)
        return {"ragas": ragas, **{k: float(v) for k, v in parts.items()}}
