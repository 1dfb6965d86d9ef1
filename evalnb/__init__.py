"""evalnb: evaluate LLM and RAG systems in Jupyter, on Polars tables persisted in DuckDB.

The public API is what this module and :mod:`evalnb.transforms` export. The subpackages
hold the implementation by concern, lowest layer last (``docs/architecture.md`` has the
map; ``lint-imports`` checks the direction): ``cli`` → ``workflow`` → ``api`` →
``widgets`` → ``team`` | ``monitoring`` → ``transforms`` → ``analysis`` | ``calibration`` | ``diagnosis`` |
``generation`` | ``robustness`` → ``evaluation`` | ``io`` → ``llm`` | ``models`` | ``text``
→ ``lab``.
"""

from __future__ import annotations

import importlib
import warnings
from typing import TYPE_CHECKING

from evalnb import (
    decisions,  # the doors: from evalnb.decisions import decide, plan
    judges,
    testing,
    transforms,
)
from evalnb.analysis.rendered import Report
from evalnb.analysis.tables import RichTable, table
from evalnb.api.adversarial import adversarial
from evalnb.api.corpus import (
    Corpus,
    NoTopicsWarning,
    corpus,
    generate_tests,
    generation_report,
    retrieval_baseline,
)
from evalnb.api.lab import Lab, load
from evalnb.api.lab import open_lab as open  # noqa: A004 - `evalnb.open(path)` is the public name
from evalnb.api.monitoring import Monitor, monitor
from evalnb.api.validation import Validation, validate_tests
from evalnb.calibration.bundle import load_calibration
from evalnb.diagnosis.failure_clusters import FailureClusters
from evalnb.diagnosis.topics import TopicModel, topics
from evalnb.evaluation.base import Evaluator, MetricSpec, Param, register, result_frame
from evalnb.evaluation.custom import evaluator
from evalnb.evaluation.engine import NothingScoredWarning, evaluate, evaluators
from evalnb.evaluation.families.text.condition import ConditionError
from evalnb.evaluation.ray_engine import RayEngine
from evalnb.io.documents import DocumentLimits
from evalnb.io.load import FORMATS, detect_format
from evalnb.judge_reliability.cascade import cascade
from evalnb.lab.errors import EvalnbError, InputError, StoreConflict, StoreError, TableTooLarge
from evalnb.lab.schema import SCHEMAS, TABLES
from evalnb.lab.version import __version__
from evalnb.llm.client import LLMClient
from evalnb.llm.hosts import run_suite
from evalnb.llm.local_judge import local_judge
from evalnb.llm.retrievers import run_retriever
from evalnb.team.publish import review
from evalnb.team.queue import ReviewError, ReviewItem, ReviewQueue, ReviewUnavailable
from evalnb.workflow import StepWaiting, Workflow, workflow

if TYPE_CHECKING:
    from evalnb.widgets.curator import Curator, curator
    from evalnb.widgets.eye import Eye, eye
    from evalnb.widgets.judge_card_view import JudgeCardView
    from evalnb.widgets.labeler import Labeler, labeler
    from evalnb.widgets.weakness import Weakness, weakness

# The widgets (anywidget, ipywidgets, IPython: half a second) load on first use, so a
# command line or a script that draws nothing starts without them.
_WIDGETS = {
    "Curator": "curator",
    "curator": "curator",
    "Eye": "eye",
    "eye": "eye",
    "JudgeCardView": "judge_card_view",
    "Labeler": "labeler",
    "labeler": "labeler",
    "Weakness": "weakness",
    "weakness": "weakness",
}


# Names that moved to a door of their own: they answer here one release more, warning.
_MOVED = {
    **dict.fromkeys(
        (
            "Capabilities",
            "ChatResult",
            "ContractError",
            "EndpointUnreachable",
            "Estimate",
            "JudgeCard",
            "LocalJudgeError",
            "estimate",
            "pairwise",
            "rubric_judge",
        ),
        "judges",
    ),
    **dict.fromkeys(("Decision", "Plan", "Sequential", "plan", "sequential"), "decisions"),
}


def __getattr__(name: str) -> object:
    door = _MOVED.get(name)
    if door is not None:
        warnings.warn(
            f"evalnb.{name} is now evalnb.{door}.{name} (from evalnb.{door} import {name}); "
            "the top-level name goes in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(f"evalnb.{door}"), name)
    module = _WIDGETS.get(name)
    if module is None:
        msg = f"module 'evalnb' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(f"evalnb.widgets.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "FORMATS",
    "SCHEMAS",
    "TABLES",
    "ConditionError",
    "Corpus",
    "Curator",
    "DocumentLimits",
    "EvalnbError",
    "Evaluator",
    "Eye",
    "FailureClusters",
    "InputError",
    "JudgeCardView",
    "LLMClient",
    "Lab",
    "Labeler",
    "MetricSpec",
    "Monitor",
    "NoTopicsWarning",
    "NothingScoredWarning",
    "Param",
    "RayEngine",
    "Report",
    "ReviewError",
    "ReviewItem",
    "ReviewQueue",
    "ReviewUnavailable",
    "RichTable",
    "StepWaiting",
    "StoreConflict",
    "StoreError",
    "TableTooLarge",
    "TopicModel",
    "Validation",
    "Weakness",
    "Workflow",
    "__version__",
    "adversarial",
    "cascade",
    "corpus",
    "curator",
    "decisions",
    "detect_format",
    "evaluate",
    "evaluator",
    "evaluators",
    "eye",
    "generate_tests",
    "generation_report",
    "judges",
    "labeler",
    "load",
    "load_calibration",
    "local_judge",
    "monitor",
    "open",
    "register",
    "result_frame",
    "retrieval_baseline",
    "review",
    "run_retriever",
    "run_suite",
    "table",
    "testing",
    "topics",
    "transforms",
    "validate_tests",
    "weakness",
    "workflow",
]
