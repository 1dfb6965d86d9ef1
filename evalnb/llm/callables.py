"""A Python function as the system under test: ``f(prompt) -> answer`` or ``(answer, contexts)``.

So a LangChain or LlamaIndex pipeline, or any RAG, plugs in as one function. Calls run
concurrently (a thread pool for a plain function, one event loop for an ``async def``),
each retried on an exception with backoff, each answer stored in a DuckDB cache the moment
it returns — a killed run resumes without asking a case again — and a case whose calls all
fail keeps its error as an output row instead of aborting the run.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import inspect
import json
import time
from typing import TYPE_CHECKING, Any

from tqdm.auto import tqdm

from evalnb.llm.client import ChatResult, ReplyCache
from evalnb.llm.pacing import run_blocking

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

__all__ = ["BadReturn", "ask_callable", "read_answer"]


class BadReturn(TypeError):
    """A system returned something that is not an answer (retrying cannot help)."""


def read_answer(value: object) -> tuple[str, tuple[str, ...] | None]:
    """Read a system's return: text, ``(answer, contexts)`` or ``{"answer", "contexts"}``."""
    if isinstance(value, str):
        return value, None
    answer: object = None
    contexts: object = None
    if isinstance(value, dict):
        answer, contexts = value.get("answer"), value.get("contexts", value.get("context"))
    elif isinstance(value, (tuple, list)) and len(value) == 2:
        answer, contexts = value
    if isinstance(answer, str) and (
        contexts is None
        or (isinstance(contexts, (list, tuple)) and all(isinstance(c, str) for c in contexts))
    ):
        return answer, None if contexts is None else tuple(contexts)
    msg = (
        "the system returned "
        f"{type(value).__name__} {str(value)[:80]!r}; expected the answer as text, "
        "(answer, [context, ...]) or {'answer': ..., 'contexts': [...]}"
    )
    raise BadReturn(msg)


def _key(name: str, prompt: str) -> str:
    return hashlib.sha256(json.dumps(["callable", name, prompt]).encode()).hexdigest()


def ask_callable(
    fn: Callable[[str], Any],
    prompts: Sequence[str],
    *,
    name: str,
    cache: Path | None,
    concurrency: int = 8,
    max_retries: int = 2,
    backoff_s: float = 0.5,
    progress: bool = True,
) -> list[ChatResult]:
    """Ask ``fn`` every prompt (each distinct one once); results in the prompts' order.

    ``name`` keys the cache with the prompt: give another name when the system changes.
    """
    store = ReplyCache(cache) if cache is not None else None
    try:
        keys = [_key(name, p) for p in prompts]
        done = store.get(sorted(set(keys))) if store is not None else {}
        todo = list(dict.fromkeys(p for p, k in zip(prompts, keys, strict=True) if k not in done))
        bar = tqdm(
            total=len(set(keys)),
            initial=len(set(keys)) - len(todo),
            disable=not progress,
            desc=f"ask {name}",
        )

        def keep(prompt: str, result: ChatResult) -> None:
            if store is not None and result.error is None:
                store.put(
                    _key(name, prompt), "callable", name, json.dumps({"prompt": prompt}), result
                )
            done[_key(name, prompt)] = result
            bar.update(1)

        if inspect.iscoroutinefunction(fn):
            run_blocking(_ask_async(fn, todo, concurrency, max_retries, backoff_s, keep))
        else:
            _ask_threads(fn, todo, concurrency, max_retries, backoff_s, keep)
        bar.close()
    finally:
        if store is not None:
            store.close()
    return [done[k] for k in keys]


def _outcome(value: object, start: float, attempts: int) -> ChatResult:
    answer, contexts = read_answer(value)
    return ChatResult(
        answer, None, duration_s=time.perf_counter() - start, attempts=attempts, contexts=contexts
    )


def _failure(exc: BaseException, attempts: int) -> ChatResult:
    return ChatResult(None, f"{type(exc).__name__}: {str(exc)[:300]}", attempts=attempts)


def _ask_threads(
    fn: Callable[[str], Any],
    prompts: list[str],
    concurrency: int,
    retries: int,
    backoff_s: float,
    keep: Callable[[str, ChatResult], None],
) -> None:
    def one(prompt: str) -> ChatResult:
        error: BaseException | None = None
        for attempt in range(retries + 1):
            start = time.perf_counter()
            try:
                return _outcome(fn(prompt), start, attempt + 1)
            except BadReturn as exc:  # a return of the wrong shape: retrying cannot help
                return _failure(exc, attempt + 1)
            except Exception as exc:
                error = exc
            if attempt < retries:
                time.sleep(backoff_s * 2**attempt)
        assert error is not None
        return _failure(error, retries + 1)

    with concurrent.futures.ThreadPoolExecutor(max(1, concurrency)) as pool:
        futures = {pool.submit(one, p): p for p in prompts}
        for future in concurrent.futures.as_completed(futures):
            keep(futures[future], future.result())


async def _ask_async(
    fn: Callable[[str], Any],
    prompts: list[str],
    concurrency: int,
    retries: int,
    backoff_s: float,
    keep: Callable[[str, ChatResult], None],
) -> None:
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(prompt: str) -> None:
        async with gate:
            error: BaseException | None = None
            for attempt in range(retries + 1):
                start = time.perf_counter()
                try:
                    keep(prompt, _outcome(await fn(prompt), start, attempt + 1))
                    return
                except BadReturn as exc:
                    keep(prompt, _failure(exc, attempt + 1))
                    return
                except Exception as exc:
                    error = exc
                if attempt < retries:
                    await asyncio.sleep(backoff_s * 2**attempt)
            assert error is not None
            keep(prompt, _failure(error, retries + 1))

    await asyncio.gather(*(one(p) for p in prompts))
