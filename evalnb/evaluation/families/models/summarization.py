"""Summarization — completeness and faithfulness.

The document is the prompt, the summary the answer; no reference summary is needed.
Faithfulness comes from an NLI model over every (document sentence, summary sentence)
pair (SummaC ZS and, given its weights, SummaC Conv); completeness from the geometry of
sentence embeddings (:mod:`evalnb.evaluation.families.models.coverage`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import numpy as np

from evalnb.evaluation.base import (
    Context,
    Evaluator,
    MetricSpec,
    Param,
    reasons,
    register,
    result_frame,
    threshold_param,
)
from evalnb.evaluation.families.models.coverage import completeness
from evalnb.evaluation.families.models.summac import conv_score, load_conv_weights, zs_score
from evalnb.models.hf import Classifier, load_classifier
from evalnb.models.resolve import DEFAULT_MODEL, used_model
from evalnb.text.sentences import split_sentences

if TYPE_CHECKING:
    from collections.abc import Mapping

    import polars as pl

__all__ = ["Summarization"]

_MAX_DOC_SENTENCES = 100


@register
class Summarization(Evaluator):
    """SummaC faithfulness and embedding-geometry completeness of a summary of the prompt."""

    id = "summarization"
    title = "Summarization (completeness and faithfulness)"
    domain = "summarization"
    description = (
        "Faithfulness: NLI entailment of each summary sentence by the document's sentences "
        "(SummaC ZS and Conv). Completeness: how much of the document's embedding space the "
        "summary's sentences span."
    )
    requires = ("prompt", "actual")
    metrics = (
        MetricSpec(
            "completeness",
            "Completeness",
            "How much of the document the summary covers.",
            threshold=0.75,
            primary=True,
        ),
        MetricSpec(
            "faithfulness_conv",
            "Faithfulness (SummaC Conv)",
            "How well the summary preserves the meaning and facts of the document.",
            threshold=0.75,
        ),
        MetricSpec(
            "faithfulness_zs",
            "Faithfulness (SummaC ZS)",
            "Mean over summary sentences of their best entailment.",
            threshold=0.75,
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param(
            "nli_model",
            str,
            default="tals/albert-xlarge-vitaminc-mnli",
            description="NLI sequence classifier: hub name or local folder",
        ),
        Param(
            "model",
            str,
            default=DEFAULT_MODEL,
            description="sentence-transformers model for completeness (the model used is recorded)",
            normalize=lambda m: used_model(str(m)),
        ),
        Param(
            "conv_weights",
            str,
            default="",
            description="SummaC-Conv weights file (summac_conv_vitc_sent_perc_e.bin); "
            "empty: faithfulness_conv is not scored",
        ),
        threshold_param(0.75, "completeness"),
    )

    def score(self, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context) -> pl.DataFrame:
        """One NLI pass over the distinct sentence pairs of all rows, then per-row aggregation."""
        docs = [
            d[:_MAX_DOC_SENTENCES] for d in split_sentences(rows["prompt"].to_list(), min_chars=10)
        ]
        sums = split_sentences(rows["actual"].to_list(), min_chars=10)
        errored = rows["error"].is_not_null().to_numpy()
        short_doc = np.array([len(d) < 2 for d in docs])
        short_sum = np.array([len(s) < 2 for s in sums]) & ~short_doc
        ok = ~(errored | short_doc | short_sum)
        weights = load_conv_weights(str(params["conv_weights"])) if params["conv_weights"] else None
        images = self._images(load_classifier(str(params["nli_model"]), self.id), docs, sums, ok)
        scored = [int(i) for i in np.flatnonzero(ok)]
        # every sentence to embed, in one call (distinct texts are encoded once, batched)
        flat = [t for i in scored for t in (*docs[i], *sums[i])]
        vectors = ctx.encoder(str(params["model"])).encode(flat)
        n = rows.height
        values = {m.key: np.full(n, np.nan) for m in self.metrics}
        failed = np.zeros(n, dtype=bool)
        at = 0
        for i in scored:
            n_doc, n_sum = len(docs[i]), len(sums[i])
            doc_vec, sum_vec = vectors[at : at + n_doc], vectors[at + n_doc : at + n_doc + n_sum]
            at += n_doc + n_sum
            values["faithfulness_zs"][i] = zs_score(images[i])
            if weights is not None:
                values["faithfulness_conv"][i] = conv_score(images[i], weights)
            try:  # a fit on a handful of points can fail; that row alone goes unscored
                values["completeness"][i] = completeness(doc_vec, sum_vec)
            except (ValueError, TypeError, np.linalg.LinAlgError):
                failed[i] = True
        why = reasons(
            n,
            (
                ok & (weights is None),
                "faithfulness_conv not scored: pass conv_weights='<SummaC-Conv weights file>'",
            ),
            (failed, "UMAP could not be fitted on this document: completeness not scored"),
            (short_sum, "summary too short: fewer than 2 sentences longer than 10 characters"),
            (
                short_doc,
                "document (prompt) too short: fewer than 2 sentences longer than 10 characters",
            ),
            (errored, "the model host failed to answer: not scored"),
        )
        return result_frame(rows, values, why)

    @staticmethod
    def _images(
        clf: Classifier, docs: list[list[str]], sums: list[list[str]], ok: np.ndarray
    ) -> dict[int, np.ndarray]:
        """Entailment matrix (document × summary sentences) for each row to score."""
        pairs = list(
            dict.fromkeys((d, s) for i in np.flatnonzero(ok) for d in docs[i] for s in sums[i])
        )
        if not pairs:
            return {}
        logits = clf.logits([p for p, _ in pairs], [h for _, h in pairs])
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        probs = e / e.sum(axis=1, keepdims=True)
        labels = [lab.lower() for lab in clf.labels]
        # SummaC's VitaminC model orders entailment first; others name it
        col = next((k for k, lab in enumerate(labels) if lab.startswith("entail")), 0)
        where = {p: k for k, p in enumerate(pairs)}
        return {
            int(i): probs[[where[(d, s)] for d in docs[i] for s in sums[i]], col].reshape(
                len(docs[i]), len(sums[i])
            )
            for i in np.flatnonzero(ok)
        }
