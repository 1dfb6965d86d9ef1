"""A realistic, deterministic demo of agents: a travel desk's assistant run by three agents.

Each case is a traveller's request with the tool calls it needs (flights, weather, currency,
hotels, the desk's policies). Three agents run every case against the same simulated tools:

* ``atlas`` is careful: the right tools with the right arguments, slower and dearer;
* ``breeze`` is fast and cheap but sometimes skips a tool or sends a wrong argument;
* ``cirrus`` retries the weather service when it fails (the same call again: loops).

The weather service fails now and then for everyone. Runs are written as OpenAI chat
conversations and read back through :func:`evalnb.load`'s agent reader, so the demo goes
through the same path as a user's file. ``python -m evalnb.api.demo_agents
data/demo_agents.jsonl`` regenerates ``data/demo_agents.jsonl``; the suite checks that the
committed file is what this module produces.
"""

from __future__ import annotations

import json
import random
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalnb.api.lab import Lab
from evalnb.io.agents import AgentReader
from evalnb.io.builder import LabBuilder
from evalnb.io.fields import Where

__all__ = ["build_demo_agents"]

_SEED = 20261126
_CITIES = ["Lisbon", "Oslo", "Kyoto", "Lima", "Nairobi", "Denver", "Hanoi", "Porto", "Quito"]
_CURRENCIES = {
    "Lisbon": "EUR",
    "Oslo": "NOK",
    "Kyoto": "JPY",
    "Lima": "PEN",
    "Nairobi": "KES",
    "Denver": "USD",
    "Hanoi": "VND",
    "Porto": "EUR",
    "Quito": "USD",
}
_RATES = {
    "EUR": 0.92,
    "NOK": 10.6,
    "JPY": 151.0,
    "PEN": 3.7,
    "KES": 129.0,
    "USD": 1.0,
    "VND": 25400.0,
}
_POLICIES = {
    "baggage": "one checked bag up to 23 kg is included",
    "cancellation": "free cancellation up to 48 hours before departure",
    "pets": "pets under 8 kg may travel in the cabin",
}
_SYSTEM = "You are the Northwind travel desk assistant. Use the tools; never guess prices."


@dataclass(frozen=True)
class _Agent:
    name: str
    step_s: float  # seconds per model call
    price: float  # cost per model call
    skip: float  # chance to skip a needed tool
    bad_args: float  # chance to send a wrong argument
    retries: int  # repeated calls after a tool error


_AGENTS = (
    _Agent("atlas", 2.4, 0.012, 0.02, 0.02, 0),
    _Agent("breeze", 0.7, 0.002, 0.18, 0.12, 0),
    _Agent("cirrus", 1.3, 0.005, 0.05, 0.04, 2),
)


def _stable(*parts: object) -> int:
    return zlib.crc32("|".join(map(str, parts)).encode())


def _tool(name: str, args: dict[str, Any], attempt: int | None) -> tuple[str, str | None]:
    """Run a simulated tool: a result, or an error (the weather service fails now and then).

    ``attempt`` None: the service as it should answer (the expected answer's facts).
    """
    if name == "search_flights":
        price = 180 + _stable(args.get("origin"), args.get("destination")) % 900
        return (
            f"Cheapest flight {args.get('origin')}→{args.get('destination')} on "
            f"{args.get('date')}: {price} USD, 1 stop.",
            None,
        )
    if name == "get_weather":
        if attempt is not None and _stable(args.get("city"), args.get("date"), attempt) % 100 < 42:
            return "", "weather service timeout (504)"
        temp = 4 + _stable(args.get("city"), args.get("date")) % 28
        return f"{args.get('city')} on {args.get('date')}: {temp} °C, light wind.", None
    if name == "convert_currency":
        to = str(args.get("to"))
        if to not in _RATES:
            return "", f"unknown currency {to!r}"
        value = float(args.get("amount", 0)) * _RATES[to]
        return f"{args.get('amount')} USD = {value:,.0f} {to}", None
    if name == "book_hotel":
        nightly = 60 + _stable(args.get("city")) % 240
        return (
            f"Hotel held in {args.get('city')}: {args.get('nights')} nights at {nightly} "
            "USD a night.",
            None,
        )
    if name == "lookup_policy":
        return _POLICIES.get(str(args.get("topic")), "no such policy"), None
    return "", f"no tool {name!r}"  # pragma: no cover - the agents only call these


