"""Seed files of the agent and ragas formats for the mutation fuzz (tests/io/test_fuzz.py).

Small and valid, each reaching the reader's paths: tool calls with results, a run without
one, attachments, scores, spans of the OpenTelemetry GenAI and OpenInference conventions,
ragas' single- and multi-turn samples as JSONL and as the CSV its ``to_csv`` writes.
"""

from __future__ import annotations

import csv
import io
import json

__all__ = ["AGENT_SEEDS", "AGENT_TEXT_SEEDS", "FORMAT_OF"]

_CALL = {
    "id": "t1",
    "type": "function",
    "function": {"name": "weather", "arguments": json.dumps({"city": "Oslo"})},
}
_AGENT_CHAT = [
    {
        "id": "c1",
        "model": "a",
        "messages": [
            {"role": "system", "content": "Use the tool."},
            {"role": "user", "content": "Weather in Oslo?"},
            {"role": "assistant", "content": None, "tool_calls": [_CALL]},
            {"role": "tool", "tool_call_id": "t1", "content": "rain"},
            {"role": "assistant", "content": "Rain in Oslo."},
        ],
        "reference": "Rain.",
    },
    {"id": "c2", "model": "a", "messages": [{"role": "user", "content": "Hi"}]},
]
_TURNS = [
    {"content": "Weather in Oslo?", "type": "human"},
    {
        "content": "",
        "type": "ai",
        "tool_calls": [{"name": "weather", "args": {"city": "Oslo"}}],
    },
    {"content": "rain", "type": "tool"},
    {"content": "Rain in Oslo.", "type": "ai"},
]
_RAGAS_TURNS = [
    {
        "user_input": _TURNS,
        "reference": "Rain.",
        "reference_tool_calls": [{"name": "weather", "args": {"city": "Oslo"}}],
    },
    {"user_input": _TURNS[:1] + _TURNS[3:], "reference_topics": ["weather"]},
]
_RAGAS = [
    {
        "user_input": "Capital of France?",
        "retrieved_contexts": ["Paris is the capital.", "Lyon."],
        "response": "Paris.",
        "reference": "Paris",
        "rubrics": {"score1_description": "wrong", "score5_description": "right"},
        "retrieved_context_ids": ["d1", "d2"],
    },
    {"user_input": "[URGENT] reset", "response": "[2, 3]", "reference_contexts": ["r"]},
]


def _ragas_csv(records: list[dict[str, object]]) -> str:
    """Write records as ragas' ``to_csv`` does: a DictWriter, ``str()`` of every value."""
    out = io.StringIO()
    fields = list(dict.fromkeys(k for r in records for k in r))
    writer = csv.DictWriter(out, fieldnames=fields)
    writer.writeheader()
    writer.writerows(records)
    return out.getvalue()


_INSPECT = {
    "version": 2,
    "status": "success",
    "eval": {"model": "openai/m", "task": "weather", "task_id": "t", "run_id": "r"},
    "samples": [
        {
            "id": 1,
            "epoch": 1,
            "input": "Weather in Oslo?",
            "target": "rain",
            "attachments": {"a1": "It rains in Oslo today, as it often does."},
            "messages": [
                {"role": "user", "content": "Weather in Oslo?"},
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {"id": "t1", "function": "weather", "arguments": {"city": "Oslo"}}
                    ],
                },
                {"role": "tool", "tool_call_id": "t1", "content": "attachment://a1"},
                {"role": "assistant", "content": "Rain."},
            ],
            "output": {"completion": "Rain."},
            "scores": {"match": {"value": "C", "answer": "Rain."}, "f1": {"value": 0.5}},
        },
        {"id": "2", "epoch": 2, "input": "Hi", "target": ["hello"], "messages": []},
    ],
}


def _attr(key: str, value: object) -> dict[str, object]:
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def _span(span_id: str, parent: str | None, start: int, attrs: dict[str, object]) -> object:
    span: dict[str, object] = {
        "traceId": "5b8efff798038103d269b633813fc60c",
        "spanId": span_id,
        "name": span_id,
        "startTimeUnixNano": str(start * 10**9),
        "endTimeUnixNano": str(start * 10**9 + 10**8),
        "attributes": [_attr(k, v) for k, v in attrs.items()],
    }
    if parent:
        span["parentSpanId"] = parent
    return span


def _otlp(spans: list[object]) -> dict[str, object]:
    return {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}


_USER = [{"role": "user", "parts": [{"type": "text", "content": "Weather in Oslo?"}]}]
_GENAI_CALL = {
    "role": "assistant",
    "parts": [{"type": "tool_call", "id": "t1", "name": "weather", "arguments": {"city": "Oslo"}}],
}
_GENAI = _otlp(
    [
        _span("a1", None, 0, {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "f"}),
        _span(
            "l1",
            "a1",
            1,
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps(_USER),
                "gen_ai.output.messages": json.dumps([_GENAI_CALL]),
                "gen_ai.usage.input_tokens": 20,
            },
        ),
        _span(
            "t1",
            "a1",
            2,
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "weather",
                "gen_ai.tool.call.id": "t1",
                "gen_ai.tool.call.result": "rain",
            },
        ),
    ]
)
_OPENINFERENCE = _otlp(
    [
        _span(
            "a1",
            None,
            0,
            {"openinference.span.kind": "AGENT", "agent.name": "b", "input.value": "Hi?"},
        ),
        _span(
            "l1",
            "a1",
            1,
            {
                "openinference.span.kind": "LLM",
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": "Hi?",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.tool_calls.0.tool_call.id": "t1",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "lookup",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": "{}",
                "llm.token_count.total": 12,
            },
        ),
        _span(
            "t1",
            "a1",
            2,
            {
                "openinference.span.kind": "TOOL",
                "tool.name": "lookup",
                "tool_call.id": "t1",
                "output.value": "found",
            },
        ),
    ]
)

# kind -> (file name, document): JSONL names hold one record per line.
AGENT_SEEDS: dict[str, tuple[str, object]] = {
    "agent_chat": ("chat.jsonl", _AGENT_CHAT),
    "ragas": ("ragas.jsonl", _RAGAS),
    "ragas_turns": ("turns.jsonl", _RAGAS_TURNS),
    "inspect_log": ("inspect.json", _INSPECT),
    "agent_spans": ("genai.json", _GENAI),
    "openinference": ("openinference.jsonl", [_OPENINFERENCE]),
}
AGENT_TEXT_SEEDS = {
    "ragas_csv": ("ragas.csv", _ragas_csv(_RAGAS)),
    "ragas_turns_csv": ("turns.csv", _ragas_csv(_RAGAS_TURNS)),
}
# The format each kind is read as when not detected.
FORMAT_OF = {
    "ragas_turns": "agent_chat",
    "ragas_csv": "ragas",
    "ragas_turns_csv": "ragas",
    "openinference": "agent_spans",
}
