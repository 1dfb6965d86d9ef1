"""Two scripted judges for cascades, a cheap one that knows when it is unsure and a strong one.

Both answer the binary judge's prompt with one verdict token and its alternatives' token
probabilities, as an OpenAI-compatible server with ``logprobs`` does, and report usage.
The answers say what they are: ``the correct answer`` or ``a wrong reply``, ``easy`` or
``hard``, and (for the cheap judge's mistakes) ``odd``. On easy answers the cheap judge is
right and sure (P = 0.99); on hard ones it is unsure (P = 0.6) and wrong on the odd ones.
The strong judge is right and sure everywhere but on answers marked ``trap``.
"""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl

__all__ = ["cheap_judge", "strong_judge", "tiered_lab", "verdict_body"]


def verdict_body(verdict: str, p_pass: float, prompt_tokens: int = 30) -> bytes:
    """Return an OpenAI reply whose one token is ``verdict``, with P(1) = ``p_pass``."""
    top = [
        {"token": "1", "logprob": math.log(p_pass)},
        {"token": "0", "logprob": math.log(1 - p_pass)},
    ]
    body = {
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": verdict},
                "logprobs": {"content": [{"token": verdict, "logprob": 0.0, "top_logprobs": top}]},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 1},
    }
    return json.dumps(body).encode()


def cheap_judge(prompt: str) -> bytes:
    """Sure and right on easy answers; unsure on hard ones, and wrong on the odd ones."""
    right = "correct answer" in prompt
    if "easy" in prompt or "hello" in prompt.lower():
        return verdict_body("1" if right else "0", 0.99 if right else 0.01)
    says = right != ("odd" in prompt)
    return verdict_body("1" if says else "0", 0.6 if says else 0.4)


def strong_judge(prompt: str) -> bytes:
    """Right and sure, but on answers marked ``trap``."""
    says = ("correct answer" in prompt) != ("trap" in prompt)
    return verdict_body("1" if says else "0", 0.97 if says else 0.03)


def tiered_lab(
    n: int, *, seed: int = 0, easy: float = 0.62, trap: float = 0.03
) -> tuple[pl.DataFrame, dict[str, bool]]:
    """Return ``n`` answers (a frame for ``evalnb.load``) and whether each is truly correct."""
    rng = np.random.default_rng(seed)
    rows, truth = [], {}
    for i in range(n):
        right = bool(rng.random() < 0.5)
        kind = "easy" if rng.random() < easy else "hard"
        odd = " odd" if kind == "hard" and rng.random() < 0.65 else ""
        trapped = " trap" if rng.random() < trap else ""
        text = "the correct answer" if right else "a wrong reply"
        rows.append(
            {
                "case_id": f"c{i}",
                "prompt": f"question {i}",
                "actual": f"{text} ({kind}{odd}{trapped})",
            }
        )
        truth[f"c{i}"] = right
    return pl.DataFrame(rows), truth
