"""How much reviewers agree: Krippendorff's α, Fleiss' κ and pairwise Cohen's κ, with intervals.

Pure functions over a frame of labels (one row per unit and reviewer). Each statistic is
computed from count matrices with NumPy, so the bootstrap (units resampled with
replacement, percentile interval) costs a matrix product per draw, not a Python loop over
labels.

- **Krippendorff's α** (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability"):
  ``1 - D_o / D_e`` from the coincidence matrix, units with one label left out; any number
  of reviewers per unit. ``nominal`` (categories) and ``interval`` (squared differences of
  numbers) levels. Equal to the ``krippendorff`` package's value (a test checks it).
- **Fleiss' κ** (Fleiss 1971): the same number of ratings on every unit, so it is computed on
  the units that hold the commonest number of labels, two or more (``n_items`` says how
  many); equal to
  ``statsmodels.stats.inter_rater.fleiss_kappa``.
- **Cohen's κ** for every pair of reviewers on the units both labelled.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import polars as pl

from evalnb.calibration.labels import cohen_kappa

__all__ = [
    "AGREEMENT_SCHEMA",
    "agreement_table",
    "fleiss_kappa",
    "krippendorff_alpha",
]

AGREEMENT_SCHEMA = pl.Schema(
    {
        "measure": pl.String(),
        "raters": pl.String(),
        "estimate": pl.Float64(),
        "ci_low": pl.Float64(),
        "ci_high": pl.Float64(),
        "n_items": pl.Int64(),
        "n_labels": pl.Int64(),
    }
)


def _coincidences(counts: np.ndarray) -> np.ndarray:
    """Coincidence matrix of units x categories counts (units with < 2 labels add nothing)."""
    m = counts.sum(axis=1)
    keep = m >= 2
    counts, m = counts[keep], m[keep].astype(float)
    weights = 1.0 / (m - 1.0)
    within = (counts * weights[:, None]).T @ counts
    return np.asarray(within - np.diag((counts * weights[:, None]).sum(axis=0)))


def krippendorff_alpha(counts: np.ndarray, values: np.ndarray, level: str = "nominal") -> float:
    """Krippendorff's α of a units x categories count matrix (NaN when it is undefined).

    ``values`` are the categories' numbers (used by the ``interval`` level).
    """
    o = _coincidences(counts)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    if n <= 1:
        return float("nan")
    if level == "nominal":
        delta = 1.0 - np.eye(len(values))
    elif level == "interval":
        delta = (values[:, None] - values[None, :]) ** 2
    else:
        msg = f"level must be 'nominal' or 'interval'; got {level!r}"
        raise ValueError(msg)
    expected = (n_c[:, None] * n_c[None, :] * delta).sum()
    if expected == 0:
        return float("nan")  # one category only: agreement is not measurable
    return float(1.0 - (n - 1.0) * (o * delta).sum() / expected)


def fleiss_kappa(counts: np.ndarray) -> float:
    """Fleiss' κ of a units x categories count matrix whose rows all hold the same total."""
    if counts.shape[0] == 0:
        return float("nan")
    raters = counts.sum(axis=1)
    n = float(raters[0])
    if n < 2 or np.any(raters != raters[0]):
        return float("nan")
    p = counts.sum(axis=0) / counts.sum()
    per_unit = ((counts * counts).sum(axis=1) - n) / (n * (n - 1.0))
    chance = float((p * p).sum())
    if chance == 1.0:
        return float("nan")
    return float((per_unit.mean() - chance) / (1.0 - chance))


@dataclass(frozen=True)
class _Coded:
    """Labels coded for counting: unit and rater indices, category codes, their values."""

    unit: np.ndarray
    rater: np.ndarray
    code: np.ndarray
    values: np.ndarray
    raters: list[str]
    n_units: int

    def counts(self, units: np.ndarray | None = None) -> np.ndarray:
        k = len(self.values)
        table = np.zeros((self.n_units, k))
        np.add.at(table, (self.unit, self.code), 1.0)
        return table if units is None else table[units]


