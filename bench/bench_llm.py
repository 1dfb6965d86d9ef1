"""Judge/host client throughput against a loopback server (issue 8: ≥ 100 calls/s at 200 ms
latency and concurrency 32).

Usage: .venv/bin/python bench/bench_llm.py [--calls 1000] [--latency 0.2] [--concurrency 32]

One process: a scripted OpenAI-compatible server on 127.0.0.1 answers every call after
``latency`` seconds; evalnb's LLMClient sends ``calls`` distinct chats with the DuckDB cache
on (every completed call stored), then again (all from the cache); the peer is the
``openai`` package's AsyncOpenAI with the same concurrency (asyncio semaphore), when
installed. Prints calls/s and the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import evalnb
from evalnb_testkit.llm_server import LoopbackLLM


def _openai_peer(base_url: str, calls: int, concurrency: int) -> float | None:
    try:
        from openai import AsyncOpenAI  # noqa: PLC0415 - optional peer (pip install evalnb[bench])
    except ImportError:
        return None

    async def run() -> None:
        client = AsyncOpenAI(base_url=base_url, api_key="unused", max_retries=3)
        gate = asyncio.Semaphore(concurrency)

        async def one(i: int) -> None:
            async with gate:
                await client.chat.completions.create(
                    model="judge",
                    messages=[{"role": "user", "content": f"peer {i}"}],
                    temperature=0,
                )

        await asyncio.gather(*(one(i) for i in range(calls)))
        await client.close()

    start = time.perf_counter()
    asyncio.run(run())
    return calls / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    chats = [[{"role": "user", "content": f"question {i}"}] for i in range(args.calls)]
    with LoopbackLLM(lambda _prompt: "same", latency_s=args.latency) as server:
        cache = Path(tempfile.mkdtemp()) / "llm.duckdb"
        client = evalnb.LLMClient(
            server.base_url, "judge", concurrency=args.concurrency, cache=cache
        )
        start = time.perf_counter()
        got = client.chat_many(chats, progress=False)
        ours = args.calls / (time.perf_counter() - start)
        assert all(r.error is None for r in got), "the loopback server failed calls"
        start = time.perf_counter()
        client.chat_many(chats, progress=False)
        cached = args.calls / (time.perf_counter() - start)
        peer = _openai_peer(server.base_url, args.calls, args.concurrency)
    ideal = args.concurrency / args.latency
    print(
        f"{args.calls} calls, latency {args.latency * 1000:.0f} ms, concurrency {args.concurrency} "
        f"(ideal {ideal:.0f} calls/s)"
    )
    print(
        f"evalnb LLMClient (DuckDB cache on) {ours:8.1f} calls/s  target >= 100: "
        f"{'ok' if ours >= 100 else 'MISSED'}"
    )
    print(f"evalnb second run (all cached)     {cached:8.1f} calls/s")
    if peer is not None:
        print(
            f"openai AsyncOpenAI (no cache)      {peer:8.1f} calls/s  evalnb/peer = {ours / peer:.2f}"
        )


if __name__ == "__main__":
    main()
