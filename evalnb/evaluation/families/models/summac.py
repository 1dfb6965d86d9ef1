"""SummaC aggregation of NLI "images" (Laban et al., TACL 2022), as H2O uses it.

An image is a (document sentences × summary sentences) matrix of entailment probabilities.
*Zero-shot*: each summary sentence takes its best-supporting document sentence; the summary
the mean. *Conv*: each summary sentence's column becomes a histogram over fixed percentile
bins, a learned linear layer maps it to one value, the mean over (up to 10) sentences goes
through a final 2-class linear layer, and the score is P(class 1) — consistent.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from evalnb.models.hf import ModelUnavailable

__all__ = ["PERCENTILE_BINS", "ConvWeights", "conv_score", "load_conv_weights", "zs_score"]

# SummaC's "percentile" bin edges (the published Conv weights were trained on these).
PERCENTILE_BINS = np.array(
    [
        0.0,
        0.01,
        0.02,
        0.03,
        0.04,
        0.07,
        0.13,
        0.37,
        0.90,
        0.91,
        0.92,
        0.93,
        0.94,
        0.95,
        0.955,
        0.96,
        0.965,
        0.97,
        0.975,
        0.98,
        0.985,
        0.99,
        0.995,
        1.0,
    ]
)
_ROWS = 10  # summary sentences the Conv model reads


@dataclass(frozen=True)
class ConvWeights:
    """The two linear layers of SummaC-Conv (entailment-only, one NLI model)."""

    mlp_weight: np.ndarray  # (n_bins,)
    mlp_bias: float
    final_weight: np.ndarray  # (2, 3)
    final_bias: np.ndarray  # (2,)


def zs_score(image: np.ndarray) -> float:
    """Mean over summary sentences of the best entailment over document sentences."""
    return float(image.max(axis=0).mean())


def conv_score(image: np.ndarray, weights: ConvWeights) -> float:
    """P(consistent) from SummaC-Conv with mean aggregation."""
    columns = image[:, :_ROWS].T  # one row per summary sentence
    # np.histogram per column, vectorized: bin index of every probability, counts per bin
    # (right edge closed on the last bin, as np.histogram does)
    n_bins = len(PERCENTILE_BINS) - 1
    idx = np.clip(np.searchsorted(PERCENTILE_BINS, columns, side="right") - 1, 0, n_bins - 1)
    hist = np.zeros((columns.shape[0], n_bins))
    np.add.at(hist, (np.arange(columns.shape[0])[:, None].repeat(columns.shape[1], 1), idx), 1)
    per_sentence = hist @ weights.mlp_weight + weights.mlp_bias
    mean = per_sentence.mean() if len(per_sentence) else 0.0
    logits = weights.final_weight @ np.full(3, mean) + weights.final_bias
    e = np.exp(logits - logits.max())
    return float(e[1] / e.sum())


@lru_cache(maxsize=2)
def load_conv_weights(path: str) -> ConvWeights:
    """Read SummaC-Conv weights (a torch state dict, e.g. ``summac_conv_vitc_sent_perc_e.bin``)."""
    import torch  # noqa: PLC0415

    file = Path(path).expanduser()
    if not file.is_file():
        msg = (
            f"summarization: SummaC-Conv weights not found at {str(file)!r}. Download "
            "summac_conv_vitc_sent_perc_e.bin from the SummaC repository once and pass "
            "conv_weights='<that file>'."
        )
        raise ModelUnavailable(msg)
    state = torch.load(file, map_location="cpu", weights_only=True)
    try:
        weights = ConvWeights(
            mlp_weight=state["mlp.weight"].float().numpy().reshape(-1),
            mlp_bias=float(state["mlp.bias"].reshape(-1)[0]),
            final_weight=state["layer_final.weight"].float().numpy(),
            final_bias=state["layer_final.bias"].float().numpy(),
        )
    except (KeyError, AttributeError, IndexError) as exc:
        msg = f"{file}: not SummaC-Conv weights (expected keys mlp.*, layer_final.*; {exc!r})"
        raise ModelUnavailable(msg) from None
    expected = len(PERCENTILE_BINS) - 1
    if weights.mlp_weight.shape != (expected,) or weights.final_weight.shape != (2, 3):
        msg = (
            f"{file}: SummaC-Conv weights for {expected} percentile bins and one NLI model "
            f"expected; got mlp {weights.mlp_weight.shape}, final {weights.final_weight.shape}"
        )
        raise ModelUnavailable(msg)
    return weights
