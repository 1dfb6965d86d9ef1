"""Verdicts and scores read from the judge's token probabilities, where the server gives them.

A parsed ``false`` says nothing of how close the judge came to ``true``. With
``logprobs``, the token where the verdict starts carries the judge's alternatives: the
probability of *pass* is the mass of the tokens that begin a passing class word over the
mass of those that begin any class word (renormalised: other tokens are not an answer).
Case is ignored (a schema-constrained reply still shows the model's unconstrained
alternatives, ``True`` beside ``true``); a token that begins two class words counts for
neither. For a score, the expectation over the score tokens in range, weighted by their
probabilities (G-Eval's weighting); a score that spans several tokens (``10`` as ``1`` +
``0``) has no expectation, and where the scale reaches 10 a ``1`` token, which may begin
``10``, is left out (said in the result).
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["score_expectation", "verdict_probability"]


def _answer_token(
    logprobs: Sequence[tuple[str, float, Sequence[tuple[str, float]]]], text: str, at: int
) -> int | None:
    """Return the index of the token covering character ``at`` of the reply, if it lines up."""
    joined = "".join(t for t, _, _ in logprobs)
    if not text.startswith(joined[: len(text)]) and not joined.startswith(text[: len(joined)]):
        return None  # the tokens are not this reply's (a repair turn, a server's rewrite)
    offset = 0
    for i, (token, _, _) in enumerate(logprobs):
        end = offset + len(token)
        if offset <= at < end:
            # The answer must start the token (after its leading space): a token that only
            # ends with the answer's first letters carries other alternatives.
            return i if not token[: at - offset].strip() else None
        offset = end
    return None


def _value_start(text: str, field: str | None) -> int | None:
    if field is not None:
        found = re.search(rf'"{re.escape(field)}"\s*:\s*"?', text)
        return found.end() if found else None
    stripped = len(text) - len(text.lstrip())
    return stripped if stripped < len(text) else None


def _answer(
    logprobs: Sequence[tuple[str, float, Sequence[tuple[str, float]]]] | None,
    text: str,
    field: str | None,
) -> tuple[int, str, dict[str, float]] | None:
    """Return where the answer starts, its token, and the token's alternatives (itself too)."""
    if not logprobs:
        return None
    start = _value_start(text, field)
    index = _answer_token(logprobs, text, start) if start is not None else None
    if start is None or index is None:
        return None
    token, lp, top = logprobs[index]
    alternatives = dict(top) if top else {}
    alternatives.setdefault(token, lp)
    if len(alternatives) < 2:
        # No alternatives (a host that sends empty top_logprobs, or top_logprobs=1): the
        # chosen token alone would read as certainty, P = 1.0. No alternatives, no probability.
        return None
    return start, token, alternatives


def verdict_probability(
    logprobs: Sequence[tuple[str, float, Sequence[tuple[str, float]]]] | None,
    text: str,
    classes: Mapping[str, Any],
    passing: object,
    *,
    field: str | None = None,
) -> float | None:
    """Return P(pass) at the verdict's token, or None when it cannot be read.

    Parameters
    ----------
    logprobs
        The reply's tokens (:attr:`~evalnb.llm.reply_cache.ChatResult.logprobs`).
    text
        The reply.
    classes, passing
        The class words and their values; ``passing`` is the value that passes.
    field
        The JSON field holding the verdict under a JSON contract; None: the reply is the word.
    """
    found = _answer(logprobs, text, field)
    if found is None:
        return None
    _, _, alternatives = found
    words = {str(c).lower(): v == passing for c, v in classes.items()}
    mass = {True: 0.0, False: 0.0}
    for alt, alt_lp in alternatives.items():
        piece = alt.strip().strip("\"'").lower()
        if not piece:
            continue
        sides = {passes for word, passes in words.items() if word.startswith(piece)}
        if len(sides) == 1:
            mass[sides.pop()] += math.exp(alt_lp)
    total = mass[True] + mass[False]
    return mass[True] / total if total > 0 else None


def score_expectation(
    logprobs: Sequence[tuple[str, float, Sequence[tuple[str, float]]]] | None,
    text: str,
    low: float,
    high: float,
    *,
    field: str | None = None,
) -> float | None:
    """Return the probability-weighted mean score at the score's token, or None."""
    found = _answer(logprobs, text, field)
    if found is None:
        return None
    start, token, alternatives = found
    written = re.match(r"\s*-?\d+", text[start:])
    if written is None or written.group().strip() != token.strip():
        return None  # the score spans several tokens
    weight = total = 0.0
    for alt, alt_lp in alternatives.items():
        piece = alt.strip()
        if not re.fullmatch(r"-?\d+", piece):
            continue
        value = int(piece)
        if not low <= value <= high or (high >= 10 and value == 1 and low <= 1):
            continue
        p = math.exp(alt_lp)
        weight += p * value
        total += p
    return weight / total if total > 0 else None
