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
(Bonferroni), so a stream that does not drift raises one with probability at most α.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Reference", "question_drift", "topic_shift"]

_NO_TOPIC = "(no topic)"


def _unit(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms == 0, 1, norms)


def _centroid_distance(a: np.ndarray, b: np.ndarray) -> float:
    ca, cb = a.mean(axis=0), b.mean(axis=0)
    denom = float(np.linalg.norm(ca) * np.linalg.norm(cb))
    return 1.0 - float(ca @ cb) / denom if denom else 0.0


def question_drift(
    reference: np.ndarray, window: np.ndarray, *, permutations: int = 200, seed: int = 0
) -> tuple[float, float]:
    """Centroid cosine distance and its permutation p-value (``(1 + hits) / (1 + B)``)."""
    a, b = _unit(np.asarray(reference, float)), _unit(np.asarray(window, float))
    observed = _centroid_distance(a, b)
    pooled = np.concatenate([a, b])
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(permutations):
        order = rng.permutation(pooled.shape[0])
        if _centroid_distance(pooled[order[: a.shape[0]]], pooled[order[a.shape[0] :]]) >= observed:
            hits += 1
    return observed, (1 + hits) / (1 + permutations)


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
