"""DeepEval's weighted longest common subsequence of tool calls, compiled (numba).

The dynamic programme and its traceback over a matrix of call-pair scores, exactly as
DeepEval's ``ToolCorrectnessMetric`` computes them in Python (the same float operations in
the same order, so the same sums), at compiled speed.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["weighted_lcs"]


@njit(cache=True)
def weighted_lcs(scores: np.ndarray) -> float:  # pragma: no cover - compiled
    """Sum of the matched cells' scores along the traceback of the weighted LCS.

    ``scores[i, j]`` is the score of expected call ``i`` against called call ``j`` (0 when
    their names differ).
    """
    m, n = scores.shape
    dp = np.zeros((m + 1, n + 1))
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            best = max(dp[i - 1, j], dp[i, j - 1])
            s = scores[i - 1, j - 1]
            if s > 0:
                best = max(best, dp[i - 1, j - 1] + s)
            dp[i, j] = best
    i, j, total = m, n, 0.0
    while i > 0 and j > 0:
        if dp[i, j] == dp[i - 1, j]:
            i -= 1
        elif dp[i, j] == dp[i, j - 1]:
            j -= 1
        else:
            total += dp[i, j] - dp[i - 1, j - 1]
            i, j = i - 1, j - 1
    return total