def _code(labels: pl.DataFrame, unit: str, rater: str, value: str, level: str) -> _Coded:
    frame = labels.select(unit, rater, value).drop_nulls()
    if frame[value].dtype.is_float():
        frame = frame.filter(pl.col(value).is_finite())  # NaN is no label, not a category
    units = frame[unit].cast(pl.String).to_numpy()
    u_names, u_idx = np.unique(units, return_inverse=True)
    r_names, r_idx = np.unique(frame[rater].cast(pl.String).to_numpy(), return_inverse=True)
    raw = frame[value]
    if level == "interval":
        if not raw.dtype.is_numeric() and raw.dtype != pl.Boolean:
            msg = f"the interval level needs numbers in {value!r}; found {raw.dtype}"
            raise ValueError(msg)
        cats, code = np.unique(raw.cast(pl.Float64).to_numpy(), return_inverse=True)
        numbers = cats.astype(float)
    else:
        cats, code = np.unique(raw.cast(pl.String).to_numpy(), return_inverse=True)
        numbers = np.arange(len(cats), dtype=float)
    return _Coded(u_idx, r_idx, code, numbers, [str(r) for r in r_names], len(u_names))


def _interval(draws: np.ndarray, confidence: float) -> tuple[float | None, float | None]:
    draws = draws[np.isfinite(draws)]
    if len(draws) == 0:
        return None, None
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(draws, [tail, 1.0 - tail])
    return float(low), float(high)


def agreement_table(
    labels: pl.DataFrame,
    *,
    unit: str = "item_id",
    rater: str = "reviewer",
    value: str = "label",
    level: str = "nominal",
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> pl.DataFrame:
    """Every agreement statistic of one set of labels, each with a bootstrap interval.

    ``labels``: one row per unit and rater (a rater's label in force). Rows: Krippendorff's
    α at ``level``, Fleiss' κ, and Cohen's κ for each pair of raters (``raters``:
    ``"a | b"``). Units are resampled with replacement ``n_boot`` times (seeded); an
    interval is null where no draw gives a defined value.
    """
    coded = _code(labels, unit, rater, value, level)
    rng = np.random.default_rng(seed)
    counts = coded.counts()
    draws = rng.integers(0, max(coded.n_units, 1), size=(n_boot, coded.n_units))
    rows = []

    alpha = krippendorff_alpha(counts, coded.values, level)
    boot = np.array([krippendorff_alpha(counts[d], coded.values, level) for d in draws])
    labelled = counts.sum(axis=1)
    rows.append(
        _row(f"krippendorff_alpha_{level}", None, alpha, boot, confidence, counts, labelled >= 2)
    )

    # The commonest number of labels among units with two or more (one label is no
    # agreement: units labelled once must not be the group Fleiss' κ is computed on).
    shared = labelled[labelled >= 2].astype(int)
    common = np.bincount(shared).argmax() if shared.size else 0
    same = labelled == common
    fleiss = counts[same]
    kappa = fleiss_kappa(fleiss)
    idx = np.flatnonzero(same)
    boot = np.array(
        [fleiss_kappa(fleiss[rng.integers(0, len(idx), len(idx))]) for _ in range(n_boot)]
        if len(idx)
        else []
    )
    rows.append(_row("fleiss_kappa", None, kappa, boot, confidence, counts, same))

    grid = np.full((coded.n_units, len(coded.raters)), -1)
    grid[coded.unit, coded.rater] = coded.code
    for i, j in itertools.combinations(range(len(coded.raters)), 2):
        both = (grid[:, i] >= 0) & (grid[:, j] >= 0)
        a, b = grid[both, i], grid[both, j]
        est = cohen_kappa(a, b)
        picks = rng.integers(0, max(len(a), 1), size=(n_boot, len(a)))
        boot = np.array([cohen_kappa(a[p], b[p]) for p in picks]) if len(a) else np.array([])
        pair = f"{coded.raters[i]} | {coded.raters[j]}"
        rows.append(_row("cohen_kappa", pair, est, boot, confidence, counts, both))
    return pl.DataFrame(rows, schema=AGREEMENT_SCHEMA)


def _row(
    measure: str,
    raters: str | None,
    estimate: float,
    boot: np.ndarray,
    confidence: float,
    counts: np.ndarray,
    used: np.ndarray,
) -> dict[str, object]:
    low, high = _interval(boot, confidence)
    return {
        "measure": measure,
        "raters": raters,
        "estimate": None if not np.isfinite(estimate) else estimate,
        "ci_low": low,
        "ci_high": high,
        "n_items": int(used.sum()),
        "n_labels": int(counts[used].sum()) if raters is None else int(2 * used.sum()),
    }
