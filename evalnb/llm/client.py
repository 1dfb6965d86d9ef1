"""One client for OpenAI-compatible chat endpoints (OpenAI, Azure, vLLM, Ollama, llama.cpp).

Bounded concurrency, an optional request rate, retries with exponential backoff and jitter
on 429 / 5xx / timeouts / dropped connections (honouring ``Retry-After``), a per-call
timeout, token and cost accounting, and a response cache in DuckDB keyed by (endpoint,
model, messages, parameters): each completed call is stored the moment it completes, so an
interrupted run resumes without repeating one. Failed calls are returned as errors and not
cached, so the next run retries them. The API key is read from the environment (or given)
and never written anywhere: not to the cache, logs, reports or ``repr``. Error texts are
redacted where they are made (a host may echo the key it refused) and URLs are kept in
their public form (no ``user:key@``, no ``?key=``): see :mod:`evalnb.llm.redact`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import os
import random
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb.lab.errors import EvalnbError
from evalnb.llm.batch import BatchRecord, run_batch
from evalnb.llm.pacing import Pacer, retry_after_seconds, run_blocking
from evalnb.llm.redact import SECRET_PARAMS, Redactor, public_url, url_secrets
from evalnb.llm.reply import (
    content_text,
    finish_reason_of,
    logprobs_of,
    reply_contexts,
    token_count,
    tool_calls_of,
)
from evalnb.llm.reply_cache import ChatResult, ReplyCache, reply_key

if TYPE_CHECKING:
    from collections.abc import Sequence

    import httpx

    from evalnb.llm.budget import Budget
    from evalnb.llm.contract import Capabilities

__all__ = [
    "ChatResult",
    "EndpointUnreachable",
    "LLMClient",
    "ReplyCache",
    "reply_contexts",
    "run_blocking",
]

_log = logging.getLogger(__name__)
_log.addHandler(logging.NullHandler())
_RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
# Tries of the first call to an endpoint that has never answered, when it cannot even be
# connected to (refused, no such host): a second try covers a server still binding its port.
_FIRST_CONNECT_TRIES = 2


class EndpointUnreachable(EvalnbError, ConnectionError):
    """The endpoint refused the connection or its host name did not resolve, on the first call.

    Raised before any other call is sent: with a wrong URL or a server that is not running,
    every call would fail the same way after its retries (minutes for a suite).
    """


@dataclass
class _Stats:
    calls: int = 0
    probe_calls: int = 0  # of ``calls``: the format probe's (once per endpoint and cache file)
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0

    def as_dict(self) -> dict[str, float]:
        return dict(vars(self))


@dataclass
class LLMClient:
    """A chat client for one OpenAI-compatible endpoint and model.

    Parameters
    ----------
    base_url
        The API root, e.g. ``https://api.openai.com/v1`` or ``http://localhost:8000/v1``
        (default: ``$OPENAI_BASE_URL``).
    model
        The model name sent with each request.
    api_key
        The key; default ``$<api_key_env>``. Kept in memory only.
    concurrency
        Calls in flight at once.
    requests_per_second
        Optional cap on the rate of new calls.
    max_retries, timeout_s
        Retries of a failed call (429, 5xx, timeouts, dropped connections) and the deadline
        of one attempt: connecting, sending and every read of the reply together (a host
        dripping a byte a second cannot hold a call longer).
    max_reply_bytes
        The largest reply body read (default 8 MiB); a larger one is refused as it streams
        in, never held whole, and not retried.
    cache
        DuckDB file of completed calls (default ``$EVALNB_CACHE_DIR/llm_cache.duckdb``);
        ``False`` disables it.
    prices
        US dollars per million (prompt, completion) tokens, for cost accounting.
    params
        Request parameters sent with every call unless a call overrides them
        (default ``temperature=0``).
    cache_identity
        What names this server in the reply cache and the probe's record instead of its URL,
        for a server whose address changes and whose replies do not (a local model on a
        random port: :func:`~evalnb.llm.local_judge.local_judge` sets it from the model
        file). Default: the URL.
    budget
        A hard cap on what this client's calls (and its copies') may spend
        (:class:`~evalnb.llm.budget.Budget`); ``evalnb.evaluate(..., budget=)`` sets it for
        one run. A call that could exceed it is not sent.
    batch, batch_poll_s, batch_timeout_s
        Send a run's calls as one OpenAI-compatible batch (``/files`` and ``/batches``: about
        half the price at OpenAI), polled every ``batch_poll_s``; a restart polls the batch
        it submitted instead of submitting another (:mod:`evalnb.llm.batch`). Rows whose
        batch has not ended within ``batch_timeout_s`` are collected by the next run.
    auth_header, query
        For endpoints that authenticate differently. Azure OpenAI:
        ``base_url="https://<resource>.openai.azure.com/openai/deployments/<deployment>"``,
        ``auth_header="api-key"``, ``query={"api-version": "2024-06-01"}``.

    Examples
    --------
    >>> client = LLMClient("http://127.0.0.1:9/v1", "judge", api_key="sk-secret", cache=False)
    >>> "sk-secret" in repr(client)
    False
    """

    base_url: str | None = None
    model: str = "gpt-4o-mini"
    api_key: str | None = field(default=None, repr=False)
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: int = 16
    requests_per_second: float | None = None
    max_retries: int = 6
    timeout_s: float = 60.0
    max_reply_bytes: int = 8 * 2**20
    cache: str | Path | bool | None = None
    prices: tuple[float, float] | None = None
    params: dict[str, Any] = field(default_factory=lambda: {"temperature": 0})
    backoff_s: float = 0.5
    auth_header: str = "Authorization"
    query: dict[str, str] = field(default_factory=dict)
    cache_identity: str | None = None
    budget: Budget | None = field(default=None, repr=False, compare=False)
    batch: bool = False
    batch_poll_s: float = 30.0
    batch_timeout_s: float = 24 * 3600.0
    stats: _Stats = field(default_factory=_Stats, init=False)
    # Whether the endpoint ever answered this client (any HTTP status): until it has, a
    # connection refused or a name that does not resolve is a wrong address, not a blip.
    _answered: bool = field(default=False, init=False, repr=False, compare=False)
    _capabilities: Capabilities | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.base_url = (self.base_url or os.environ.get("OPENAI_BASE_URL") or "").rstrip("/")
        if not self.base_url:
            msg = (
                "LLMClient needs base_url (e.g. 'http://localhost:8000/v1' or "
                "'https://api.openai.com/v1') or $OPENAI_BASE_URL"
            )
            raise ValueError(msg)
        if self.concurrency < 1:
            msg = f"concurrency must be at least 1; got {self.concurrency}"
            raise ValueError(msg)

    def __repr__(self) -> str:
        return (
            f"LLMClient(base_url={public_url(str(self.base_url))!r}, model={self.model!r}, "
            f"concurrency={self.concurrency}, cache={self.cache!r})"
        )

    @property
    def endpoint(self) -> str:
        """The chat-completions URL (credentials included: for sending only)."""
        return f"{self.base_url}/chat/completions"

    @property
    def public_endpoint(self) -> str:
        """The chat-completions URL without credentials: what is shown."""
        return public_url(self.endpoint)

    @property
    def fingerprint(self) -> dict[str, Any]:
        """What decides this client's replies: model, server, decoding settings (no secrets)."""
        decoding = {k: v for k, v in sorted(self.params.items()) if k not in SECRET_PARAMS}
        return {"model": self.model, "endpoint": self.cache_endpoint, "decoding": decoding}

    @property
    def cache_endpoint(self) -> str:
        """What names this server in cache keys and probe records (``cache_identity`` or the URL)."""
        return self.cache_identity or self.public_endpoint

    def _redactor(self) -> Redactor:
        key = self.api_key or os.environ.get(self.api_key_env)
        query = tuple(v for k, v in self.query.items() if k.lower() in SECRET_PARAMS)
        return Redactor((key, *url_secrets(str(self.base_url)), *query))

    def cache_path(self) -> Path | None:
        """Return the DuckDB file of completed calls, None when caching is off."""
        if self.cache is False:
            return None
        if self.cache in (None, True):
            root = Path(os.environ.get("EVALNB_CACHE_DIR", Path.home() / ".cache" / "evalnb"))
            return root / "llm_cache.duckdb"
        return Path(str(self.cache))

    def chat(self, messages: Sequence[dict[str, Any]], **params: Any) -> ChatResult:  # noqa: ANN401
        """Send one chat (see :meth:`chat_many`)."""
        return self.chat_many([list(messages)], params=params, progress=False)[0]

    def with_settings(self, **changes: Any) -> LLMClient:  # noqa: ANN401 - dataclass fields
        """Return a copy of this client with ``changes`` to its fields (``cache=False``, ``model=…``).

        Unlike :func:`dataclasses.replace`, the copy counts its calls, tokens and cost in this
        client's ``stats`` (one tally: what the client a user holds reports includes what
        copies made for them spent), and keeps what this client already probed of the
        server (:meth:`capabilities`) while it asks the same endpoint and model: a copy made
        for one pass (the judge card's fresh runs) would otherwise probe again, seven calls
        in a row, whenever its reply cache is off.
        """
        copy = replace(self, **changes)
        copy.stats = self.stats
        if (copy.public_endpoint, copy.model) == (self.public_endpoint, self.model):
            copy._capabilities = self._capabilities
        return copy

    @property
    def known_capabilities(self) -> Capabilities | None:
        """Return what an earlier probe found in this process (None: not probed yet)."""
        return self._capabilities

    def capabilities(self, *, refresh: bool = False) -> Capabilities:
        """Return the format contracts this endpoint and model honour (see :mod:`~evalnb.llm.contract`).

        Probed once with a few tiny requests (never cached as replies), then kept in this
        client and in its DuckDB cache per endpoint and model; ``refresh=True`` probes again
        (after the server or its version changed).
        """
        from evalnb.llm.contract import Capabilities, probe_requests, read_probes  # noqa: PLC0415

        if self._capabilities is not None and not refresh:
            return self._capabilities
        path = self.cache_path()
        if path is not None and not refresh:
            cache = ReplyCache(path)
            try:
                found = cache.capabilities(self.cache_endpoint, self.model)
            finally:
                cache.close()
            if found is not None:
                self._capabilities = Capabilities.from_json(found)
                return self._capabilities
        probes = probe_requests()
        # Probes are calls too (counted in this client's stats), never cached as replies.
        fresh = self.with_settings(cache=False, concurrency=1, max_retries=min(self.max_retries, 1))
        results = {
            kind: fresh.chat_many([messages], params=params, progress=False)[0]
            for kind, messages, params in probes
        }
        # The probe's requests, counted from its results (other calls may count on the same
        # stats meanwhile); their retries are in ``retries`` as every call's are.
        self.stats.probe_calls += sum(r.attempts > 0 for r in results.values())
        self._capabilities = read_probes(self.public_endpoint, self.model, results)
        if path is not None:
            cache = ReplyCache(path)
            try:
                cache.put_capabilities(
                    self.cache_endpoint, self.model, self._capabilities.to_json()
                )
            finally:
                cache.close()
        return self._capabilities

    def chat_many(
        self,
        conversations: Sequence[Sequence[dict[str, Any]]],
        *,
        params: dict[str, Any] | None = None,
        progress: bool = True,
    ) -> list[ChatResult]:
        """Send many chats concurrently; results come back in the same order.

        Safe to call from a notebook: when an event loop is already running (Jupyter), the
        calls run on their own loop in a worker thread, so nothing deadlocks.
        """
        return run_blocking(
            self._run([list(c) for c in conversations], dict(params or {}), progress)
        )

    async def achat_many(
        self,
        conversations: Sequence[Sequence[dict[str, Any]]],
        *,
        params: dict[str, Any] | None = None,
    ) -> list[ChatResult]:
        """Await many chats from code already running in an event loop (cached as always)."""
        return await self._run([list(c) for c in conversations], dict(params or {}), False)

    async def _run(
        self, conversations: list[list[dict[str, Any]]], params: dict[str, Any], progress: bool
    ) -> list[ChatResult]:
        import httpx  # noqa: PLC0415
        from tqdm.auto import tqdm  # noqa: PLC0415

        body_params = {**self.params, **params}
        keys = [reply_key(self.cache_endpoint, self.model, c, body_params) for c in conversations]
        path = self.cache_path()
        cache = ReplyCache(path) if path is not None else None
        try:
            done = cache.get(sorted(set(keys))) if cache else {}
            results: list[ChatResult | None] = [done.get(k) for k in keys]
            self.stats.cache_hits += sum(r is not None for r in results)
            todo: dict[str, list[int]] = {}
            for i, k in enumerate(keys):
                if results[i] is None:
                    todo.setdefault(k, []).append(i)  # identical calls are sent once
            bar = tqdm(
                total=len(keys),
                initial=len(keys) - sum(map(len, todo.values())),
                disable=not progress,
                desc=f"chat {self.model}",
            )
            gate = asyncio.Semaphore(self.concurrency)
            pacing = Pacer(self.requests_per_second)
            redactor = self._redactor()  # once per batch: every failed call's text goes through it
            headers = self._headers()
            limits = httpx.Limits(
                max_connections=self.concurrency, max_keepalive_connections=self.concurrency
            )
            loop = asyncio.get_running_loop()
            # One writer thread: each completed call is committed as soon as it completes,
            # without blocking the event loop (a DuckDB insert would stall every call).
            writer = concurrent.futures.ThreadPoolExecutor(1)
            async with httpx.AsyncClient(
                headers=headers, timeout=self.timeout_s, limits=limits, params=self.query
            ) as http:

                async def one(k: str, idx: list[int]) -> None:
                    async with gate:
                        request = {
                            "model": self.model,
                            "messages": conversations[idx[0]],
                            **body_params,
                        }
                        result = await self._call(http, request, pacing, redactor)
                    if result.error is None and cache is not None:
                        text = json.dumps(request, ensure_ascii=False)
                        await loop.run_in_executor(
                            writer, cache.put, k, self.cache_endpoint, self.model, text, result
                        )
                    for i in idx:
                        results[i] = result
                    bar.update(len(idx))

                pending = list(todo.items())
                if self.batch and pending:  # one batch file instead of one call each
                    await self._batched(
                        http, pending, conversations, body_params, cache, redactor, results
                    )
                    pending = []
                try:
                    if pending and not self._answered:
                        # One call first: an address where nothing listens fails here, in
                        # seconds, instead of once per call after every call's retries.
                        await one(*pending.pop(0))
                    await asyncio.gather(*(one(k, idx) for k, idx in pending))
                finally:
                    writer.shutdown(wait=True)
            bar.close()
        finally:
            if cache is not None:
                cache.close()
        return [r if r is not None else ChatResult(None, "not sent") for r in results]

    async def _batched(
        self,
        http: httpx.AsyncClient,
        pending: list[tuple[str, list[int]]],
        conversations: list[list[dict[str, Any]]],
        body_params: dict[str, Any],
        cache: ReplyCache | None,
        redactor: Redactor,
        results: list[ChatResult | None],
    ) -> None:
        """Send the pending calls as one batch (:mod:`evalnb.llm.batch`) and place the replies."""
        requests = {}
        for key, idx in pending:
            request = {"model": self.model, "messages": conversations[idx[0]], **body_params}
            requests[key] = request if self.budget is None else self.budget.bounded(request)
        path = self.cache_path()
        record = BatchRecord(path.with_name(path.name + ".batches.json") if path else None)

        def parse(text: str, request: dict[str, Any]) -> ChatResult:
            return self._parse(
                text,
                0.0,
                1,
                redactor,
                tools="tools" in request,
                request_logprobs=bool(request.get("logprobs")),
            )

        self.stats.calls += len(requests)
        found = await run_batch(
            http,
            str(self.base_url),
            requests,
            record=record,
            parse=parse,
            poll_s=self.batch_poll_s,
            timeout_s=self.batch_timeout_s,
            budget=self.budget,
            prices=self.prices,
        )
        for key, idx in pending:
            result = found[key]
            if result.error is None and cache is not None:
                text = json.dumps(requests[key], ensure_ascii=False)
                cache.put(key, self.cache_endpoint, self.model, text, result)
            elif result.error is not None:
                self.stats.failures += 1
            for i in idx:
                results[i] = result

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        key = self.api_key or os.environ.get(self.api_key_env)
        if key:
            bearer = self.auth_header.lower() == "authorization"
            headers[self.auth_header] = f"Bearer {key}" if bearer else key
        return headers

    def post_json(
        self, url: str, payloads: Sequence[dict[str, Any]]
    ) -> list[tuple[int, Any] | str]:
        """POST each payload as JSON to ``url``, another route of this server (``/tokenize``).

        Under the bounds of a chat call: one attempt's deadline (``timeout_s``: connecting
        and every read together, so a host dripping a byte a second cannot hold it longer)
        and the reply size cap (``max_reply_bytes``, refused as it streams in), with this
        client's credentials, query and concurrency; no retries, no cache. Returns, per
        payload in order, (HTTP status, the body read as JSON, or None where it is not
        JSON), or the error text of a call that failed.
        """
        return run_blocking(self._post_all(url, list(payloads)))

    async def _post_all(
        self, url: str, payloads: list[dict[str, Any]]
    ) -> list[tuple[int, Any] | str]:
        import httpx  # noqa: PLC0415

        gate = asyncio.Semaphore(self.concurrency)
        redactor = self._redactor()

        async def one(http: httpx.AsyncClient, payload: dict[str, Any]) -> tuple[int, Any] | str:
            async with gate:
                try:
                    status, text, _ = await self._post(http, payload, url=url)
                except _TooLarge as exc:
                    return str(exc)
                except TimeoutError:
                    return f"Timeout: no complete reply within timeout_s={self.timeout_s:g} s"
                except httpx.HTTPError as exc:
                    return redactor.redact(f"{type(exc).__name__}: {exc}")[:300]
            try:
                body = json.loads(text)
            except (ValueError, RecursionError):
                body = None
            return status, body

        async with httpx.AsyncClient(
            headers=self._headers(), timeout=self.timeout_s, params=self.query
        ) as http:
            return list(await asyncio.gather(*(one(http, p) for p in payloads)))

    async def _call(
        self, http: httpx.AsyncClient, request: dict[str, Any], pacing: Pacer, redactor: Redactor
    ) -> ChatResult:
        import httpx  # noqa: PLC0415

        error = "not sent"
        budget = self.budget
        if budget is not None:
            request = budget.bounded(request)
        for attempt in range(self.max_retries + 1):
            await pacing.wait()
            start = time.perf_counter()
            wait = None
            reservation = None
            if budget is not None:
                held = budget.reserve(request, self.prices)
                while held is None:  # it fits once calls in flight settle what they used
                    await asyncio.sleep(0.005)
                    held = budget.reserve(request, self.prices)
                if isinstance(held, str):  # the call that could exceed the budget is not made
                    return ChatResult(None, held, attempts=attempt)
                reservation = held
            try:
                self.stats.calls += 1
                status, text, retry_after = await self._post(http, request)
                self._answered = True
                if status == 200:
                    result = self._parse(
                        text,
                        time.perf_counter() - start,
                        attempt + 1,
                        redactor,
                        tools="tools" in request,
                        request_logprobs=bool(request.get("logprobs")),
                    )
                    if reservation is not None and budget is not None:
                        reported = (
                            result.prompt_tokens is not None
                            and result.completion_tokens is not None
                        )
                        used = (result.prompt_tokens or 0) + (result.completion_tokens or 0)
                        budget.settle(reservation, used if reported else None, result.cost)
                        reservation = None
                    return result
                if reservation is not None and budget is not None:
                    budget.settle(reservation, 0, 0.0)  # refused by the host: nothing generated
                    reservation = None
                # Redacted before it is cut: a key split at the cut would escape the mask.
                error = f"HTTP {status}: {redactor.redact(text[:4000])[:200]}"
                if status not in _RETRY_STATUS:
                    break  # 400/401/404…: retrying cannot help
                wait = retry_after_seconds(retry_after)
            except _TooLarge as exc:
                error = str(exc)
                break  # the same request gets the same reply
            except _BadReply as exc:
                error = redactor.redact(str(exc))[:200]
            except TimeoutError:
                error = (
                    f"Timeout: no complete reply within timeout_s={self.timeout_s:g} s (the deadline "
                    "of one attempt: connecting and every read)"
                )
            except httpx.ConnectError as exc:
                error = redactor.redact(f"{type(exc).__name__}: {exc}")
                if not self._answered and attempt + 1 >= _FIRST_CONNECT_TRIES:
                    raise self._unreachable(error) from None
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                error = redactor.redact(f"{type(exc).__name__}: {exc}")
            finally:
                if reservation is not None and budget is not None:
                    budget.settle(reservation, None, None)  # no usage said: all of it counts
            if attempt < self.max_retries:
                self.stats.retries += 1
                base = self.backoff_s * 2**attempt
                await asyncio.sleep(
                    min(wait if wait is not None else base + random.uniform(0, base), 30.0)
                )
        self.stats.failures += 1
        _log.warning("chat call failed after %d attempt(s): %s", attempt + 1, error)
        return ChatResult(None, error, attempts=attempt + 1)

    def _unreachable(self, error: str) -> EndpointUnreachable:
        self.stats.failures += 1
        msg = (
            f"{self.public_endpoint}: cannot connect ({error}) on {_FIRST_CONNECT_TRIES} tries "
            "of the first call, and this endpoint has never answered: nothing listens at that "
            "address or its host name does not resolve. Check base_url (host, port, the /v1 "
            "part) and that the server is running; no other call was sent."
        )
        return EndpointUnreachable(msg)

    async def _post(
        self, http: httpx.AsyncClient, request: dict[str, Any], *, url: str | None = None
    ) -> tuple[int, str, str | None]:
        """Send one attempt under its deadline; read at most ``max_reply_bytes`` of the reply."""
        async with asyncio.timeout(self.timeout_s):
            async with http.stream("POST", url or self.endpoint, json=request) as reply:
                declared = reply.headers.get("content-length")
                if declared and declared.isdigit() and int(declared) > self.max_reply_bytes:
                    raise _TooLarge(self._too_large(int(declared)))
                chunks, size = [], 0
                async for chunk in reply.aiter_bytes():
                    size += len(chunk)
                    if size > self.max_reply_bytes:
                        raise _TooLarge(self._too_large(size))
                    chunks.append(chunk)
                text = b"".join(chunks).decode(reply.encoding or "utf-8", errors="replace")
                return reply.status_code, text, reply.headers.get("retry-after")

    def _too_large(self, size: int) -> str:
        return (
            f"reply body of {size:,} bytes or more, expected at most max_reply_bytes="
            f"{self.max_reply_bytes:,}; raise it if such replies are real"
        )

    def _parse(
        self,
        text: str,
        duration: float,
        attempts: int,
        redactor: Redactor,
        *,
        tools: bool = False,
        request_logprobs: bool = False,
    ) -> ChatResult:
        calls: tuple[dict[str, Any], ...] | None = None
        try:
            body = json.loads(text)
            message = body["choices"][0]["message"]
            if tools and message.get("tool_calls"):  # the model asks for tools: a valid reply
                calls = tool_calls_of(message["tool_calls"])
                content = content_text({**message, "content": message.get("content") or ""})
            else:
                content = content_text(message)
        except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError) as exc:
            # Long enough to redact a key that straddles where the error is cut later.
            msg = f"malformed reply body ({type(exc).__name__}: {exc}): {text[:2000]!r}"
            raise _BadReply(msg) from None
        # A key the host echoes in an answer, or in the tools it calls, must not reach the
        # cache, the lab's steps, a report or a log.
        content = redactor.redact(content)
        if calls is not None:
            calls = tuple(
                {k: redactor.redact(v) if isinstance(v, str) else v for k, v in c.items()}
                for c in calls
            )
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
        pt = token_count(usage, "prompt_tokens")
        ct = token_count(usage, "completion_tokens")
        cost = None
        if self.prices is not None and pt is not None and ct is not None:
            cost = (pt * self.prices[0] + ct * self.prices[1]) / 1e6
        self.stats.prompt_tokens += pt or 0
        self.stats.completion_tokens += ct or 0
        self.stats.cost += cost or 0.0
        return ChatResult(
            content,
            None,
            pt,
            ct,
            cost,
            duration,
            attempts=attempts,
            contexts=reply_contexts(body),
            tool_calls=calls,
            logprobs=logprobs_of(body["choices"][0]) if request_logprobs else None,
            finish_reason=finish_reason_of(body["choices"][0]),
        )


class _BadReply(Exception):
    """A 200 reply whose body is not a chat completion (retried like a dropped connection)."""


class _TooLarge(Exception):
    """A reply body past ``max_reply_bytes`` (not retried: the same request gets the same)."""
