"""Alerts: posted to a webhook once per window and kind, however often the monitor runs.

An alert is recorded before it is posted, keyed by (grid, window, evaluator, metric, kind),
and marked sent only when the webhook answered 2xx. A post that failed is tried again on the
next run; one that reached the server but whose answer was lost may be posted again, so the
body and the ``Idempotency-Key`` header carry the alert's id for the receiver to drop a
repeat.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import httpx

__all__ = ["alert_id", "post_alert"]


def alert_id(every: str, window_start: object, evaluator: str, metric: str, kind: str) -> str:
    """Return the alert's stable id (the same window and kind give the same id)."""
    key = json.dumps([every, str(window_start), evaluator, metric, kind])
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def post_alert(url: str, alert: dict[str, Any], *, timeout_s: float = 10.0) -> str | None:
    """POST the alert as JSON; return None when the webhook took it, else why not."""
    body = json.dumps(alert, default=str, ensure_ascii=False)
    try:
        response = httpx.post(
            url,
            content=body,
            headers={"Content-Type": "application/json", "Idempotency-Key": alert["alert_id"]},
            timeout=timeout_s,
        )
    except httpx.HTTPError as err:
        return f"{type(err).__name__}: {err}"[:300]
    if 200 <= response.status_code < 300:
        return None
    return f"HTTP {response.status_code}: {response.text[:200]}"
