"""Hostile agent, trace and model inputs (issue 43): time and peak memory of each, measured.

Usage: .venv/bin/python bench/bench_hostile_agents.py [--calls 32000] [--lists 3000]

Each case runs in a fresh process through the public API (``evalnb.load`` /
``evalnb.evaluate``), so its peak resident memory is its own; the model is loaded once
before the clock starts in the cases that use one. Prints seconds and peak RSS per case.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_REVERSED = """
import json, sys, time, resource, evalnb
n = int(sys.argv[1]); path = sys.argv[2]
ids = [f"c{k}" for k in range(n)]
calls = [{"id": i, "type": "function", "function": {"name": "t", "arguments": "{}"}} for i in ids]
messages = [{"role": "user", "content": "go"}, {"role": "assistant", "content": None,
            "tool_calls": calls}]
messages += [{"role": "tool", "tool_call_id": i, "content": i} for i in reversed(ids)]
open(path, "w").write(json.dumps({"messages": messages}) + "\\n")
t = time.perf_counter()
lab = evalnb.load(path, format="agent_chat")
print(json.dumps({"s": time.perf_counter() - t,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

_LISTS = """
import json, sys, time, resource, evalnb, polars as pl
k = int(sys.argv[1])
text = "\\n\\n".join(f"Procedure {i}:\\n1. open item {i}\\n2. close item {i}" for i in range(k))
evalnb.evaluate(evalnb.load(pl.DataFrame({"prompt": ["w"], "actual": ["1. a\\n2. b"],
                "context": [["1. a\\n2. b"]]})), ["step_alignment"], progress=False)
lab = evalnb.load(pl.DataFrame({"prompt": ["q"], "actual": [text], "context": [[text]]}))
t = time.perf_counter()
evalnb.evaluate(lab, ["step_alignment"], progress=False)
print(json.dumps({"s": time.perf_counter() - t,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

_HUGE = """
import json, sys, time, resource, evalnb, polars as pl
huge = " ".join(f"word{k % 997} alpha,beta" for k in range(2_500_000))  # 47 MB
warm = evalnb.load(pl.DataFrame({"prompt": ["w"], "expected": ["a"], "actual": ["b"]}))
evalnb.evaluate(warm, ["answer_similarity"], model="all-MiniLM-L6-v2", progress=False)
lab = evalnb.load(pl.DataFrame({"prompt": ["q"], "expected": ["a reference"], "actual": [huge]}))
t = time.perf_counter()
evalnb.evaluate(lab, ["answer_similarity"], model="all-MiniLM-L6-v2", progress=False)
print(json.dumps({"s": time.perf_counter() - t,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

_ATTACHMENTS = """
import json, sys, time, resource, evalnb
path = sys.argv[1]
big = "x" * 10_000_000
log = {"version": 2, "status": "success", "eval": {"model": "m", "task": "t"},
       "samples": [{"id": 1, "epoch": 1, "attachments": {"big": big}, "messages":
                    [{"role": "user", "content": "attachment://big"}] * 300}]}
open(path, "w").write(json.dumps(log))
t = time.perf_counter()
try:
    evalnb.load(path, format="inspect_log")
    outcome = "loaded"
except evalnb.InputError as exc:
    outcome = "refused: " + str(exc).splitlines()[0][:90]
print(json.dumps({"s": time.perf_counter() - t, "outcome": outcome,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

_ENDLESS = """
import json, time, resource, evalnb

class Endless:  # a dataset in ragas' shape whose to_list never ends
    def to_list(self):
        while True:
            yield {"user_input": "q", "response": "a"}

t = time.perf_counter()
try:
    evalnb.load(Endless())
    outcome = "loaded"
except evalnb.InputError as exc:
    outcome = "refused: " + str(exc).splitlines()[0][:90]
print(json.dumps({"s": time.perf_counter() - t, "outcome": outcome,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def _run(code: str, *args: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    """Print each case's time and peak memory."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=32_000)
    parser.add_argument("--lists", type=int, default=3_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cases = {
            f"{args.calls:,} tool results in reverse order": _run(
                _REVERSED, str(args.calls), str(Path(tmp) / "run.jsonl")
            ),
            f"step_alignment, {args.lists:,} lists a side": _run(_LISTS, str(args.lists)),
            "answer_similarity, a 47 MB answer": _run(_HUGE),
            "Inspect log, a 10 MB attachment x 300": _run(
                _ATTACHMENTS, str(Path(tmp) / "log.json")
            ),
            "a ragas-shaped dataset with an endless to_list": _run(_ENDLESS),
        }
    for name, got in cases.items():
        extra = f"  {got['outcome']}" if "outcome" in got else ""
        print(f"{name:45} {got['s']:7.2f} s  peak {got['rss_mb']:6.0f} MB{extra}")


if __name__ == "__main__":
    main()
