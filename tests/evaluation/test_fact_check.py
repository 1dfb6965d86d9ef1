"""H2O's agent-based fact-check, with the loopback server playing a tool-calling judge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import evalnb
from evalnb.evaluation.families.judges.fact_check import ContextSearch
from evalnb_testkit.llm_server import LoopbackLLM

CONTEXTS = [
    "Paris is the capital of France.",
    "The Loire is the longest river in France.",
    "Mont Blanc is the highest mountain in the Alps.",
]


def _answer_of(messages: list[dict[str, Any]]) -> str:
    prompt = str(messages[0]["content"])
    return prompt.split("[BEGIN ACTUAL ANSWER]\n", 1)[1].split("\n[END ACTUAL ANSWER]", 1)[0]


def _judge(messages: list[dict[str, Any]]) -> str | list[dict[str, object]]:
    """Search once (or as scripted), then score: 1 when the search supports the answer."""
    answer = _answer_of(messages)
    results = [str(m["content"]) for m in messages if m["role"] == "tool"]
    if "[[loop]]" in answer:
        return [{"name": "search_context", "arguments": '{"query": "again"}'}]
    if "[[badargs]]" in answer and not results:
        return [{"name": "search_context", "arguments": "{oops"}]
    if "[[web]]" in answer and not results:
        return [{"name": "web_search", "arguments": json.dumps({"q": "Everest height"})}]
    if not [r for r in results if not r.startswith("error:")]:  # none yet, or only failures
        subject = answer.split(" is ")[0].replace("The ", "").replace("[[badargs]] ", "")
        return [{"name": "search_context", "arguments": json.dumps({"query": subject})}]
    if "[[garbled]]" in answer:
        return "I think it is fine."
    claim = answer.rstrip(".").split(" is ")[-1].lower()
    ok = any(claim in r.lower() for r in results)
    return json.dumps(
        {
            "answer": answer,
            "evaluation_score": 1.0 if ok else 0.0,
            "evaluation_summary": f"searched; the claim '{claim}' is "
            f"{'supported' if ok else 'contradicted'}",
        }
    )


def _lab(answers: list[str]) -> evalnb.Lab:
    return evalnb.load(
        pl.DataFrame(
            {
                "prompt": [f"q{i}" for i in range(len(answers))],
                "actual": answers,
                "context": [CONTEXTS] * len(answers),
            }
        )
    )


def test_the_agent_searches_the_contexts_and_its_verdicts_are_read(tmp_path: Path) -> None:
    lab = _lab(
        [
            "Paris is the capital of France.",
            "The capital of France is London.",
            "Mont Blanc is the highest mountain in the Alps.",
            "[[garbled]] Loire is long.",
            "[[loop]] Loire is long.",
            "[[badargs]] The Loire is the longest river in France.",
        ]
    )
    with LoopbackLLM(agent=_judge) as server:
        judge = evalnb.LLMClient(server.base_url, "checker", cache=tmp_path / "c.duckdb")
        scored = evalnb.evaluate(lab, ["fact_check"], judge=judge, max_steps=3, progress=False)
        calls = sum(server.calls.values())
        again = evalnb.evaluate(lab, ["fact_check"], judge=judge, max_steps=3, progress=False)
        assert sum(server.calls.values()) == calls  # cached: resumable, nothing asked twice
    rows = scored.scores.join(scored.cases.select("case_id", "prompt"), on="case_id").sort("prompt")
    assert rows["value"].to_list() == [1.0, 0.0, 1.0, None, None, 1.0]
    details = [json.loads(d) for d in rows["detail"]]
    assert details[0]["tool_calls"][0]["tool"] == "search_context"
    assert "Paris is the capital" in details[0]["tool_calls"][0]["result"]
    assert "contradicted" in details[1]["explanation"]
    assert details[3]["parse_failed"] and "not understood" in details[3]["reason"]
    assert details[4]["parse_failed"] and "max_steps=3" in details[4]["reason"]
    assert "not valid JSON" in details[5]["tool_calls"][0]["error"]  # a malformed call: its error
    assert again.scores.equals(scored.scores)
    assert scored.leaderboard().filter(evaluator="fact_check")["mean"].item() == pytest.approx(0.75)


def test_user_tools_are_offered_and_recorded(tmp_path: Path) -> None:
    seen: list[str] = []

    def web_search(q: str) -> str:
        """Search the web."""
        seen.append(q)
        return "Mount Everest is 8,849 m high."

    lab = _lab(["[[web]] Everest is 8,849 m high."])
    with LoopbackLLM(agent=_judge) as server:
        judge = evalnb.LLMClient(server.base_url, "checker", cache=tmp_path / "c.duckdb")
        scored = evalnb.evaluate(
            lab, ["fact_check"], judge=judge, tools={"web_search": web_search}, progress=False
        )
    assert seen == ["Everest height"]
    assert scored.scores["value"].to_list() == [1.0]
    params = json.loads(scored.scores["params"].item())
    assert "web_search" in params["tools"] and params["judge_model"].startswith("checker@")
    with pytest.raises(TypeError, match="map tool names to Python callables"):
        evalnb.evaluate(lab, ["fact_check"], judge=judge, tools={"web": "not callable"})
    with pytest.raises(ValueError, match="needs an LLM judge"):
        evalnb.evaluate(lab, ["fact_check"], progress=False)


def test_context_search_ranks_by_bm25() -> None:
    search = ContextSearch([*CONTEXTS, "France France France France is a country."], top=2)
    first = search("longest river").split("\n\n")[0]
    assert first.startswith("[1] The Loire")
    assert search("zzz") == "no passages found"
    assert ContextSearch([])("x") == "no passages found"
