"""Hostile agent, trace and cache inputs (issue 43): right results, bounded time and memory.

Times are measured in ``bench/bench_hostile_agents.py``; here each case checks the result
(and that it ends), never a duration.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

import evalnb


def _conversation(calls: list[str], results: list[tuple[str | None, str]]) -> dict[str, object]:
    """One assistant message calling ``calls`` (ids), then tool messages ``(id, content)``."""
    return {
        "messages": [
            {"role": "user", "content": "do it"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": c, "type": "function", "function": {"name": f"t{k}", "arguments": "{}"}}
                    for k, c in enumerate(calls)
                ],
            },
            *(
                {"role": "tool", "content": text, **({"tool_call_id": i} if i else {})}
                for i, text in results
            ),
            {"role": "assistant", "content": "done"},
        ]
    }


def _call_results(tmp_path: Path, record: dict[str, object]) -> pl.DataFrame:
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    steps = evalnb.load(path, format="agent_chat").steps
    return steps.filter(pl.col("role") == "assistant", pl.col("tool_name").is_not_null())


def test_results_answered_in_reverse_order_reach_their_calls(tmp_path: Path) -> None:
    n = 4_000  # quadratic before: 1.8 s at 4k, 63 s at 32k (bench_hostile_agents: 32k)
    ids = [f"c{k}" for k in range(n)]
    record = _conversation(ids, [(i, f"result of {i}") for i in reversed(ids)])
    calls = _call_results(tmp_path, record)
    assert calls["tool_result"].to_list() == [f"result of {i}" for i in ids]


def test_calls_sharing_an_id_are_answered_in_order_and_every_result_is_kept(
    tmp_path: Path,
) -> None:
    record = _conversation(
        ["x", "x", "y", "x"], [("x", "r1"), ("y", "ry"), ("x", "r2"), ("x", "r3"), ("x", "late")]
    )
    calls = _call_results(tmp_path, record)
    assert calls["tool_result"].to_list() == ["r1", "r2", "ry", "r3"]
    tools = evalnb.load(tmp_path / "run.jsonl", format="agent_chat").steps.filter(
        pl.col("role") == "tool"
    )
    # The late fifth result keeps its own row, named after the last call with its id.
    assert tools["content"].to_list() == ["r1", "ry", "r2", "r3", "late"]
    assert tools["tool_name"].to_list() == ["t0", "t2", "t1", "t3", "t3"]


def test_results_without_ids_answer_the_earliest_open_call(tmp_path: Path) -> None:
    record = _conversation(["a", "b", "c"], [("b", "rb"), (None, "first open"), (None, "next")])
    calls = _call_results(tmp_path, record)
    assert calls["tool_result"].to_list() == ["first open", "rb", "next"]
