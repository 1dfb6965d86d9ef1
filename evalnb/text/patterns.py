"""User-supplied regular expressions, bounded in size, compile cost and search time.

A pattern typed by a user (a ``regexp("...")`` operand, a JSON Schema ``pattern``) is run
with the ``regex`` package, whose searches take a timeout. Compiling is not covered by
that timeout, and ``regex`` unrolls counted repeats when it compiles: ``a{4294967294}``
allocates until the machine runs out of memory. :func:`check_pattern` therefore rejects a
pattern whose *unrolled size* (atoms times the repeat counts around them) is too large,
before anything compiles, and :class:`SearchBudget` bounds the time of one search and of
all searches of a run.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache

import regex

from evalnb.lab.errors import EvalnbError

__all__ = [
    "MAX_COMPILED_BYTES",
    "MAX_PATTERN_CHARS",
    "MAX_PATTERN_COST",
    "PatternError",
    "SearchBudget",
    "check_pattern",
    "compile_pattern",
    "compiled_cache_bytes",
    "pattern_cost",
]

MAX_PATTERN_CHARS = 4_096
# ``regex`` compiles a pattern of unrolled size 100,000 in about 40 ms and a few MB; real
# patterns (dates, amounts, names) stay below 1,000.
MAX_PATTERN_COST = 100_000

_COUNTED = regex.compile(r"\{(\d*)(?:,(\d*))?\}")


class PatternError(EvalnbError, ValueError):
    """A user-supplied regular expression that is too large, too costly or invalid."""


def _repeat_bound(pattern: str, pos: int) -> tuple[int, int] | None:
    """``(count, end)`` for a counted repeat ``{m}``, ``{m,}``, ``{m,n}`` or ``{,n}`` at ``pos``.

    The count is the most copies the engine may unroll: ``n`` when given, else ``m``.
    """
    found = _COUNTED.match(pattern, pos)
    if found is None or (found.group(1) == "" and not found.group(2)):
        return None  # a literal "{" (as in re)
    low, high = found.group(1), found.group(2)
    count = int(high) if high else int(low or 0)
    return max(count, 1), found.end()


def _class_end(pattern: str, pos: int) -> int:
    """Index just past the character class opening at ``pos`` (``[`` included)."""
    i = pos + 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1  # a leading "]" is a member, not the end
    while i < len(pattern) and pattern[i] != "]":
        i += 2 if pattern[i] == "\\" else 1
    return i + 1


def pattern_cost(pattern: str) -> int:
    """Return the unrolled size of ``pattern``: its atoms times the repeat counts around them.

    A scan of the pattern's structure (escapes, classes, groups, alternation, quantifiers)
    that over-estimates rather than under-estimates; validity is left to the compiler.

    Examples
    --------
    >>> pattern_cost("ab{3}"), pattern_cost("(ab){2,5}"), pattern_cost("[a-z]+")
    (4, 10, 1)
    """
    # One frame per open group: (cost of the group so far, cost of its last atom).
    frames: list[list[int]] = [[0, 0]]
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        top = frames[-1]
        if ch in "*+?":
            i += 1
        elif ch == "{" and (bound := _repeat_bound(pattern, i)) is not None:
            top[0] += top[1] * (bound[0] - 1)
            top[1] *= bound[0]
            i = bound[1]
        elif ch == "(":
            frames.append([0, 0])
            i += 1
        elif ch == ")" and len(frames) > 1:
            inner = frames.pop()[0]
            frames[-1][0] += inner
            frames[-1][1] = inner
            i += 1
        elif ch == "|":
            top[1] = 0
            i += 1
        else:
            i = _class_end(pattern, i) if ch == "[" else i + (2 if ch == "\\" else 1)
            top[0] += 1
            top[1] = 1
    while len(frames) > 1:  # unbalanced: the compiler reports it; count what was seen
        inner = frames.pop()[0]
        frames[-1][0] += inner
    return frames[0][0]


@lru_cache(maxsize=4096)
def check_pattern(pattern: str) -> None:
    """Raise :class:`PatternError` unless ``pattern`` is small enough to compile safely.

    Examples
    --------
    >>> check_pattern("15,?969 [Mm]il")
    >>> check_pattern("a{4294967294}")
    Traceback (most recent call last):
    ...
    evalnb.text.patterns.PatternError: regexp 'a{4294967294}': expected a pattern whose \
repeats unroll to at most 100000 atoms, found 4294967294. Use an open repeat such as \
'+' or '{n,}' instead of a huge count
    """
    if len(pattern) > MAX_PATTERN_CHARS:
        msg = (
            f"regexp {pattern[:40]!r}...: expected at most {MAX_PATTERN_CHARS} characters, "
            f"found {len(pattern)}. Split it into several regexp(...) operands"
        )
        raise PatternError(msg)
    cost = pattern_cost(pattern)
    if cost > MAX_PATTERN_COST:
        msg = (
            f"regexp {pattern!r}: expected a pattern whose repeats unroll to at most "
            f"{MAX_PATTERN_COST} atoms, found {cost}. Use an open repeat such as '+' or "
            "'{n,}' instead of a huge count"
        )
        raise PatternError(msg)


# Compiled patterns kept for reuse, bounded by their estimated size rather than their
# number: ``regex`` keeps an unrolled pattern, about 170 bytes an atom (``a{99990}b`` took
# 17 MB), so 4,096 cached patterns could hold 70 GB. The estimate is the unrolled size.
MAX_COMPILED_BYTES = 128 * 2**20
_BYTES_PER_ATOM = 200
_compiled: OrderedDict[str, tuple[regex.Pattern[str], int]] = OrderedDict()
_compiled_bytes = 0
_compiled_lock = threading.Lock()


def compile_pattern(pattern: str) -> regex.Pattern[str]:
    """Check then compile a user's pattern (Python ``re`` syntax); cached within a byte budget.

    Raises
    ------
    PatternError
        When the pattern is too large or does not compile.
    """
    global _compiled_bytes
    with _compiled_lock:
        hit = _compiled.get(pattern)
        if hit is not None:
            _compiled.move_to_end(pattern)
            return hit[0]
    check_pattern(pattern)
    try:
        # cache_pattern=False: regex keeps 500 compiled patterns of its own, unbounded in bytes
        compiled = regex.compile(pattern, cache_pattern=False)
    except (regex.error, OverflowError, RecursionError) as exc:
        msg = f"invalid regexp {pattern!r}: expected a valid regular expression, found: {exc}"
        raise PatternError(msg) from None
    size = 2048 + _BYTES_PER_ATOM * pattern_cost(pattern)
    with _compiled_lock:
        if pattern not in _compiled:
            _compiled[pattern] = (compiled, size)
            _compiled_bytes += size
        while _compiled_bytes > MAX_COMPILED_BYTES and len(_compiled) > 1:
            _, (_, dropped) = _compiled.popitem(last=False)  # the least recently used
            _compiled_bytes -= dropped
    return compiled


def compiled_cache_bytes() -> int:
    """Return the estimated bytes of the compiled patterns kept now (at most the budget)."""
    return _compiled_bytes


@dataclass
class SearchBudget:
    """Time limits on user patterns: ``per_search_s`` for one search, ``per_run_s`` for all.

    A search that runs past its limit, or that would start once the run's budget is spent,
    returns ``None`` (no verdict) instead of guessing.
    """

    per_search_s: float
    per_run_s: float
    spent_s: float = 0.0

    @property
    def exhausted(self) -> bool:
        """True once the run's budget is spent."""
        return self.spent_s >= self.per_run_s

    def search(self, pattern: regex.Pattern[str], text: str) -> bool | None:
        """Return whether ``pattern`` occurs in ``text``, or ``None`` past a time limit."""
        left = self.per_run_s - self.spent_s
        if left <= 0:
            return None
        start = time.perf_counter()
        try:
            found = pattern.search(text, timeout=min(self.per_search_s, left))
        except TimeoutError:
            return None
        finally:
            self.spent_s += time.perf_counter() - start
        return found is not None