def _task(rng: random.Random) -> tuple[str, str, list[tuple[str, dict[str, Any]]]]:
    """Return (topic, request, reference calls)."""
    a, b = rng.sample(_CITIES, 2)
    date = f"2027-0{rng.randint(1, 9)}-{rng.randint(10, 28)}"
    kind = rng.choice(["flights", "weather", "money", "hotels", "policy", "trip"])
    if kind == "flights":
        return (
            kind,
            f"Find me a flight from {a} to {b} on {date}.",
            [("search_flights", {"origin": a, "destination": b, "date": date})],
        )
    if kind == "weather":
        return (
            kind,
            f"What will the weather be in {b} on {date}?",
            [("get_weather", {"city": b, "date": date})],
        )
    if kind == "money":
        amount = rng.choice([50, 120, 300, 1000])
        cur = _CURRENCIES[b]
        return (
            kind,
            f"How much is {amount} USD in the money of {b}?",
            [("convert_currency", {"amount": amount, "to": cur})],
        )
    if kind == "hotels":
        nights = rng.randint(1, 6)
        return (
            kind,
            f"Hold a hotel in {b} for {nights} nights.",
            [("book_hotel", {"city": b, "nights": nights})],
        )
    if kind == "policy":
        topic = rng.choice(sorted(_POLICIES))
        return kind, f"What is your {topic} policy?", [("lookup_policy", {"topic": topic})]
    nights = rng.randint(2, 5)
    return (
        kind,
        f"Plan a trip from {a} to {b} on {date} for {nights} nights: flight, weather and a hotel.",
        [
            ("search_flights", {"origin": a, "destination": b, "date": date}),
            ("get_weather", {"city": b, "date": date}),
            ("book_hotel", {"city": b, "nights": nights}),
        ],
    )


def _wrong(rng: random.Random, args: dict[str, Any]) -> dict[str, Any]:
    """Make a plausible argument mistake: a lowercased city, a date in another format."""
    out = dict(args)
    key = rng.choice(sorted(out))
    value = out[key]
    if isinstance(value, str) and value[:1].isupper():
        out[key] = value.lower()
    elif key == "date":
        y, m, d = str(value).split("-")
        out[key] = f"{d}/{m}/{y}"
    elif isinstance(value, int):
        out[key] = value + 1
    else:
        out[key] = "EUR"
    return out


def _run(
    rng: random.Random,
    agent: _Agent,
    request: str,
    calls: list[tuple[str, dict[str, Any]]],
    case_no: int,
) -> list[dict[str, Any]]:
    """One agent's conversation: a model call per tool call, then the answer."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": _SYSTEM},
        {"role": "user", "content": request},
    ]
    facts: list[str] = []
    n = 0
    for name, args in calls:
        if rng.random() < agent.skip:
            continue
        sent = _wrong(rng, args) if rng.random() < agent.bad_args else args
        for attempt in range(1 + agent.retries):
            n += 1
            call_id = f"call_{case_no}_{n}"
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "latency_s": round(agent.step_s * rng.uniform(0.7, 1.4), 3),
                    "tokens": rng.randint(180, 420),
                    "cost": agent.price,
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": name, "arguments": json.dumps(sent)},
                        }
                    ],
                }
            )
            result, error = _tool(name, sent, attempt)
            tool_msg: dict[str, Any] = {
                "role": "tool",
                "tool_call_id": call_id,
                "content": result or error,
                "latency_s": round(rng.uniform(0.05, 0.9), 3),
            }
            if error:
                tool_msg["error"] = error
            messages.append(tool_msg)
            if not error:
                facts.append(result)
                break
    if facts:
        answer = " ".join(facts)
    else:
        answer = "I could not get that information right now; please try again later."
    messages.append(
        {
            "role": "assistant",
            "content": answer,
            "latency_s": round(agent.step_s * rng.uniform(0.7, 1.4), 3),
            "tokens": rng.randint(120, 300),
            "cost": agent.price,
        }
    )
    return messages


def demo_agent_records(n_cases: int = 90) -> list[dict[str, Any]]:
    """Return the demo's conversations as ``agent_chat`` records (one per case and agent)."""
    rng = random.Random(_SEED)
    records: list[dict[str, Any]] = []
    seen: set[str] = set()
    while len(seen) < n_cases:
        topic, request, calls = _task(rng)
        if request in seen:
            continue
        seen.add(request)
        case_id = f"trip-{len(seen):03d}"
        expected = " ".join(_tool(name, args, None)[0] for name, args in calls)
        reference = [{"name": name, "args": args} for name, args in calls]
        records.extend(
            {
                "id": case_id,
                "model": agent.name,
                "topic": topic,
                "messages": _run(rng, agent, request, calls, len(seen)),
                "reference_tool_calls": reference,
                "expected": [expected],
            }
            for agent in _AGENTS
        )
    return records


def build_demo_agents(n_cases: int = 90) -> Lab:
    """Build the agents demo lab: ``n_cases`` travel requests, each run by three agents."""
    builder = LabBuilder()
    builder.info["format"] = "agent_chat"
    reader = AgentReader(builder)
    for i, rec in enumerate(demo_agent_records(n_cases)):
        reader.add(rec, Where("evalnb.api.demo_agents", f"record {i}"))
    builder.info.update(
        name="Northwind travel desk agents (demo)",
        description="Synthetic agent runs generated by evalnb.api.demo_agents (seeded).",
    )
    return Lab(builder.frames())


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "data/demo_agents.jsonl")
    build_demo_agents().export(out, format="agent_chat")
    print(f"wrote {out}")
