"""GPTScore evaluators (arXiv 2302.04166).

A local generative LM reads an instruction that ends where a good text would begin; the
score is the average negative log-likelihood (ANLL) of the text that follows. Lower is
better. No chat judge is involved: every value is a model log-likelihood.

Each aspect is one template ``(prefix, continuation)``; the continuation's tokens are the
scored ones. Templates with ``swap`` are scored twice, with expected/actual exchanged, and
the two ANLLs averaged, as H2O does for machine translation and summaries with reference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import polars as pl

from evalnb.evaluation.base import (
    Context,
    Evaluator,
    MetricSpec,
    Param,
    reasons,
    register,
    result_frame,
    threshold_param,
)
from evalnb.models.hf import load_scoring_lm
from evalnb.models.similarity import Segments, reduce_rows

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "QuestionAnsweringGPTScore",
    "SummaryGPTScore",
    "SummaryRefGPTScore",
    "TranslationGPTScore",
]

# The models H2O offers; any other local causal or seq2seq LM works too.
KNOWN_MODELS = (
    "gpt2-medium",
    "gpt2-large",
    "gpt2-xl",
    "EleutherAI/gpt-j-6b",
    *(f"google/flan-t5-{s}" for s in ("small", "base", "large", "xl", "xxl")),
    *(f"facebook/opt-{s}" for s in ("125m", "350m", "1.3b", "2.7b", "6.7b", "13b", "66b")),
)


@dataclass(frozen=True)
class _Aspect:
    key: str
    title: str
    question: str
    prefix: str  # with {a} (and {b} for templates that do not end with it)
    continuation: str  # with {b}, or a fixed text


def _metric(aspect: _Aspect, primary: bool) -> MetricSpec:
    return MetricSpec(
        aspect.key,
        aspect.title,
        aspect.question,
        min=0.0,
        max=math.inf,
        higher_is_better=False,
        threshold=math.inf,
        primary=primary,
    )


class _GPTScore(Evaluator):
    """Shared scoring: fill templates per row, one batched LM pass per aspect."""

    aspects: ClassVar[tuple[_Aspect, ...]]
    # Which row fields fill {a} and {b}; swap=True also scores the exchanged pair.
    fields: ClassVar[tuple[str, str]]
    swap: ClassVar[bool] = False
    params: ClassVar[tuple[Param, ...]] = (
        Param(
            "model",
            str,
            default="gpt2-medium",
            description=f"causal or seq2seq LM: a local folder or a hub name ({', '.join(KNOWN_MODELS[:3])}, …)",
        ),
        threshold_param(math.inf, "the primary aspect", high=None),
    )

    def __init_subclass__(cls, **kwargs: object) -> None:
        """Derive the required fields and the metric specs (first aspect primary)."""
        super().__init_subclass__(**kwargs)
        cls.requires = cls.fields
        cls.metrics = tuple(_metric(a, i == 0) for i, a in enumerate(cls.aspects))

    def score(self, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context) -> pl.DataFrame:  # noqa: ARG002
        """Score each aspect on the distinct (a, b) pairs; several references: the best (lowest)."""
        lm = load_scoring_lm(str(params["model"]), self.id)
        a_lists, b_lists = (_as_lists(rows[f]) for f in self.fields)
        # one (a, b) item per reference combination of a row
        items = [
            [(a, b) for a in al for b in bl if a.strip() and b.strip()]
            for al, bl in zip(a_lists, b_lists, strict=True)
        ]
        seg = Segments(np.array([len(i) for i in items], dtype=np.int64))
        flat = [p for row in items for p in row]
        pairs = list(dict.fromkeys(flat))
        where = {p: i for i, p in enumerate(pairs)}
        index = np.array([where[p] for p in flat], dtype=np.int64)
        errored = rows["error"].is_not_null().to_numpy()
        empty = seg.counts == 0
        values: dict[str, np.ndarray] = {}
        for aspect in self.aspects:
            per_pair = self._anll(lm, aspect, pairs)
            if self.swap:
                per_pair = (per_pair + self._anll(lm, aspect, [(b, a) for a, b in pairs])) / 2
            value = reduce_rows(per_pair[index], seg, "min")
            value[errored | empty] = np.nan
            values[aspect.key] = value
        a_col, b_col = self.fields
        why = reasons(
            rows.height,
            (empty, f"empty {a_col} or {b_col}: not scored"),
            (errored, "the model host failed to answer: not scored"),
        )
        return result_frame(rows, values, why)

    @staticmethod
    def _anll(lm: object, aspect: _Aspect, pairs: list[tuple[str, str]]) -> np.ndarray:
        if not pairs:
            return np.zeros(0)
        prefixes = [aspect.prefix.format(a=a, b=b) for a, b in pairs]
        continuations = [aspect.continuation.format(a=a, b=b) for a, b in pairs]
        return np.asarray(lm.continuation_nll(prefixes, continuations), dtype=np.float64)  # type: ignore[attr-defined]


def _as_lists(column: pl.Series) -> list[list[str]]:
    """Each row's texts: a list column as is (several references), a text as one item."""
    if isinstance(column.dtype, pl.List):
        return [list(v or []) for v in column.to_list()]
    return [[v or ""] for v in column.to_list()]


def _rewrite(key: str, title: str, question: str, instruction: str) -> _Aspect:
    return _Aspect(key, title, question, instruction + " {a} In other words,", " {b}")


