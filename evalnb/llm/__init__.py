"""LLM endpoints: the OpenAI-compatible client, model hosts, judge prompts and parsers.

``pairwise`` compares two models' answers through a judge, asked in both positions.

May import ``lab``.
"""

from __future__ import annotations

from evalnb.llm.client import ChatResult, LLMClient
from evalnb.llm.hosts import run_suite

__all__ = ["ChatResult", "LLMClient", "run_suite"]
