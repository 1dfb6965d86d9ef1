"""Weakness detection: topic modeling, rule-based question types, failure clustering.

The grid's tables are public in :mod:`evalnb.transforms`, its widget in
:mod:`evalnb.widgets`.

May import ``evaluation``, ``io`` and the layers below them.
"""

from __future__ import annotations

from evalnb.diagnosis.failure_clusters import FailureClusters
from evalnb.diagnosis.question_types import classify_questions, set_question_types
from evalnb.diagnosis.topics import TopicModel

__all__ = ["FailureClusters", "TopicModel", "classify_questions", "set_question_types"]
