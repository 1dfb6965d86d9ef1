"""LLM endpoints: the OpenAI-compatible client, model hosts, judge prompts and parsers.

The format contract a judge's server honours (``contract``), the tolerant reader of its
replies (``reader``), probabilities from its tokens (``probabilities``), cost estimates
(``estimate``) and a local llama.cpp judge (``local_judge``).

May import ``lab``.
"""

from __future__ import annotations

from evalnb.llm.client import ChatResult, LLMClient
from evalnb.llm.hosts import run_suite

__all__ = ["ChatResult", "LLMClient", "run_suite"]