@register
class TranslationGPTScore(_GPTScore):
    """Machine translation quality as the LM's ANLL of a rewrite (both directions)."""

    id = "gptscore_translation"
    title = "Machine Translation (GPTScore)"
    domain = "generation"
    description = (
        "ANLL of the text after 'In other words,' (expected ↔ actual, averaged). Lower is better."
    )
    fields = ("expected", "actual")
    swap = True
    aspects = (
        _rewrite(
            "accuracy",
            "Accuracy",
            "Are there inaccuracies, missing, or unfactual content in the generated text?",
            "Rewrite the following text with its core information and consistent facts:",
        ),
        _rewrite(
            "fluency",
            "Fluency",
            "Is the generated text well-written and grammatical?",
            "Rewrite the following text to make it more grammatical and well-written:",
        ),
        _rewrite(
            "multidimensional_quality_metrics",
            "Multidimensional quality metrics",
            "How is the overall quality of the generated text?",
            "Rewrite the following text into high-quality text with its core information:",
        ),
    )


def _dialogue(key: str, title: str, question: str) -> _Aspect:
    prefix = (
        "Answer the question based on the conversation between a human and AI.\n"
        f"Question: Are the responses of AI {question} (a) Yes. (b) No.\n"
        "Conversation: Human: {a}\nAI: {b}\n"
    )
    return _Aspect(key, title, f"Are the responses {question}", prefix, "Answer: Yes")


@register
class QuestionAnsweringGPTScore(_GPTScore):
    """Dialogue quality: the ANLL of "Answer: Yes" to a yes/no question about the answer."""

    id = "gptscore_qa"
    title = "Question Answering (GPTScore)"
    domain = "generation"
    description = (
        "ANLL of 'Answer: Yes' after a yes/no question on the conversation. Lower is better."
    )
    fields = ("prompt", "actual")
    aspects = (
        _dialogue("interest", "Interest", "interesting?"),
        _dialogue("engagement", "Engagement", "engaging?"),
        _dialogue("understandability", "Understandability", "understandable?"),
        _dialogue("relevance", "Relevance", "relevant to the conversation?"),
        _dialogue("specific", "Specific", "generic or specific to the conversation?"),
        _dialogue("correctness", "Correctness", "correct to conversations?"),
        _dialogue(
            "semantically_appropriate", "Semantically appropriate", "semantically appropriate?"
        ),
        _dialogue("fluency", "Fluency", "fluently written?"),
    )


@register
class SummaryRefGPTScore(_GPTScore):
    """Summary quality against a reference summary (both directions)."""

    id = "gptscore_summary_ref"
    title = "Summarization with reference (GPTScore)"
    domain = "summarization"
    description = (
        "ANLL of the text after 'In other words,' (reference ↔ summary, averaged). Lower is better."
    )
    fields = ("expected", "actual")
    swap = True
    aspects = (
        _rewrite(
            "semantic_coverage",
            "Semantic coverage",
            "How many semantic content units from the reference text are covered by the generated text?",
            "Rewrite the following text with the same semantics.",
        ),
        _rewrite(
            "factuality",
            "Factuality",
            "Does the generated text preserve the factual statements of the source text?",
            "Rewrite the following text with consistent facts.",
        ),
        _rewrite(
            "informativeness",
            "Informativeness",
            "How well does the generated text capture the key ideas of its source text?",
            "Rewrite the following text with its core information.",
        ),
        _rewrite(
            "coherence",
            "Coherence",
            "How much does the generated text make sense?",
            "Rewrite the following text into a coherent text.",
        ),
        _rewrite(
            "relevance",
            "Relevance",
            "How well is the generated text relevant to its source text?",
            "Rewrite the following text with consistent details.",
        ),
        _rewrite(
            "fluency",
            "Fluency",
            "Is the generated text well-written and grammatical?",
            "Rewrite the following text into a fluent and grammatical text.",
        ),
    )


def _tldr(key: str, title: str, question: str, instruction: str) -> _Aspect:
    return _Aspect(key, title, question, instruction + " {a} Tl;dr", " {b}")


@register
class SummaryGPTScore(_GPTScore):
    """Summary quality against its source (the prompt), with no reference."""

    id = "gptscore_summary"
    title = "Summarization without reference (GPTScore)"
    domain = "summarization"
    description = "ANLL of the summary after 'Tl;dr' following the source text. Lower is better."
    fields = ("prompt", "actual")
    aspects = (
        _tldr(
            "semantic_coverage",
            "Semantic coverage",
            "How many semantic content units of the source are covered?",
            "Generate a summary with as much semantic coverage as possible for the following text:",
        ),
        _tldr(
            "factuality",
            "Factuality",
            "Does the generated text preserve the factual statements of the source text?",
            "Generate a summary with consistent facts for the following text:",
        ),
        _tldr(
            "consistency",
            "Consistency",
            "Is the generated text consistent in the information it provides?",
            "Generate a factually consistent summary for the following text:",
        ),
        _tldr(
            "informativeness",
            "Informativeness",
            "How well does the generated text capture the key ideas of its source text?",
            "Generate an informative summary that captures the key points of the following text:",
        ),
        _tldr(
            "coherence",
            "Coherence",
            "How much does the generated text make sense?",
            "Generate a coherent summary for the following text:",
        ),
        _tldr(
            "relevance",
            "Relevance",
            "How well is the generated text relevant to its source text?",
            "Generate a relevant summary with consistent details for the following text:",
        ),
        _tldr(
            "fluency",
            "Fluency",
            "Is the generated text well-written and grammatical?",
            "Generate a fluent and grammatical summary for the following text:",
        ),
    )
