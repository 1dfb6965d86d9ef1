"""How tool calls compare: ragas', DeepEval's and our own rules, on one conversation each.

Pure functions over lists of calls, ``(name, arguments, result)`` with the arguments parsed;
the evaluators of :mod:`evalnb.evaluation.families.agents.trajectory_metrics` feed them each row's calls and reference.
Each namesake follows its tool's own code (ragas 0.4.3 ``collections``, DeepEval 4.3.1),
checked against the tools themselves by ``tests/test_agents.py``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

__all__ = [
    "Call",
    "deepeval_tool_correctness",
    "ragas_tool_call_accuracy",
    "ragas_tool_call_f1",
    "trajectory_match",
]

Call = tuple[str, Any, Any]
"""A tool call: its name, its parsed arguments and its result (None for a reference call)."""


# --- ragas ---------------------------------------------------------------------------------


def _ragas_sort_key(call: Call) -> tuple[str, ...]:
    name, args, _ = call
    key = [name]
    for arg in sorted(args):
        key += [arg, str(args[arg])]
    return tuple(key)


def _ragas_arg_score(pred: dict[str, Any], ref: dict[str, Any]) -> float:
    if not ref and not pred:
        return 1.0
    if not ref:
        return 0.0
    hits = sum(1.0 for k in ref if k in pred and str(pred[k]) == str(ref[k]))
    return hits / len(ref)


def ragas_tool_call_accuracy(made: list[Call], ref: list[Call], *, strict_order: bool) -> float:
    """Ragas 0.4 ``ToolCallAccuracy`` of one conversation (see the module docstring)."""
    if not made and not ref:
        return 1.0
    if not made or not ref:
        return 0.0
    if not strict_order:
        made, ref = sorted(made, key=_ragas_sort_key), sorted(ref, key=_ragas_sort_key)
    names, ref_names = [c[0] for c in made], [c[0] for c in ref]
    aligned = names == ref_names if strict_order else sorted(names) == sorted(ref_names)
    score = sum(
        _ragas_arg_score(p[1], r[1]) for r, p in zip(ref, made, strict=False) if r[0] == p[0]
    )
    score /= len(ref)
    compared = min(len(made), len(ref))
    if compared < len(ref):
        score *= compared / len(ref)
    return score * int(aligned)


def _hashable(value: Any) -> Any:  # noqa: ANN401
    """Python's equality, as ragas' set of calls sees it (dicts unordered, lists ordered)."""
    if isinstance(value, dict):
        return frozenset((k, _hashable(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return tuple(_hashable(v) for v in value)
    return value


def ragas_tool_call_f1(made: list[Call], ref: list[Call]) -> float:
    """Ragas ``ToolCallF1`` of one conversation: F1 of the sets of (name, args), 4 decimals."""
    actual = {(n, _hashable(a)) for n, a, _ in made}
    expected = {(n, _hashable(a)) for n, a, _ in ref}
    tp, fp, fn = len(actual & expected), len(actual - expected), len(expected - actual)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return round(f1, 4)


# --- DeepEval ------------------------------------------------------------------------------


def _deepeval_dicts(a: dict[str, Any], b: dict[str, Any], exact: bool) -> float:
    """Match arguments as DeepEval does.

    1 when equal, else the share of keys equal (nested dicts recursively) over the keys of
    either, or 0 in exact mode.
    """
    if a == b:
        return 1.0
    if exact:
        return 0.0
    total = set(a) | set(b)
    score = 0.0
    for key in set(a) & set(b):
        if a[key] == b[key]:
            score += 1 / len(total)
        elif isinstance(a[key], dict) and isinstance(b[key], dict):
            score += _deepeval_dicts(a[key], b[key], exact) / len(total)
    return score


def deepeval_tool_correctness(
    called: list[Call], expected: list[Call], *, exact: bool, ordering: bool, arguments: bool
) -> float:
    """DeepEval ``ToolCorrectnessMetric``'s tool-calling score of one conversation.

    A called tool is (name, input parameters, output); an expected one has no output. Two
    tools are the same call when name, parameters and output are equal (DeepEval's
    ``ToolCall.__eq__``).
    """
    if exact:
        if len(called) != len(expected):
            return 0.0
        for (cn, ca, _), (en, ea, _) in zip(called, expected, strict=True):
            if cn != en or (arguments and ca != ea):
                return 0.0
        return 1.0
    if ordering:
        if not expected:
            return 1.0 if not called else 0.0
        return _weighted_lcs(expected, called, arguments) / len(expected)
    total = 0.0
    matched: list[Call] = []
    for en, ea, _ in expected:
        best, best_call = 0.0, None
        for call in called:
            if call in matched:  # by value, as DeepEval's set of ToolCalls
                continue
            if call[0] == en:
                score = _deepeval_dicts(ea, call[1], exact=False) if arguments else 1.0
                if score > best:
                    best, best_call = score, call
        if best > 0:
            total += best
            matched.append(best_call)  # type: ignore[arg-type]
    if not expected:
        return 1.0 if not called else 0.0
    return total / len(expected)


def _weighted_lcs(expected: list[Call], called: list[Call], arguments: bool) -> float:
    m, n = len(expected), len(called)
    dp = [[0.0] * (n + 1) for _ in range(m + 1)]
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            (en, ea, _), (cn, ca, _) = expected[i - 1], called[j - 1]
            if en != cn:
                dp[i][j] = max(dp[i - 1][j], dp[i][j - 1])
                continue
            score = _deepeval_dicts(ea, ca, exact=False) if arguments else 1.0
            dp[i][j] = max(dp[i - 1][j], dp[i][j - 1], dp[i - 1][j - 1] + score if score > 0 else 0)
    i, j, total = m, n, 0.0
    while i > 0 and j > 0:  # DeepEval sums the matched cells along its traceback
        if dp[i][j] == dp[i - 1][j]:
            i -= 1
        elif dp[i][j] == dp[i][j - 1]:
            j -= 1
        else:
            total += dp[i][j] - dp[i - 1][j - 1]
            i, j = i - 1, j - 1
    return total


def _key(call: Call, arguments: bool) -> Any:  # noqa: ANN401
    return (call[0], _hashable(call[1])) if arguments else call[0]


def trajectory_match(made: list[Call], ref: list[Call], mode: str, arguments: bool) -> float:
    """1.0 when the calls made match the reference in ``mode``, else 0.0.

    strict: the same calls in the same order; unordered: the same calls, any order (repeats
    count); subset: every call made is in the reference (no extra call); superset: every
    reference call was made (extra calls allowed).
    """
    a = [_key(c, arguments) for c in made]
    b = [_key(c, arguments) for c in ref]
    if mode == "strict":
        return float(a == b)
    ca, cb = Counter(a), Counter(b)
    if mode == "unordered":
        return float(ca == cb)
    if mode == "subset":
        return float(all(cb[k] >= n for k, n in ca.items()))
    return float(all(ca[k] >= n for k, n in cb.items()))
