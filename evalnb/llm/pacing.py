"""Pacing chat calls: a rate limit, the server's Retry-After, and a loop where one runs.

What :class:`~evalnb.llm.client.LLMClient` waits on between calls, apart from what it
sends and reads.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from collections.abc import Coroutine

__all__ = ["Pacer", "retry_after_seconds", "run_blocking"]

T = TypeVar("T")


def run_blocking(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion, also from inside a running event loop (a Jupyter kernel).

    There, the coroutine gets its own loop in a worker thread, so nothing deadlocks.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def retry_after_seconds(value: str | None) -> float | None:
    """Return the seconds a ``Retry-After`` header asks for (None: absent or not a number)."""
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


class Pacer:
    """At most ``rate`` call starts per second (None: no limit)."""

    def __init__(self, rate: float | None) -> None:
        self.interval = 1.0 / rate if rate else 0.0
        self.next = 0.0
        self.lock = asyncio.Lock()

    async def wait(self) -> None:
        """Wait until the next call may start."""
        if not self.interval:
            return
        async with self.lock:
            now = time.monotonic()
            if self.next > now:
                await asyncio.sleep(self.next - now)
            self.next = max(now, self.next) + self.interval
