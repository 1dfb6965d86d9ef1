"""Evaluators: the contract, the catalog, the engine that scores a lab, one module per family.

Families (``bleu``, ``rouge``, ``text_matching`` with H2O's condition language, ``leakage``,
``encoding``, ``rules``, ``looping``, ``embedding``, ``model_backed``, ``gptscore``,
``summarization``, ``judges``, ``ragas``) import only ``base``; ``catalog`` imports them
lazily.

May import ``llm``, ``models``, ``text``, ``lab``.
"""

from __future__ import annotations

from evalnb.evaluation.base import Context, Evaluator, MetricSpec, Param, register
from evalnb.evaluation.catalog import get_evaluator
from evalnb.evaluation.condition import ConditionError
from evalnb.evaluation.engine import evaluate, evaluators

__all__ = [
    "ConditionError",
    "Context",
    "Evaluator",
    "MetricSpec",
    "Param",
    "evaluate",
    "evaluators",
    "get_evaluator",
    "register",
]
