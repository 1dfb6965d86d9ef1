"""Segmented similarity kernels.

Every row compares its own small set of sentences with another, all rows in one vectorized
pass (no per-row Python loop).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import torch

__all__ = ["Segments", "cross_max", "greedy_token_match", "reduce_rows"]

_CHUNK = 1 << 20  # pairs per dot-product block: bounds memory at ~1.5 GB for 384-d floats


class Segments:
    """Items grouped by row: ``counts[r]`` items of row ``r``, stored contiguously."""

    def __init__(self, counts: np.ndarray) -> None:
        self.counts = counts.astype(np.int64)
        self.starts = np.concatenate([[0], np.cumsum(self.counts)[:-1]]).astype(np.int64)

    @property
    def total(self) -> int:
        """Number of items over all rows."""
        return int(self.counts.sum())

    def row_of_item(self) -> np.ndarray:
        """Return the row of every item."""
        return np.repeat(np.arange(self.counts.size), self.counts)


def _normalise(x: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norm == 0, 1, norm)


def _pairs(lseg: Segments, rseg: Segments) -> tuple[np.ndarray, np.ndarray]:
    """Every (left item, right item) of the same row, ordered by left item."""
    per_row = lseg.counts * rseg.counts
    rows = np.repeat(np.arange(per_row.size), per_row)
    k = np.arange(int(per_row.sum())) - np.repeat(np.cumsum(per_row) - per_row, per_row)
    r_count = rseg.counts[rows]
    li = lseg.starts[rows] + k // np.maximum(r_count, 1)
    ri = rseg.starts[rows] + k % np.maximum(r_count, 1)
    return li, ri


def cross_max(
    left: np.ndarray | torch.Tensor,
    lseg: Segments,
    right: np.ndarray | torch.Tensor,
    rseg: Segments,
) -> np.ndarray:
    """For every left item, its best cosine similarity with the right items of its row.

    Left items of a row with no right items get NaN. Tensors (as
    :meth:`~evalnb.models.encoder.TextEncoder.encode_on_device` gives them) are compared
    where they are, in float32 as the NumPy arrays are; only the maxima come back.
    """
    if not isinstance(left, np.ndarray) or not isinstance(right, np.ndarray):
        return _cross_max_tensors(left, lseg, right, rseg)  # type: ignore[arg-type]
    a, b = _normalise(left), _normalise(right)
    li, ri = _pairs(lseg, rseg)
    sims = np.empty(li.size, dtype=np.float64)
    for s in range(0, li.size, _CHUNK):
        e = s + _CHUNK
        sims[s:e] = np.einsum("ij,ij->i", a[li[s:e]], b[ri[s:e]])
    best = np.full(lseg.total, np.nan)
    if li.size:
        # Pairs come ordered by left item: each left item's pairs are one run.
        starts = np.flatnonzero(np.concatenate([[True], li[1:] != li[:-1]]))
        best[li[starts]] = np.maximum.reduceat(sims, starts)
    return best


def _cross_max_tensors(
    left: torch.Tensor, lseg: Segments, right: torch.Tensor, rseg: Segments
) -> np.ndarray:
    import torch  # noqa: PLC0415

    device = left.device
    best = np.full(lseg.total, np.nan)
    li, ri = _pairs(lseg, rseg)
    if li.size == 0:
        return best
    # NumPy's normalising leaves a zero vector at zero; so does F.normalize (its eps).
    a = torch.nn.functional.normalize(left.float(), dim=1)
    b = torch.nn.functional.normalize(right.float(), dim=1)
    li_t, ri_t = torch.from_numpy(li).to(device), torch.from_numpy(ri).to(device)
    top = torch.full((lseg.total,), float("-inf"), dtype=torch.float32, device=device)
    for s in range(0, li.size, _CHUNK):
        at, bt = li_t[s : s + _CHUNK], ri_t[s : s + _CHUNK]
        sims = (a[at] * b[bt]).sum(dim=1)
        top.scatter_reduce_(0, at, sims, reduce="amax")
    paired = np.zeros(lseg.total, dtype=bool)
    paired[li] = True
    best[paired] = top.cpu().numpy().astype(np.float64)[paired]
    return best


def reduce_rows(values: np.ndarray, seg: Segments, how: str) -> np.ndarray:
    """``max``/``min``/``mean`` of each row's items (NaN items ignored; empty rows NaN)."""
    out = np.full(seg.counts.size, np.nan)
    rows = seg.row_of_item()
    ok = ~np.isnan(values)
    if not ok.any():
        return out
    v, r = values[ok], rows[ok]
    if how == "mean":
        sums = np.bincount(r, weights=v, minlength=out.size)
        n = np.bincount(r, minlength=out.size)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n > 0, sums / np.maximum(n, 1), np.nan)
    fill = -np.inf if how == "max" else np.inf
    acc = np.full(out.size, fill)
    (np.maximum if how == "max" else np.minimum).at(acc, r, v)
    return np.where(np.isinf(acc), np.nan, acc)


def greedy_token_match(answers: list[torch.Tensor], sources: list[torch.Tensor]) -> np.ndarray:
    """Return (precision, recall, F1) of each (answer, source) pair of token matrices.

    BERTScore's greedy matching without idf, all pairs in one padded batch on the tensors'
    device; NaN where either side has no token.
    """
    import torch  # noqa: PLC0415

    rows = len(answers)
    out = np.full((rows, 3), np.nan)
    if rows == 0:
        return out
    la = torch.tensor([len(a) for a in answers])
    ls = torch.tensor([len(s) for s in sources])
    if int(la.max()) == 0 or int(ls.max()) == 0:
        return out
    a = torch.nn.utils.rnn.pad_sequence(answers, batch_first=True)  # rows × A × d
    s = torch.nn.utils.rnn.pad_sequence(sources, batch_first=True)  # rows × S × d
    sim = torch.bmm(a, s.transpose(1, 2))
    device = sim.device
    a_ok = torch.arange(a.shape[1], device=device)[None, :] < la.to(device)[:, None]
    s_ok = torch.arange(s.shape[1], device=device)[None, :] < ls.to(device)[:, None]
    sim = sim.masked_fill(~(a_ok[:, :, None] & s_ok[:, None, :]), float("-inf"))
    best_a = sim.max(dim=2).values.masked_fill(~a_ok, 0).double().sum(dim=1)
    best_s = sim.max(dim=1).values.masked_fill(~s_ok, 0).double().sum(dim=1)
    precision = (best_a / la.to(device).clamp(min=1)).cpu().numpy()
    recall = (best_s / ls.to(device).clamp(min=1)).cpu().numpy()
    total = precision + recall
    f1 = np.where(total > 0, 2 * precision * recall / np.where(total > 0, total, 1), 0.0)
    ok = ((la > 0) & (ls > 0)).numpy()
    out[ok] = np.stack([precision, recall, f1], axis=1)[ok]
    return out
