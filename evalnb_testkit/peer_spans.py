"""Run by tests/io/test_agents.py in the peers' environment (OpenInference, OpenTelemetry).

Traces a small agent for real: the OpenAI client, instrumented by OpenInference, talks to
the loopback chat server (which plays a tool-calling model); the agent loop opens AGENT and
TOOL spans with OpenInference's attributes, one session per conversation; one tool fails.
Writes the spans under ``argv[1]`` as flat spans (``span.to_json()``, one per line) and as
OTLP JSON (the protobuf export request in its JSON mapping), and prints what each
conversation did as JSON.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

warnings.simplefilter("ignore")
sys.path.insert(0, str(Path(__file__).parent))

from google.protobuf.json_format import MessageToDict  # noqa: E402
from llm_server import LoopbackLLM  # noqa: E402
from openai import OpenAI  # noqa: E402
from openinference.instrumentation import using_session  # noqa: E402
from openinference.instrumentation.openai import OpenAIInstrumentor  # noqa: E402
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)
from opentelemetry.trace import Status, StatusCode  # noqa: E402

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Look a city up.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def model(messages: list[dict[str, object]]) -> str | list[dict[str, object]]:
    """Call lookup once per city in the question, then answer from the results."""
    results = [m for m in messages if m["role"] == "tool"]
    question = next(str(m["content"]) for m in messages if m["role"] == "user")
    cities = [w.strip("?,.") for w in question.split() if w[:1].isupper()][1:]
    if len(results) < len(cities):
        return [{"name": "lookup", "arguments": json.dumps({"city": cities[len(results)]})}]
    return "; ".join(str(m["content"]) for m in results)


def lookup(city: str) -> str:
    if city == "Atlantis":
        msg = "no such city"
        raise LookupError(msg)
    return f"{city} has {len(city)} letters"


def main() -> None:
    out = Path(sys.argv[1])
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    tracer = provider.get_tracer("peer-agent")
    expected = []
    with LoopbackLLM(agent=model) as server:
        client = OpenAI(base_url=server.base_url, api_key="sk-loopback")
        questions = ["Tell me about Paris", "Compare Lima and Oslo", "Where is Atlantis?"]
        for agent in ("agent-a", "agent-b"):
            for i, question in enumerate(questions):
                calls, errors = [], []
                with (
                    using_session(f"{agent}-{i}"),
                    tracer.start_as_current_span(
                        "agent",
                        attributes={
                            "openinference.span.kind": "AGENT",
                            "agent.name": agent,
                            "input.value": question,
                        },
                    ) as span,
                ):
                    messages: list[dict[str, object]] = [
                        {"role": "system", "content": "Use the tool."},
                        {"role": "user", "content": question},
                    ]
                    while True:
                        reply = client.chat.completions.create(
                            model=f"{agent}-llm", messages=messages, tools=TOOLS
                        )  # type: ignore[arg-type]
                        msg = reply.choices[0].message
                        if not msg.tool_calls:
                            answer = msg.content or ""
                            break
                        messages.append(msg.model_dump(exclude_none=True))
                        for call in msg.tool_calls:
                            args = json.loads(call.function.arguments)
                            calls.append((call.function.name, args))
                            with tracer.start_as_current_span(
                                "lookup",
                                attributes={
                                    "openinference.span.kind": "TOOL",
                                    "tool.name": "lookup",
                                    "tool.parameters": call.function.arguments,
                                    "input.value": call.function.arguments,
                                    "tool_call.id": call.id,
                                },
                            ) as tool_span:
                                try:
                                    result = lookup(**args)
                                except LookupError as exc:
                                    result = f"error: {exc}"
                                    errors.append(str(exc))
                                    tool_span.set_status(Status(StatusCode.ERROR, str(exc)))
                                tool_span.set_attribute("output.value", result)
                            messages.append(
                                {"role": "tool", "tool_call_id": call.id, "content": result}
                            )
                    span.set_attribute("output.value", answer)
                expected.append(
                    {
                        "agent": agent,
                        "question": question,
                        "calls": calls,
                        "errors": errors,
                        "answer": answer,
                    }
                )
    spans = exporter.get_finished_spans()
    with (out / "spans.jsonl").open("w") as f:
        for s in spans:
            f.write(json.dumps(json.loads(s.to_json())) + "\n")
    (out / "otlp.json").write_text(json.dumps(MessageToDict(encode_spans(spans))))
    print(json.dumps(expected))


if __name__ == "__main__":
    main()
