"""Evaluate text-matching conditions over whole columns.

Rows are grouped by the *shape* of their condition (the expression with its operands
abstracted away), so thousands of different conditions such as ``"27,229" AND "million"``
and ``"Lima" AND "2019"`` are one vectorized evaluation: every quoted operand becomes a column
of per-row literals tested with Polars' substring search, and only ``regexp`` operands run
row by row (per distinct pattern and text, under the time limits of a
:class:`~evalnb.text.patterns.SearchBudget`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import polars as pl
import regex

from evalnb.evaluation.families.text.condition import (
    And,
    Group,
    Node,
    Not,
    Or,
    Regexp,
    Text,
    parse_condition,
)
from evalnb.text.patterns import SearchBudget, compile_pattern

__all__ = ["MatchResult", "failing_part", "literal", "match_coded", "match_conditions"]

_UNESCAPE = regex.compile(r"\\([\"'])")


@dataclass(frozen=True)
class MatchResult:
    """Per-row outcome: ``ok`` (null when a regexp timed out) and the failing part."""

    ok: list[bool | None]
    failed_part: list[str | None]
    error: list[str | None]


@lru_cache(maxsize=65536)
def _parse(condition: str) -> Node:
    return parse_condition(condition)


@lru_cache(maxsize=65536)
def _shaped(condition: str) -> tuple[str, tuple[Text | Regexp, ...]]:
    """Return the shape of a condition and its leaves (per distinct condition, not per row)."""
    leaves: list[Text | Regexp] = []
    return _shape(_parse(condition), leaves), tuple(leaves)


@lru_cache(maxsize=65536)
def _needle(text: Text) -> str:
    return literal(text)


def _shape(node: Node, leaves: list[Text | Regexp]) -> str:
    if isinstance(node, Text | Regexp):
        leaves.append(node)
        return "T" if isinstance(node, Text) else "R"
    if isinstance(node, Not):
        return "!" * node.times + _shape(node.operand, leaves)
    if isinstance(node, And | Or):
        op = "&" if isinstance(node, And) else "|"
        return "(" + op.join(_shape(o, leaves) for o in node.operands) + ")"
    if isinstance(node, Group):
        return f"[{_shape(node.inner, leaves)}]"
    return "E"


def literal(text: Text) -> str:
    r"""Return the substring a quoted operand looks for.

    H2O compares the raw text between the quotes, so a constraint with a quote (escaped as
    ``\\"`` when converted) can never match; we unescape ``\\"`` and ``\\'`` so it does.
    """
    return _UNESCAPE.sub(r"\1", text.value)


class _Search:
    """Memoised search of user patterns per (pattern, text), under a :class:`SearchBudget`."""

    def __init__(self, budget: SearchBudget) -> None:
        self.budget = budget
        self.memo: dict[tuple[str, str], bool | str] = {}

    def __call__(self, pattern: str, text: str) -> bool | str:
        """Whether ``pattern`` occurs in ``text``, or why that is not known (a message)."""
        key = (pattern, text)
        if key not in self.memo:
            if self.budget.exhausted:
                return _budget_spent(self.budget)
            found = self.budget.search(compile_pattern(pattern), text) if pattern else True
            if found is not None:
                self.memo[key] = found
            elif self.budget.exhausted:
                self.memo[key] = _budget_spent(self.budget)
            else:
                self.memo[key] = (
                    f"a regexp of the condition ran longer than {self.budget.per_search_s} s"
                )
        return self.memo[key]


def _budget_spent(budget: SearchBudget) -> str:
    return (
        f"not checked: the regexps of this run used up their time budget of "
        f"{budget.per_run_s} s (raise regex_run_budget_s to check more rows)"
    )


def _regexp_truth(
    texts: list[str], patterns: list[str], search: _Search
) -> tuple[np.ndarray, np.ndarray]:
    """(truth, why unknown) of a regexp operand for each (text, pattern) pair, one by one."""
    results = [search(p, t) for p, t in zip(patterns, texts, strict=True)]
    truth = np.array([r is True for r in results], dtype=bool)
    unknown = np.array([r if isinstance(r, str) else None for r in results], dtype=object)
    return truth, unknown


_CELLS = 1 << 18  # (row, quoted operand) pairs tested per Polars call (texts are repeated)


def _text_leaves(texts: pl.Series, needles: dict[int, pl.Series]) -> dict[int, np.ndarray]:
    """Truth of every quoted operand of a shape group, many operands per Polars call.

    ``needles[k]`` holds operand ``k``'s substring for every row. One call per operand
    cost 0.2 ms each: a single condition ORing 50,000 strings took 11 s. Operands are taken
    in blocks of about 260,000 (row, operand) pairs instead.
    """
    wanted = list(needles)
    rows = len(texts)
    out: dict[int, np.ndarray] = {}
    step = max(1, _CELLS // max(rows, 1))
    for start in range(0, len(wanted), step):
        block = wanted[start : start + step]
        frame = pl.DataFrame(
            {
                "t": pl.concat([texts] * len(block)) if len(block) > 1 else texts,
                "n": pl.concat([needles[k] for k in block]),
            }
        )
        found = frame.select(pl.col("t").str.contains(pl.col("n"), literal=True)).to_series()
        flat = found.fill_null(value=False).to_numpy()
        for j, k in enumerate(block):
            out[k] = flat[j * rows : (j + 1) * rows]
    return out


def _bool(values: object) -> np.ndarray:
    # numpy's ufuncs are typed as returning Any; pin the result to a bool array.
    return np.asarray(values, dtype=bool)


def _combine(node: Node, leaf: list[np.ndarray], pos: list[int]) -> np.ndarray:
    if isinstance(node, Text | Regexp):
        pos[0] += 1
        return leaf[pos[0] - 1]
    if isinstance(node, Not):
        inner = _combine(node.operand, leaf, pos)
        return _bool(np.logical_not(inner)) if node.times % 2 else inner
    if isinstance(node, And | Or):
        # Every operand is combined (each consumes its leaves in order), then reduced.
        parts = [_combine(o, leaf, pos) for o in node.operands]
        reduce = np.logical_and if isinstance(node, And) else np.logical_or
        return _bool(reduce.reduce(parts, axis=0))
    if isinstance(node, Group):
        return _combine(node.inner, leaf, pos)
    return np.ones(len(leaf[0]) if leaf else 1, dtype=bool)


def _holds(node: Node, text: str, search: _Search) -> bool:
    if isinstance(node, Text):
        return literal(node) in text
    if isinstance(node, Regexp):
        return search(node.pattern, text) is True
    if isinstance(node, Not):
        return _holds(node.operand, text, search) != (node.times % 2 == 1)
    if isinstance(node, And):
        return all(_holds(o, text, search) for o in node.operands)
    if isinstance(node, Or):
        return any(_holds(o, text, search) for o in node.operands)
    if isinstance(node, Group):
        return _holds(node.inner, text, search)
    return True


def failing_part(node: Node, text: str, search: _Search) -> Node:
    """Return the sub-expression to blame for a failed condition.

    For AND the first failing operand (recursively), for OR and NOT the node itself; a
    group is blamed as a whole when its whole content failed.
    """
    if isinstance(node, And):
        first = next((o for o in node.operands if not _holds(o, text, search)), node.operands[-1])
        return failing_part(first, text, search)
    if isinstance(node, Group):
        inner = failing_part(node.inner, text, search)
        return node if inner == node.inner else inner
    return node


def match_conditions(
    texts: list[str], conditions: list[str], *, budget: SearchBudget | None = None
) -> MatchResult:
    """Evaluate ``conditions[i]`` on ``texts[i]`` for every row.

    Conditions must parse (callers check with :func:`parse_condition` first). A row whose
    regexp ran past the budget's limit for one search, or came after the run's budget was
    spent, gets ``ok=None`` and an error, never a guessed verdict. Without a budget: 1 s per
    search, 60 s in all.
    """
    index: dict[str, int] = {}
    code = np.fromiter(
        (index.setdefault(c, len(index)) for c in conditions), dtype=np.int64, count=len(texts)
    )
    return match_coded(pl.Series(texts, dtype=pl.String), list(index), code, budget=budget)


def match_coded(
    texts: pl.Series,
    distinct: list[str],
    code: np.ndarray,
    *,
    budget: SearchBudget | None = None,
) -> MatchResult:
    """:func:`match_conditions` with row ``i``'s condition given as ``distinct[code[i]]``.

    Each distinct condition is parsed and shaped once; rows reach their condition's
    operands through its index, so no Python loop runs per row except over regexp operands
    and over failed rows whose blame depends on the text (an AND). A caller that knows its
    rows' conditions by group (text matching: by case definition) hands them over so.
    """
    budget = budget or SearchBudget(per_search_s=1.0, per_run_s=60.0)
    n = texts.len()
    search = _Search(budget)
    shaped = [_shaped(c) for c in distinct]
    shapes = list(dict.fromkeys(shape for shape, _ in shaped))
    shape_of = np.array([shapes.index(shape) for shape, _ in shaped] or [0], dtype=np.int64)
    row_shape = shape_of[code]
    ok = np.full(n, True, dtype=object)
    failed = np.full(n, None, dtype=object)
    error = np.full(n, None, dtype=object)
    column_all = texts.cast(pl.String).fill_null("")
    for s_idx, shape in enumerate(shapes):
        if shape == "E":
            continue
        rows = np.flatnonzero(row_shape == s_idx)
        codes = np.flatnonzero(shape_of == s_idx)  # the distinct conditions of this shape
        local = np.full(len(distinct), -1, dtype=np.int64)
        local[codes] = np.arange(codes.size)
        at = local[code[rows]]  # each row's condition among them
        column = column_all.gather(rows)
        leaves = [shaped[c][1] for c in codes]
        needles = {
            k: pl.Series([_needle(leaf[k]) for leaf in leaves], dtype=pl.String).gather(at)
            for k, first in enumerate(leaves[0])
            if isinstance(first, Text)
        }
        texts_found = _text_leaves(column, needles)
        truths, unknown = [], np.full(rows.size, None, dtype=object)
        values: list[str] | None = None  # the group's texts as Python strings, when needed
        for k in range(len(leaves[0])):
            if k in texts_found:
                truths.append(texts_found[k])
                continue
            patterns = [leaf[k].pattern for leaf in leaves]  # type: ignore[union-attr]
            values = column.to_list() if values is None else values
            truth, why = _regexp_truth(values, [patterns[a] for a in at.tolist()], search)
            truths.append(truth)
            unknown = np.where(unknown == None, why, unknown)  # noqa: E711 - elementwise
        verdict = _combine(_parse(distinct[codes[0]]), truths, [0])
        known = unknown == None  # noqa: E711 - elementwise
        ok[rows[~known]] = None
        error[rows[~known]] = [str(u) for u in unknown[~known]]
        blamed: dict[int, str] = {}  # per condition, where the blame needs no text
        for j in np.flatnonzero(known & ~verdict).tolist():
            i = int(rows[j])
            ok[i] = False
            node = _parse(distinct[code[i]])
            if isinstance(node, And | Group):
                values = column.to_list() if values is None else values
                failed[i] = failing_part(node, values[j], search).render()
            else:
                if code[i] not in blamed:
                    blamed[code[i]] = node.render()
                failed[i] = blamed[code[i]]
    return MatchResult(ok.tolist(), failed.tolist(), error.tolist())
