"""Counting a conversation's prompt tokens before it is sent, as the judge's server will.

Three ways, the first that works:

``server``
    the endpoint's own tokenizer: llama-cpp-python's ``POST /extras/tokenize`` or the
    llama.cpp server's ``POST /tokenize`` — exact for the text;
``tiktoken``
    OpenAI's tokenizer for the model, when ``tiktoken`` is installed and knows the model;
``approximate``
    one token per four characters (OpenAI's rule of thumb for English; other scripts run
    higher, code lower), said as such in the estimate.

A chat template adds tokens around each message (role markers, separators, the prompt
that opens the reply). They are measured, not guessed, where the judge was probed
(:attr:`~evalnb.llm.contract.Capabilities.probe_prompt_tokens`: the server's own count for
a system + user conversation, minus its text); else OpenAI's documented 3 per message and
3 for the reply.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from evalnb.llm.contract import PROBE_SYSTEM

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from evalnb.llm.client import LLMClient

__all__ = ["TokenCounter", "approximate_tokens", "token_counter"]

_PROBE_USER = "Say hello in one word."
_FALLBACK_PER_MESSAGE = 3
_FALLBACK_REPLY = 3


class TokenCounter:
    """Counts prompt tokens of conversations for one judge (see the module docstring)."""

    def __init__(
        self, method: str, count: Callable[[list[str]], list[int]], overhead: float
    ) -> None:
        self.method = method
        self._count = count
        self.per_message = overhead

    def conversations(self, conversations: Sequence[Sequence[dict[str, Any]]]) -> list[int]:
        """Return the prompt tokens of each conversation."""
        texts = [str(m.get("content") or "") for c in conversations for m in c]
        # Each distinct text is counted once: every conversation repeats the system message,
        # and a server's tokenizer takes one request per text.
        distinct = list(dict.fromkeys(texts))
        counted = dict(zip(distinct, self._count(distinct) if distinct else [], strict=True))
        counts = iter(counted[t] for t in texts)
        return [
            round(sum(next(counts) for _ in c) + self.per_message * len(c)) for c in conversations
        ]


def approximate_tokens(texts: list[str]) -> list[int]:
    """Return one token per four characters of each text (OpenAI's rule of thumb)."""
    return [math.ceil(len(t) / 4) for t in texts]


def _tokens(answer: tuple[int, Any] | str) -> list[Any] | str:
    """Return the token list of a tokenizer's answer, or what was wrong with it."""
    if isinstance(answer, str):
        return answer
    status, body = answer
    if status != 200:
        return f"HTTP {status}"
    tokens = body.get("tokens") if isinstance(body, dict) else None
    if not isinstance(tokens, list):
        found = type(body).__name__ if body is not None else "a body that is not JSON"
        return f"{found} where a JSON object with a list 'tokens' was expected"
    return tokens


def _server_counter(judge: LLMClient) -> Callable[[list[str]], list[int]] | None:
    """Return a counter on the judge server's own tokenizer, if it has one that answers sense.

    Every call is bounded as a chat call is (:meth:`~evalnb.llm.client.LLMClient.post_json`:
    the client's deadline and reply size cap); a route whose first answer is not a JSON
    object with a list of tokens (an HTML page, a bare list, a string) is not a tokenizer.
    """
    root = str(judge.base_url).removesuffix("/v1")
    for path, field in (("/extras/tokenize", "input"), ("/tokenize", "content")):
        url = root + path
        if isinstance(_tokens(judge.post_json(url, [{field: "hello"}])[0]), str):
            continue

        def count(
            texts: list[str], url: str = url, field: str = field, path: str = path
        ) -> list[int]:
            asked = [t for t in texts if t]
            answers = iter(judge.post_json(url, [{field: t} for t in asked]))
            out = []
            for i, text in enumerate(texts):
                if not text:
                    out.append(0)
                    continue
                tokens = _tokens(next(answers))
                if isinstance(tokens, str):
                    msg = (
                        f"{judge.public_endpoint}: its tokenizer ({path}) answered text {i} "
                        f"with {tokens}; it answered the probe: retry, or count without it "
                        "(tiktoken, or four characters a token)"
                    )
                    raise ValueError(msg)
                out.append(len(tokens))
            return out

        return count
    return None


def _tiktoken_counter(model: str) -> Callable[[list[str]], list[int]] | None:
    try:
        import tiktoken  # type: ignore[import-not-found]  # noqa: PLC0415 - optional
    except ImportError:
        return None
    try:
        encoding = tiktoken.encoding_for_model(model)
    except KeyError:
        return None
    return lambda texts: [len(encoding.encode(t)) for t in texts]


def token_counter(judge: LLMClient) -> TokenCounter:
    """Return the best counter for ``judge``: its server's tokenizer, tiktoken, or ~4 chars."""
    counters = (
        ("server", _server_counter(judge)),
        ("tiktoken", _tiktoken_counter(judge.model)),
        ("approximate", approximate_tokens),
    )
    method, count = next((name, c) for name, c in counters if c is not None)
    probed = judge.capabilities().probe_prompt_tokens
    if probed is not None:
        text = sum(count([PROBE_SYSTEM, _PROBE_USER]))
        per_message = max(0.0, (probed - text) / 2)
    else:
        per_message = _FALLBACK_PER_MESSAGE + _FALLBACK_REPLY / 2
    return TokenCounter(method, count, per_message)
