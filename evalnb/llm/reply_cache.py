"""Completed chat calls: the result of one call, and the DuckDB cache that keeps them.

:class:`~evalnb.llm.client.LLMClient` stores each completed call here the moment it
completes, keyed by (endpoint, model, messages, parameters), so an interrupted run resumes
without repeating one. Failed calls are never stored.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    import duckdb

__all__ = ["ChatResult", "ReplyCache", "reply_key"]


@dataclass(frozen=True)
class ChatResult:
    """One chat call: the reply text or the error, with accounting."""

    content: str | None
    error: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost: float | None = None
    duration_s: float | None = None
    cached: bool = False
    attempts: int = 0
    contexts: tuple[str, ...] | None = None
    """Retrieved passages a RAG endpoint returned with the reply (see :func:`reply_contexts`)."""
    tool_calls: tuple[dict[str, Any], ...] | None = None
    """The tools the model asked to call (OpenAI's ``tool_calls``), when the request offered
    ``tools``; ``content`` is then the text beside them, often empty."""
    logprobs: tuple[tuple[str, float, tuple[tuple[str, float], ...]], ...] | None = None
    """Per token of the reply: (token, its log-probability, the top alternatives as
    (token, log-probability)), when the request asked for ``logprobs`` and the host gave them."""
    finish_reason: str | None = None
    """Why the host stopped (``stop``, ``length``, ``tool_calls`` …): ``length`` means the
    reply was cut off at ``max_tokens`` and is not the whole answer."""


def reply_key(
    endpoint: str, model: str, messages: Sequence[dict[str, Any]], params: dict[str, Any]
) -> str:
    """Return the cache key of one call: a hash of everything that decides its reply."""
    text = json.dumps([endpoint, model, list(messages), params], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ReplyCache:
    """Completed calls in a DuckDB table; each insert is its own committed transaction."""

    def __init__(self, path: Path) -> None:
        import duckdb  # noqa: PLC0415

        path.parent.mkdir(parents=True, exist_ok=True)
        self.con: duckdb.DuckDBPyConnection = duckdb.connect(str(path))
        self.con.execute(
            "CREATE TABLE IF NOT EXISTS llm_cache (key VARCHAR PRIMARY KEY, endpoint VARCHAR, "
            "model VARCHAR, request VARCHAR, content VARCHAR, prompt_tokens BIGINT, "
            "completion_tokens BIGINT, cost DOUBLE, duration_s DOUBLE, created_at TIMESTAMPTZ)"
        )
        # Caches written before RAG contexts were kept lack the column: add it (null there).
        self.con.execute("ALTER TABLE llm_cache ADD COLUMN IF NOT EXISTS contexts VARCHAR")
        self.con.execute("ALTER TABLE llm_cache ADD COLUMN IF NOT EXISTS tool_calls VARCHAR")
        self.con.execute("ALTER TABLE llm_cache ADD COLUMN IF NOT EXISTS logprobs VARCHAR")
        self.con.execute("ALTER TABLE llm_cache ADD COLUMN IF NOT EXISTS finish_reason VARCHAR")
        self.con.execute(
            "CREATE TABLE IF NOT EXISTS capabilities (endpoint VARCHAR, model VARCHAR, "
            "found VARCHAR, PRIMARY KEY (endpoint, model))"
        )

    def get(self, keys: list[str]) -> dict[str, ChatResult]:
        """Return the stored results of ``keys`` (those present), marked as cached."""
        if not keys:
            return {}
        rows = self.con.execute(
            "SELECT key, content, prompt_tokens, completion_tokens, cost, duration_s, contexts, "
            "tool_calls, logprobs, finish_reason "
            "FROM llm_cache WHERE key IN (SELECT unnest(?))",
            [keys],
        ).fetchall()
        return {
            r[0]: ChatResult(
                r[1],
                None,
                r[2],
                r[3],
                r[4],
                r[5],
                cached=True,
                contexts=tuple(json.loads(r[6])) if r[6] is not None else None,
                tool_calls=tuple(json.loads(r[7])) if r[7] is not None else None,
                logprobs=_logprobs(r[8]),
                finish_reason=r[9],
            )
            for r in rows
        }

    def put(self, key: str, endpoint: str, model: str, request: str, r: ChatResult) -> None:
        """Store one completed result, committed at once."""
        contexts = json.dumps(list(r.contexts)) if r.contexts is not None else None
        calls = json.dumps(list(r.tool_calls)) if r.tool_calls is not None else None
        logprobs = json.dumps(r.logprobs) if r.logprobs is not None else None
        self.con.execute(
            "INSERT OR REPLACE INTO llm_cache (key, endpoint, model, request, content, "
            "prompt_tokens, completion_tokens, cost, duration_s, created_at, contexts, tool_calls, "
            "logprobs, finish_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                key,
                endpoint,
                model,
                request,
                r.content,
                r.prompt_tokens,
                r.completion_tokens,
                r.cost,
                r.duration_s,
                dt.datetime.now(dt.UTC),
                contexts,
                calls,
                logprobs,
                r.finish_reason,
            ],
        )

    def capabilities(self, endpoint: str, model: str) -> str | None:
        """Return what a probe of ``endpoint`` and ``model`` found (JSON), if one was stored."""
        row = self.con.execute(
            "SELECT found FROM capabilities WHERE endpoint = ? AND model = ?", [endpoint, model]
        ).fetchone()
        return str(row[0]) if row else None

    def put_capabilities(self, endpoint: str, model: str, found: str) -> None:
        """Store what a probe found, replacing an earlier one."""
        self.con.execute(
            "INSERT OR REPLACE INTO capabilities VALUES (?, ?, ?)", [endpoint, model, found]
        )

    def close(self) -> None:
        """Close the cache file."""
        self.con.close()


def _logprobs(
    text: str | None,
) -> tuple[tuple[str, float, tuple[tuple[str, float], ...]], ...] | None:
    if text is None:
        return None
    return tuple(
        (str(tok), float(lp), tuple((str(a), float(b)) for a, b in top))
        for tok, lp, top in json.loads(text)
    )
