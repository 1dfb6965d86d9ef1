"""Test generation from a corpus: generators, topic balance, near-duplicate removal.

May import ``evaluation``, ``io``, ``llm``, ``models``, ``text`` and ``lab``.
"""

from __future__ import annotations

from evalnb.generation.judge_free import JUDGE_FREE
from evalnb.generation.suite import generate_cases

__all__ = ["JUDGE_FREE", "generate_cases"]
