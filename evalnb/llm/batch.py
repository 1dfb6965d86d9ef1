"""Batch mode: a run's judge calls sent as one OpenAI-compatible batch, at the batch price.

The contract. With ``LLMClient(batch=True)``, the calls a run still needs (those not in the
reply cache) go to the server's Batch API in one file: ``POST /files`` (a JSONL of requests,
``purpose=batch``), ``POST /batches`` (``/v1/chat/completions``, a 24 h window), then
``GET /batches/{id}`` every ``batch_poll_s`` until it ends, and ``GET /files/{id}/content``
for the replies. Each request's ``custom_id`` is its reply-cache key, so a reply lands in
the cache exactly as the same call made directly would, and the next run finds it.

**Nothing submitted is lost to a restart**: the batch's id is written to a record beside the
reply cache (``<cache>.batches.json``, atomically) before any poll, keyed by the calls it
holds; a process killed while waiting, run again with the same calls, polls that batch
instead of submitting (and paying for) a second one. A batch that has not ended within
``batch_timeout_s`` leaves its rows unscored with :data:`PENDING` (the evaluation's next run
asks again, and collects it); a batch that failed, expired or was cancelled is forgotten and
its rows fail with the server's reason. Under a hard budget every request is reserved
before the file is sent; those that cannot fit are refused and left out.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from typing import TYPE_CHECKING, Any

from evalnb.lab.files import write_atomic
from evalnb.llm.budget import REFUSED
from evalnb.llm.reply_cache import ChatResult

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

    import httpx

    from evalnb.llm.budget import Budget

__all__ = ["PENDING", "BatchRecord", "run_batch"]

PENDING = "batch pending"
"""How a call whose batch had not ended begins its error text."""
_DONE = {"completed"}
_OVER = {"failed", "expired", "cancelled", "cancelling"}


class BatchRecord:
    """The batches this cache's calls were submitted in, by the set of calls: a JSON file."""

    def __init__(self, path: Path | None) -> None:
        self.path = path

    def _read(self) -> dict[str, str]:
        if self.path is None or not self.path.is_file():
            return {}
        try:
            found = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}  # a torn record: the batch is submitted again, never half-read
        return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}

    def find(self, calls: str) -> str | None:
        """Return the batch id of this set of calls, if one was submitted."""
        return self._read().get(calls)

    def keep(self, calls: str, batch_id: str | None) -> None:
        """Record (or, with None, forget) the batch of this set of calls, atomically."""
        if self.path is None:
            return
        record = self._read()
        if batch_id is None:
            record.pop(calls, None)
        else:
            record[calls] = batch_id
        write_atomic(self.path, json.dumps(record, indent=1).encode())


def _calls_key(keys: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(keys)).encode()).hexdigest()[:32]


async def run_batch(
    http: httpx.AsyncClient,
    base_url: str,
    requests: Mapping[str, dict[str, Any]],
    *,
    record: BatchRecord,
    parse: Callable[[str, dict[str, Any]], ChatResult],
    poll_s: float,
    timeout_s: float,
    budget: Budget | None,
    prices: tuple[float, float] | None,
) -> dict[str, ChatResult]:
    """Send ``requests`` (by reply-cache key) as one batch; return each key's result."""
    results: dict[str, ChatResult] = {}
    sent: dict[str, tuple[dict[str, Any], tuple[int, float] | None]] = {}
    for key, request in requests.items():
        held = budget.reserve(request, prices) if budget is not None else None
        if budget is not None and held is None:  # nothing in flight to settle: it does not fit
            budget.refused += 1
            held = f"{REFUSED}: the batch's other calls hold the rest of the budget; not sent"
        if isinstance(held, str):
            results[key] = ChatResult(None, held)
            continue
        sent[key] = (request, held if isinstance(held, tuple) else None)
    if not sent:
        return results
    calls = _calls_key(list(sent))
    batch_id = record.find(calls)
    import httpx  # noqa: PLC0415 - the client's own dependency, loaded with it

    try:
        if batch_id is None:
            batch_id = await _submit(http, base_url, sent)
            record.keep(calls, batch_id)  # before any poll: a restart polls, never resubmits
        state = await _wait(http, base_url, batch_id, poll_s, timeout_s)
    except httpx.HTTPError as exc:  # the server went away: the next run polls the batch again
        _release(budget, sent)
        why = f"{PENDING}: the batch server failed ({type(exc).__name__}: {str(exc)[:120]}); run again"
        return results | {k: ChatResult(None, why) for k in sent}
    except _BatchError as exc:
        _release(budget, sent)
        record.keep(calls, None)
        return results | {k: ChatResult(None, str(exc)) for k in sent}
    if state is None:  # still running: the next run collects it
        _release(budget, sent)
        why = f"{PENDING}: batch {batch_id} has not ended within {timeout_s:g} s; run again to collect it"
        return results | {k: ChatResult(None, why) for k in sent}
    lines = await _replies(http, base_url, state)
    record.keep(calls, None)
    for key, (request, held) in sent.items():
        line = lines.get(key)
        if line is None:
            result = ChatResult(None, f"batch {batch_id} returned no reply for this call")
        elif int(line.get("status_code", 0)) != 200:
            result = ChatResult(
                None, f"HTTP {line.get('status_code')}: {str(line.get('body'))[:200]}"
            )
        else:
            result = parse(json.dumps(line.get("body")), request)
        if budget is not None and held is not None:
            reported = result.prompt_tokens is not None and result.completion_tokens is not None
            used = (result.prompt_tokens or 0) + (result.completion_tokens or 0)
            budget.settle(held, used if reported else None, result.cost)
        results[key] = result
    return results


