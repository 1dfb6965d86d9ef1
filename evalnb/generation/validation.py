"""Test validation (H2O's MRM step 3): does a case's expected answer follow from its source.

Three scores per case, its expected answer against its source (the ``corpus`` texts the case
was written from):

``answer_source_cosine``
    Cosine similarity of the two texts' embeddings (the shared encoder).
``token_precision``, ``token_recall``, ``token_f1``
    BERTScore-style matching of contextual token embeddings: each token of one text takes
    its most similar token of the other (cosine), precision averages over the answer's
    tokens, recall over the source's, F1 is their harmonic mean. Computed with the local
    encoder's last layer, plain (no IDF weights, no baseline rescaling), so the numbers are
    BERTScore's method, not BERTScore's roberta-large values. Precision is the telling one
    here: a short answer drawn from a long source has a low recall by construction.
``nli_entailment``
    The probability an NLI model gives to "the source entails the answer", when such a model
    is available locally (``nli_model``); otherwise not computed, and a warning says so.

Outliers are cases whose score lies far below the others' (a robust z-score: distance from
the median in median absolute deviations, scaled to a standard deviation).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from evalnb.models.encoder import get_encoder

if TYPE_CHECKING:
    from evalnb.models.hf import Classifier

__all__ = ["METRICS", "outliers", "validation_rows"]

METRICS = ("answer_source_cosine", "token_precision", "token_recall", "token_f1", "nli_entailment")


def _entailment(nli: Classifier, premises: list[str], hypotheses: list[str]) -> np.ndarray:
    index = next((i for i, label in enumerate(nli.labels) if "entail" in label.lower()), None)
    if index is None:
        msg = f"the NLI model's labels {nli.labels} name no entailment class"
        raise ValueError(msg)
    logits = nli.logits(premises, hypotheses).astype(np.float64)
    logits -= logits.max(axis=1, keepdims=True)
    probs = np.exp(logits)
    return np.asarray(probs[:, index] / probs.sum(axis=1))


def validation_rows(
    cases: pl.DataFrame, *, model: str, nli: Classifier | None = None, nli_name: str = ""
) -> pl.DataFrame:
    """Score every case that has an expected answer and a source; rows of the validation table.

    A case generated as unanswerable (``"answerable": false`` in ``extra``) is left out:
    its expected answer is a refusal, which no source supports.
    """
    unanswerable = pl.col("extra").str.json_path_match("$.answerable").fill_null("") == "false"
    usable = cases.filter(
        (pl.col("expected").list.len() > 0) & (pl.col("corpus").list.len() > 0) & ~unanswerable
    ).select(
        "case_id",
        answer=pl.col("expected").list.first(),
        source=pl.col("corpus").list.join("\n\n"),
    )
    if usable.height == 0:
        return pl.DataFrame(
            schema={
                "case_id": pl.String,
                "metric": pl.String,
                "value": pl.Float64,
                "detail": pl.String,
                "params": pl.String,
            }
        )
    answers, sources = usable["answer"].to_list(), usable["source"].to_list()
    encoder = get_encoder(model)
    a, s = encoder.encode(answers), encoder.encode(sources)
    a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
    s = s / np.maximum(np.linalg.norm(s, axis=1, keepdims=True), 1e-12)
    values: dict[str, list[float]] = {"answer_source_cosine": list((a * s).sum(axis=1))}
    # Token matching on the model's device, each distinct text's tokens embedded once
    # (many cases share a source chunk).
    tokens = encoder.token_scores(answers, sources)
    values["token_precision"] = list(tokens[:, 0])
    values["token_recall"] = list(tokens[:, 1])
    values["token_f1"] = list(tokens[:, 2])
    if nli is not None:
        values["nli_entailment"] = list(_entailment(nli, sources, answers))
    params = json.dumps({"model": model, **({"nli_model": nli_name} if nli else {})})
    ids = usable["case_id"].to_list()
    return pl.DataFrame(
        {
            "case_id": [c for m in values for c in ids],
            "metric": [m for m, v in values.items() for _ in v],
            "value": [float(x) for v in values.values() for x in v],
            "detail": None,
            "params": params,
        },
        schema={
            "case_id": pl.String,
            "metric": pl.String,
            "value": pl.Float64,
            "detail": pl.String,
            "params": pl.String,
        },
    )


def outliers(rows: pl.DataFrame, *, z: float = 3.0) -> pl.DataFrame:
    """Cases whose score on a metric lies more than ``z`` robust deviations below its median.

    Returns one row per (case, metric) flagged: ``case_id``, ``metric``, ``value``,
    ``median`` and ``robust_z`` (negative: below the median), worst first.
    """
    stats = rows.group_by("metric").agg(
        median=pl.col("value").median(),
        mad=(pl.col("value") - pl.col("value").median()).abs().median(),
    )
    return (
        rows.join(stats, on="metric")
        .filter(pl.col("mad") > 0)
        .with_columns(robust_z=(pl.col("value") - pl.col("median")) / (1.4826 * pl.col("mad")))
        .filter(pl.col("robust_z") < -z)
        .select("case_id", "metric", "value", "median", "robust_z")
        .sort("robust_z")
    )
