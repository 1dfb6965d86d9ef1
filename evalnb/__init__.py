"""evalnb: evaluate LLM and RAG systems in Jupyter, on Polars tables persisted in DuckDB."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from evalnb import transforms
from evalnb._condition import ConditionError
from evalnb._errors import EvalnbError, InputError, StoreError
from evalnb._evaluate import evaluate, evaluators
from evalnb._eye import Eye, eye
from evalnb._failures import FailureClusters
from evalnb._hosts import run_suite
from evalnb._judge_tools import pairwise
from evalnb._lab import Lab
from evalnb._lab import open_lab as open  # noqa: A004 - `evalnb.open(path)` is the public name
from evalnb._labeler import Labeler, labeler
from evalnb._llm import ChatResult, LLMClient
from evalnb._load import FORMATS, detect_format, load
from evalnb._richtable import RichTable, table
from evalnb._schema import SCHEMAS, TABLES
from evalnb._topics import TopicModel, topics
from evalnb._weakness import Weakness, weakness

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