class _BatchError(Exception):
    """The batch could not be sent, or ended without replies."""


def _release(
    budget: Budget | None, sent: Mapping[str, tuple[dict[str, Any], tuple[int, float] | None]]
) -> None:
    if budget is None:
        return
    for _, held in sent.values():
        if held is not None:
            budget.settle(held, 0, 0.0)


async def _submit(
    http: httpx.AsyncClient, base_url: str, sent: Mapping[str, tuple[dict[str, Any], Any]]
) -> str:
    lines = "".join(
        json.dumps(
            {"custom_id": key, "method": "POST", "url": "/v1/chat/completions", "body": request},
            ensure_ascii=False,
        )
        + "\n"
        for key, (request, _) in sent.items()
    ).encode()
    import httpx  # noqa: PLC0415 - the client's own dependency, loaded with it

    # The form is encoded apart: the client's JSON content type must not stand on it.
    form = httpx.Request(
        "POST",
        f"{base_url}/files",
        data={"purpose": "batch"},
        files={"file": ("evalnb-batch.jsonl", lines, "application/jsonl")},
    )
    upload = await http.post(
        f"{base_url}/files",
        content=form.read(),
        headers={"Content-Type": form.headers["Content-Type"]},
    )
    file_id = _field(upload, "id", "uploading the batch file")
    created = await http.post(
        f"{base_url}/batches",
        json={
            "input_file_id": file_id,
            "endpoint": "/v1/chat/completions",
            "completion_window": "24h",
        },
    )
    return _field(created, "id", "creating the batch")


async def _wait(
    http: httpx.AsyncClient, base_url: str, batch_id: str, poll_s: float, timeout_s: float
) -> dict[str, Any] | None:
    deadline = time.monotonic() + timeout_s
    while True:
        reply = await http.get(f"{base_url}/batches/{batch_id}")
        state = _json(reply, f"polling batch {batch_id}")
        status = str(state.get("status"))
        if status in _DONE:
            return state
        if status in _OVER:
            msg = f"batch {batch_id} ended {status}: {str(state.get('errors'))[:200]}"
            raise _BatchError(msg)
        if time.monotonic() + poll_s > deadline:
            return None
        await asyncio.sleep(poll_s)


async def _replies(
    http: httpx.AsyncClient, base_url: str, state: Mapping[str, Any]
) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for which in ("output_file_id", "error_file_id"):
        file_id = state.get(which)
        if not file_id:
            continue
        content = await http.get(f"{base_url}/files/{file_id}/content")
        if content.status_code != 200:
            continue
        for text in content.text.splitlines():
            try:
                line = json.loads(text)
            except ValueError:
                continue  # a torn line: its call is asked again on the next run
            if not isinstance(line, dict) or "custom_id" not in line:
                continue
            response = line.get("response") or {}
            error = line.get("error")
            if error and not response:
                response = {"status_code": 500, "body": error}
            out[str(line["custom_id"])] = {
                "status_code": response.get("status_code", 0),
                "body": response.get("body"),
            }
    return out


def _json(reply: httpx.Response, doing: str) -> dict[str, Any]:
    if reply.status_code != 200:
        msg = f"{doing}: HTTP {reply.status_code}: {reply.text[:200]}"
        raise _BatchError(msg)
    try:
        body = reply.json()
    except ValueError:
        msg = f"{doing}: the server answered no JSON: {reply.text[:120]!r}"
        raise _BatchError(msg) from None
    if not isinstance(body, dict):
        msg = f"{doing}: expected a JSON object, got {type(body).__name__}"
        raise _BatchError(msg)
    return body


def _field(reply: httpx.Response, name: str, doing: str) -> str:
    value = _json(reply, doing).get(name)
    if not isinstance(value, str) or not value:
        msg = f"{doing}: the reply has no {name!r}"
        raise _BatchError(msg)
    return value
