"""Drift of the questions: whether users ask what the calibration lab asked.

* **Question drift** (H2O Eval Studio's Questions Drift): the cosine distance between the
  centroid of the calibration lab's question embeddings and that of a window's, with a
  permutation p-value (the two samples' labels shuffled: how often chance alone puts the
  centroids that far apart).
* **Topic mix**: each question goes to the nearest topic centroid of the calibration lab;
  a question farther from every topic than 95 % of the lab's own questions are from theirs
  fits no topic. A chi-square test compares the window's counts with the lab's shares
  (the "no topic" share included).

The p-values are per window; an alarm corrects them for the number of windows tested
(Bonferroni), so a stream that does not drift raises one with probability at most α. The
permutation test is run with enough shuffles for that correction to be reachable (with 200
and 30 windows, the smallest corrected p-value would be 0.149: no alarm possible), stopping
early on windows that are plainly like the reference.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Reference", "question_drift", "topic_shift"]

_NO_TOPIC = "(no topic)"


def _unit(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms == 0, 1, norms)


def question_drift(
    reference: np.ndarray,
    window: np.ndarray,
    *,
    permutations: int = 200,
    seed: int = 0,
    stop_after: int | None = None,
) -> tuple[float, float]:
    """Centroid cosine distance and its permutation p-value.

    ``permutations`` bounds the shuffles; the smallest p-value they can give is
    ``1 / (1 + permutations)``, so a caller that corrects for many windows asks for enough
    (:meth:`~evalnb.monitoring.monitor.Monitor.drift` does). With ``stop_after`` (Besag and
    Clifford's sequential test, 1991) the shuffles stop once that many reach the observed
    distance, and the p-value is ``stop_after / shuffles done``: a window like the
    reference stops after a few hundred, and only one that differs pays for them all.
    Without it, ``(1 + hits) / (1 + permutations)``.
    """
    a, b = _unit(np.asarray(reference, float)), _unit(np.asarray(window, float))
    pooled = np.concatenate([a, b])
    n, na = pooled.shape[0], a.shape[0]
    total = pooled.sum(axis=0)
    observed = _cosine_distance(a.sum(axis=0)[None, :], total)[0]
    rng = np.random.default_rng(seed)
    hits = done = 0
    batch = 256
    while done < permutations:
        k = min(batch, permutations - done)
        # k shuffles at once: each row's first `na` positions of a random order form the
        # reference side; the sums of both sides are one matrix product.
        chosen = rng.random((k, n)).argsort(axis=1)[:, :na]
        mask = np.zeros((k, n))
        np.put_along_axis(mask, chosen, 1.0, axis=1)
        distances = _cosine_distance(mask @ pooled, total)
        exceed = np.cumsum(distances >= observed - 1e-12)
        if stop_after is not None and hits + int(exceed[-1]) >= stop_after:
            stopped = int(np.searchsorted(exceed, stop_after - hits)) + 1
            return float(observed), stop_after / (done + stopped)
        hits += int(exceed[-1])
        done += k
        batch = min(batch * 2, 4096)
    return float(observed), (1 + hits) / (1 + done)


def _cosine_distance(sums_a: np.ndarray, total: np.ndarray) -> np.ndarray:
    """1 - cosine of the two sides' centroids, from side A's sums (rows) and the total."""
    sums_b = total[None, :] - sums_a
    dots = (sums_a * sums_b).sum(axis=1)
    norms = np.linalg.norm(sums_a, axis=1) * np.linalg.norm(sums_b, axis=1)
    return np.where(norms > 0, 1.0 - dots / np.where(norms > 0, norms, 1.0), 0.0)


@dataclass(frozen=True)
class Reference:
    """The calibration lab's questions, embedded, with their topics' centroids."""

    vectors: np.ndarray
    topics: list[str]
    centroids: np.ndarray
    fit: float
    """The cosine a question needs to fit a topic (the lab's own 5th percentile)."""
    shares: dict[str, float]

    @classmethod
    def of(cls, vectors: np.ndarray, topics: list[str | None]) -> Reference:
        """Build the reference from the lab's question embeddings and topics (None: none)."""
        unit = _unit(np.asarray(vectors, float))
        named = sorted({t for t in topics if t})
        if not named:
            return cls(unit, [], np.zeros((0, unit.shape[1])), 1.0, {})
        centroids = _unit(np.stack([unit[[t == n for t in topics]].mean(axis=0) for n in named]))
        own = np.array(
            [float(unit[i] @ centroids[named.index(t)]) for i, t in enumerate(topics) if t]
        )
        fit = float(np.quantile(own, 0.05))
        assigned = _assign(unit, named, centroids, fit)
        values, counts = np.unique(assigned, return_counts=True)
        shares = {str(v): float(c) / len(assigned) for v, c in zip(values, counts, strict=True)}
        return cls(unit, named, centroids, fit, shares)


def _assign(unit: np.ndarray, names: list[str], centroids: np.ndarray, fit: float) -> list[str]:
    sims = unit @ centroids.T
    best = sims.argmax(axis=1)
    return [names[j] if sims[i, j] >= fit else _NO_TOPIC for i, j in enumerate(best)]


def topic_shift(
    reference: Reference, window: np.ndarray
) -> tuple[float | None, float, dict[str, int]]:
    """Chi-square p-value of the window's topic counts, the share fitting no topic, the counts.

    The p-value is None when the lab has no topics. Categories the lab never had get a
    small expected share (half a question), so a new kind of question still counts.
    """
    if not reference.topics:
        return None, 0.0, {}
    assigned = _assign(
        _unit(np.asarray(window, float)), reference.topics, reference.centroids, reference.fit
    )
    names = [*reference.topics, _NO_TOPIC]
    counts = {n: assigned.count(n) for n in names}
    total = len(assigned)
    floor = 0.5 / max(total, 1)
    expected_share = np.array([max(reference.shares.get(n, 0.0), floor) for n in names])
    expected = expected_share / expected_share.sum() * total
    observed = np.array([counts[n] for n in names], dtype=float)
    from scipy import stats  # noqa: PLC0415 - a second to import; `import evalnb` stays light

    p = float(stats.chisquare(observed, expected).pvalue) if total else 1.0
    return p, counts[_NO_TOPIC] / total if total else 0.0, counts
