"""evalnb: evaluate LLM and RAG systems in Jupyter, on Polars tables persisted in DuckDB."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from evalnb import transforms
from evalnb.evaluators.condition import ConditionError
from evalnb.lab.errors import EvalnbError, InputError, StoreError
from evalnb.evaluators.engine import evaluate, evaluators
from evalnb.widgets.eye import Eye, eye
from evalnb.weakness.failure_clusters import FailureClusters
from evalnb.llm.hosts import run_suite
from evalnb.llm.pairwise import pairwise
from evalnb.lab.core import Lab
from evalnb.lab.core import open_lab as open  # noqa: A004 - `evalnb.open(path)` is the public name
from evalnb.widgets.labeler import Labeler, labeler
from evalnb.llm.client import ChatResult, LLMClient
from evalnb.io.load import FORMATS, detect_format, load
from evalnb.analysis.tables import RichTable, table
from evalnb.lab.schema import SCHEMAS, TABLES
from evalnb.weakness.topics import TopicModel, topics
from evalnb.widgets.grid import Weakness, weakness

try:
    __version__ = version("evalnb")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "FORMATS",
    "SCHEMAS",
    "TABLES",
    "ChatResult",
    "ConditionError",
    "EvalnbError",
    "Eye",
    "FailureClusters",
    "InputError",
    "LLMClient",
    "Lab",
    "Labeler",
    "RichTable",
    "StoreError",
    "TopicModel",
    "Weakness",
    "__version__",
    "detect_format",
    "evaluate",
    "evaluators",
    "eye",
    "labeler",
    "load",
    "open",
    "pairwise",
    "run_suite",
    "table",
    "topics",
    "transforms",
    "weakness",
]
