"""A hard budget: the tokens counted at the server never pass it, and a rerun finishes the job."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import polars as pl
import pytest

import evalnb
from evalnb.judges import Budget
from evalnb.llm.budget import upper_bound
from evalnb_testkit.llm_server import LoopbackLLM


class _Counted:
    """A judge that says how many tokens it used, and a tally of what it reported."""

    def __init__(self) -> None:
        self.tokens = 0
        self.lock = threading.Lock()

    def __call__(self, prompt: str) -> bytes:
        usage = {"prompt_tokens": 40 + len(prompt) // 8, "completion_tokens": 1}
        with self.lock:
            self.tokens += usage["prompt_tokens"] + usage["completion_tokens"]
        body = {
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "1"},
                    "finish_reason": "stop",
                }
            ],
            "usage": usage,
        }
        return json.dumps(body).encode()


def _lab(n: int) -> evalnb.Lab:
    return evalnb.load(
        pl.DataFrame(
            {
                "prompt": [f"question {i}" for i in range(n)],
                "actual": [f"answer {i}" for i in range(n)],
            }
        )
    )


def test_a_budget_is_never_exceeded_and_a_rerun_asks_only_what_was_refused(tmp_path: Path) -> None:
    lab = _lab(40)
    judge_replies = _Counted()
    with LoopbackLLM(raw=judge_replies) as server:
        judge = evalnb.LLMClient(server.base_url, "j", cache=tmp_path / "c.duckdb", concurrency=8)
        judge.capabilities()  # the format probe is not the run's to pay for
        probe = judge_replies.tokens
        cap = Budget(tokens=1_500, max_tokens=16)
        first = evalnb.evaluate(lab, "binary_judge", judge=judge, budget=cap, progress=False)
        spent = judge_replies.tokens - probe
        assert spent <= 1_500 and cap.spent_tokens <= 1_500
        assert spent == cap.spent_tokens  # the server's usage, to the token
        rows = first.scores.filter(pl.col("metric") == "binary_judge")
        left = rows.filter(pl.col("value").is_null())
        assert 0 < left.height < 40 and cap.refused == left.height
        reasons = [json.loads(d) for d in left["detail"]]
        assert all(r["budget_exhausted"] and "budget exhausted" in r["reason"] for r in reasons)
        asked = server.total_calls
        second = evalnb.evaluate(
            first, "binary_judge", judge=judge, budget=Budget(tokens=100_000), progress=False
        )
        assert server.total_calls - asked == left.height  # only the refused calls are made
    done = second.scores.filter(pl.col("metric") == "binary_judge")
    assert done.height == 40 and done["value"].null_count() == 0


def test_a_dollar_budget_needs_prices_and_a_judge() -> None:
    lab = _lab(2)
    with pytest.raises(ValueError, match="pass judge= too"):
        evalnb.evaluate(lab, "binary_judge", budget=1.0, progress=False)
    with pytest.raises(ValueError, match="caps tokens, usd or both"):
        Budget()
    with pytest.raises(ValueError, match="usd"):
        Budget(usd=float("nan"))
    refused = Budget(usd=1.0).reserve(
        {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 5}, None
    )
    assert isinstance(refused, str) and "no prices" in refused


def test_the_upper_bound_is_the_prompts_bytes_and_the_reply_cap() -> None:
    request = {"messages": [{"role": "user", "content": "héllo"}], "max_tokens": 7}
    assert upper_bound(request) == (8 + len("héllo".encode()) + 16, 7)
