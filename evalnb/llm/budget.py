"""A hard budget for judge calls: the call that could exceed it is never made.

The contract. A :class:`Budget` caps what the calls of one run may spend, in tokens
(prompt and completion together) or in US dollars at the client's ``prices``. Before each
attempt the client reserves the most that call can cost — its prompt's UTF-8 bytes (no
tokenizer makes more tokens than bytes) plus a template allowance per message, and its
``max_tokens`` of completion (set to :attr:`Budget.max_tokens` on a request that has none,
since an unbounded reply has no upper bound) — and sends it only if spent + reserved + that
bound stays within the cap (while calls in flight hold reservations it waits for them to
settle; it is refused only when even then it could not fit). When the reply comes, the reservation is replaced by the usage
the server reported (or kept whole where it reports none). So the tokens counted at the
servers never exceed the budget, whatever the concurrency. A refused call is a failure
whose text starts with :data:`REFUSED`; the judge marks its row ``budget_exhausted`` and
:func:`evalnb.evaluate` does not count such a row as scored, so a rerun with a larger budget
asks exactly the calls that were refused (the others come from the reply cache).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import Any

__all__ = ["REFUSED", "Budget", "upper_bound"]

REFUSED = "budget exhausted"
"""How a call the budget refused begins its error text."""
_PER_MESSAGE = 16  # chat-template tokens a message may add (role markers, separators)


def upper_bound(request: dict[str, Any]) -> tuple[int, int]:
    """Return the most prompt and completion tokens ``request`` can use (it has ``max_tokens``)."""
    prompt = 8
    for message in request.get("messages", ()):
        content = message.get("content")
        if isinstance(content, str):
            prompt += len(content.encode("utf-8"))
        elif content is not None:  # parts (text, images): their JSON is longer than their tokens
            prompt += len(str(content).encode("utf-8"))
        prompt += _PER_MESSAGE
    for extra in ("tools", "response_format", "json_schema"):
        if extra in request:
            prompt += len(str(request[extra]).encode("utf-8"))
    completion = int(request.get("max_tokens") or request.get("max_completion_tokens") or 0)
    return prompt, completion


@dataclass
class Budget:
    """A cap on one run's judge calls: ``tokens`` and/or ``usd`` (see the module docstring).

    Parameters
    ----------
    tokens
        The most prompt + completion tokens the run's calls may use.
    usd
        The most US dollars, at each client's ``prices`` (a client without prices cannot
        spend under a dollar budget: its calls are refused, said so).
    max_tokens
        The completion cap given to a request that has none.
    """

    tokens: int | None = None
    usd: float | None = None
    max_tokens: int = 1024
    spent_tokens: int = field(default=0, init=False)
    spent_usd: float = field(default=0.0, init=False)
    refused: int = field(default=0, init=False)
    _reserved_tokens: int = field(default=0, init=False, repr=False)
    _reserved_usd: float = field(default=0.0, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.tokens is None and self.usd is None:
            msg = "a budget caps tokens, usd or both; got neither"
            raise ValueError(msg)
        if self.tokens is not None and (isinstance(self.tokens, bool) or self.tokens < 0):
            msg = f"tokens: a whole number of at least 0; got {self.tokens!r}"
            raise ValueError(msg)
        if self.usd is not None and not (math.isfinite(self.usd) and self.usd >= 0):
            msg = f"usd: a finite amount of at least 0; got {self.usd!r}"
            raise ValueError(msg)

    def bounded(self, request: dict[str, Any]) -> dict[str, Any]:
        """Return ``request`` with a completion cap (:attr:`max_tokens` where it has none)."""
        if request.get("max_tokens") or request.get("max_completion_tokens"):
            return request
        return {**request, "max_tokens": self.max_tokens}  # an unbounded reply has no bound

    def reserve(
        self, request: dict[str, Any], prices: tuple[float, float] | None
    ) -> tuple[int, float] | str | None:
        """Reserve the most ``request`` can cost.

        Returns the reservation; None when it fits only once calls in flight settle (wait
        and ask again: they usually use far less than reserved); or, when it cannot fit even
        then, why it is refused.
        """
        prompt, completion = upper_bound(request)
        tokens = prompt + completion
        if prices:
            usd = (prompt * prices[0] + completion * prices[1]) / 1e6
        else:  # no prices: no dollar figure, which a dollar budget cannot allow
            usd = math.inf if self.usd is not None else 0.0
        with self._lock:
            if self.tokens is not None and self.spent_tokens + tokens > self.tokens:
                self.refused += 1
                return (
                    f"{REFUSED}: this call could use {tokens:,} tokens and {self.spent_tokens:,} "
                    f"of tokens={self.tokens:,} are spent; not sent (a rerun with a larger "
                    "budget sends it)"
                )
            if self.usd is not None and self.spent_usd + usd > self.usd:
                self.refused += 1
                why = "the client has no prices" if not prices else f"it could cost ${usd:.6f}"
                return (
                    f"{REFUSED}: {why}, and ${self.spent_usd:.6f} of usd={self.usd:g} is spent; "
                    "not sent (a rerun with a larger budget sends it)"
                )
            over_tokens = (
                self.tokens is not None
                and self.spent_tokens + self._reserved_tokens + tokens > self.tokens
            )
            over_usd = self.usd is not None and (
                self.spent_usd + self._reserved_usd + usd > self.usd
            )
            if over_tokens or over_usd:
                return None  # fits once the calls in flight settle
            self._reserved_tokens += tokens
            self._reserved_usd += usd
            return tokens, usd

    def settle(
        self,
        reservation: tuple[int, float],
        used_tokens: int | None,
        used_usd: float | None,
    ) -> None:
        """Replace a reservation by what the call used (all of it where the server said nothing)."""
        tokens, usd = reservation
        with self._lock:
            self._reserved_tokens -= tokens
            self._reserved_usd -= usd
            self.spent_tokens += tokens if used_tokens is None else used_tokens
            self.spent_usd += usd if used_usd is None else used_usd
