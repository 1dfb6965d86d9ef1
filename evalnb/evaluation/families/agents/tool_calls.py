"""How tool calls compare: ragas', DeepEval's and our own rules, on one conversation each.

Pure functions over lists of calls, ``(name, arguments, result)`` with the arguments parsed;
the evaluators of :mod:`evalnb.evaluation.families.agents.trajectory_metrics` feed them each row's calls and reference.
Each namesake follows its tool's own code (ragas 0.4.3 ``collections``, DeepEval 4.3.1),
checked against the tools themselves by ``tests/io/test_agents.py``.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "MAX_ARGUMENT_PAIRS",
    "MAX_CALL_PAIRS",
    "Call",
    "CallsOverBound",
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


class CallsOverBound(ValueError):
    """A conversation with more (called × expected) call pairs than ``MAX_CALL_PAIRS``."""


# Pairs of calls compared for one conversation by DeepEval's rules (2,000 × 2,000): the
# ordering's table and the best-match search grow with their product.
MAX_CALL_PAIRS = 4_000_000
# Distinct pairs of arguments scored by DeepEval's recursive rule (Python, a few µs each).
MAX_ARGUMENT_PAIRS = 250_000


def deepeval_tool_correctness(
    called: list[Call], expected: list[Call], *, exact: bool, ordering: bool, arguments: bool
) -> float:
    """DeepEval ``ToolCorrectnessMetric``'s tool-calling score of one conversation.

    A called tool is (name, input parameters, output); an expected one has no output. Two
    tools are the same call when name, parameters and output are equal (DeepEval's
    ``ToolCall.__eq__``). Raises :class:`CallsOverBound` past ``MAX_CALL_PAIRS`` pairs
    (exact matching, linear, has no bound).
    """
    if exact:
        if len(called) != len(expected):
            return 0.0
        for (cn, ca, _), (en, ea, _) in zip(called, expected, strict=True):
            if cn != en or (arguments and ca != ea):
                return 0.0
        return 1.0
    if not expected:
        return 1.0 if not called else 0.0
    if len(called) * len(expected) > MAX_CALL_PAIRS:
        msg = (
            f"{len(called):,} calls against {len(expected):,} reference calls: more than "
            f"MAX_CALL_PAIRS={MAX_CALL_PAIRS:,} pairs to compare"
        )
        raise CallsOverBound(msg)
    score = _pair_scorer(arguments)
    if ordering:
        from evalnb.evaluation.families.agents.lcs_kernel import weighted_lcs  # noqa: PLC0415

        return float(weighted_lcs(_score_table(expected, called, score))) / len(expected)
    # Each expected call takes the first best-scoring called one not taken yet; a called
    # call equal by value to one taken is taken too (DeepEval keeps a set of ToolCalls).
    table = _score_table(expected, called, score)
    kinds: dict[object, int] = {}
    kind = np.array([kinds.setdefault(_hashable(c), len(kinds)) for c in called], dtype=np.int64)
    free = np.ones(len(kinds), dtype=bool)
    total = 0.0
    for row in table if called else ():
        open_row = np.where(free[kind], row, 0.0)
        j = int(np.argmax(open_row))
        if open_row[j] > 0:
            total += float(open_row[j])
            free[kind[j]] = False
    return total / len(expected)


def _score_table(
    expected: list[Call], called: list[Call], score: Callable[[Any, Any], float]
) -> np.ndarray:
    """Scores of every (expected, called) pair with one name: each distinct pair scored once."""
    names: dict[str, int] = {}
    texts: dict[str, int] = {}
    values: list[Any] = []

    def intern(args: Any) -> int:  # noqa: ANN401 - parsed JSON arguments
        key = json.dumps(args, sort_keys=True, default=repr)
        if key not in texts:
            texts[key] = len(values)
            values.append(args)
        return texts[key]

    e_name = np.array([names.setdefault(c[0], len(names)) for c in expected], dtype=np.int64)
    c_name = np.array([names.setdefault(c[0], len(names)) for c in called], dtype=np.int64)
    e_args = np.array([intern(c[1]) for c in expected], dtype=np.int64)
    c_args = np.array([intern(c[1]) for c in called], dtype=np.int64)
    same = e_name[:, None] == c_name[None, :]
    codes = (e_args[:, None] * len(values) + c_args[None, :])[same]
    distinct, inverse = np.unique(codes, return_inverse=True)
    if distinct.size > MAX_ARGUMENT_PAIRS:
        msg = (
            f"{distinct.size:,} distinct pairs of arguments to compare: more than "
            f"MAX_ARGUMENT_PAIRS={MAX_ARGUMENT_PAIRS:,} (compare_arguments=False has no "
            "such bound)"
        )
        raise CallsOverBound(msg)
    scored = np.array(
        [score(values[int(k) // len(values)], values[int(k) % len(values)]) for k in distinct]
    )
    table = np.zeros(same.shape)
    table[same] = scored[inverse] if distinct.size else 0.0
    return table


def _pair_scorer(arguments: bool) -> Callable[[Any, Any], float]:
    """DeepEval's argument score of two calls with one name (``_score_table`` asks once a pair)."""
    if not arguments:
        return lambda _a, _b: 1.0
    return lambda a, b: _deepeval_dicts(a, b, exact=False)


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
