"""Alerts: posted to a webhook once per window and kind, however often the monitor runs.

An alert is recorded before it is posted, keyed by (grid, window, evaluator, metric, kind),
and marked sent only when the webhook answered 2xx. A post that failed is tried again on the
next run; one that reached the server but whose answer was lost may be posted again, so the
body and the ``Idempotency-Key`` header carry the alert's id for the receiver to drop a
repeat.

A webhook is somebody else's server, so a post is bounded: ``timeout_s`` is its **total**
time, connection to last byte (a server that drips bytes is cut off there, not per read),
and at most :data:`MAX_REPLY_BYTES` of the reply are read (a 200 with a huge body costs
nothing). The post runs on an event loop of its own, in a thread, so the deadline cancels
it for real and a notebook's own loop is not touched.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from typing import Any

__all__ = ["MAX_REPLY_BYTES", "alert_id", "post_alert"]

MAX_REPLY_BYTES = 4096
"""Bytes of a webhook's reply read (enough for its status text; the rest is never read)."""


def alert_id(every: str, window_start: object, evaluator: str, metric: str, kind: str) -> str:
    """Return the alert's stable id (the same window and kind give the same id)."""
    key = json.dumps([every, str(window_start), evaluator, metric, kind])
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def post_alert(url: str, alert: dict[str, Any], *, timeout_s: float = 10.0) -> str | None:
    """POST the alert as JSON; return None when the webhook took it, else why not.

    Bounded in time (``timeout_s`` in all) and memory (:data:`MAX_REPLY_BYTES` read).
    """
    body = json.dumps(alert, default=str, ensure_ascii=False).encode("utf-8")
    headers = {"Content-Type": "application/json", "Idempotency-Key": str(alert["alert_id"])}
    outcome: list[str | None] = []

    def run() -> None:
        try:
            outcome.append(asyncio.run(_post(url, body, headers, timeout_s)))
        except Exception as err:
            outcome.append(f"{type(err).__name__}: {err}"[:300])

    worker = threading.Thread(target=run, name="evalnb-webhook", daemon=True)
    worker.start()
    # The loop's own deadline ends the post; the margin covers the loop's start and close.
    worker.join(timeout_s + 5.0)
    if not outcome:
        return f"no answer within {timeout_s:g} s"
    return outcome[0]


async def _post(url: str, body: bytes, headers: dict[str, str], timeout_s: float) -> str | None:
    import httpx  # noqa: PLC0415 - a tenth of a second that a monitor without a webhook skips

    try:
        async with (
            asyncio.timeout(timeout_s),
            httpx.AsyncClient(timeout=timeout_s, follow_redirects=False) as client,
            client.stream("POST", url, content=body, headers=headers) as response,
        ):
            if 200 <= response.status_code < 300:
                return None
            reply = bytearray()
            async for part in response.aiter_raw():
                reply += part
                if len(reply) >= MAX_REPLY_BYTES:
                    break
            text = bytes(reply[:200]).decode("utf-8", "replace")
            return f"HTTP {response.status_code}: {text}"
    except TimeoutError:
        return f"no complete answer within {timeout_s:g} s (the webhook is too slow)"
    except httpx.HTTPError as err:
        return f"{type(err).__name__}: {err}"[:300]
