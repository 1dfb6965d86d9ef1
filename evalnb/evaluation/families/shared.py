"""What several drawers of evaluator families share: H2O's pass/fail metrics, the embedding model.

Each name here is used by families in more than one drawer; a helper used within one drawer
stays in that drawer.
"""

from __future__ import annotations

from evalnb.evaluation.base import MetricSpec, Param
from evalnb.models.resolve import DEFAULT_MODEL, used_model

__all__ = ["EMBEDDING_MODEL", "bool_metrics"]


def bool_metrics(subject: str) -> tuple[MetricSpec, ...]:
    """H2O's five pass/fail metrics worded for ``subject``."""
    return (
        MetricSpec(
            "model_passes",
            "Model passes",
            f"Share of outputs that satisfy {subject}.",
            primary=True,
        ),
        MetricSpec(
            "model_failures",
            "Model failures",
            f"Share of outputs that fail {subject}.",
            higher_is_better=False,
        ),
        MetricSpec(
            "model_retrieval_failures",
            "Model retrieval failures",
            f"Share of retrieved contexts that fail {subject}.",
            higher_is_better=False,
        ),
        MetricSpec(
            "model_generation_failures",
            "Model generation failures",
            f"Share of generated answers that fail {subject}.",
            higher_is_better=False,
        ),
        MetricSpec(
            "model_parse_failures",
            "Model parse failures",
            "Share of outputs the evaluator could not parse or score.",
            higher_is_better=False,
        ),
    )


EMBEDDING_MODEL = Param(
    "model",
    str,
    default=DEFAULT_MODEL,
    description="sentence-transformers model: name or local folder (the model "
    "used is recorded: all-MiniLM-L6-v2 when H2O's default is not "
    "cached here)",
    normalize=lambda m: used_model(str(m)),
)
"""The sentence-transformers model parameter of the embedding-based metrics (ragas' too)."""
