"""ragas' judge-free metrics, vectorised over whole columns: ragas' numbers, ours to run.

Each evaluator computes what its ragas namesake computes for a single-turn sample, on every
row at once, and is tested against ragas itself (``tests/evaluation/test_ragas.py``) to 1e-9:

==============================  ================================================
``ragas_bleu``                  ``BleuScore`` (sacrebleu's corpus BLEU of ragas' ". " split)
``ragas_chrf``                  ``CHRFScore`` (sacrebleu's chrF, characters 1–6, β = 2)
``ragas_rouge``                 ``RougeScore`` (rouge-score with the Porter stemmer;
                                ``rouge_type`` rouge1 / rougeL, ``mode``)
``ragas_exact_match``           ``ExactMatch``: the answer equals the reference
``ragas_string_presence``       ``StringPresence``: the reference is inside the answer
``ragas_string_similarity``     ``NonLLMStringSimilarity``: 1 − rapidfuzz's normalised
                                distance (Levenshtein, Hamming, Jaro, Jaro-Winkler)
``ragas_context_precision``     ``NonLLMContextPrecisionWithReference``: each retrieved
                                chunk relevant when its best similarity to a reference
                                context reaches the threshold; average precision
``ragas_context_recall``        ``NonLLMContextRecall``: the share of reference contexts
                                whose best similarity to a retrieved chunk exceeds it
``ragas_id_context_precision``  ``IDBasedContextPrecision``: retrieved ids among the
                                reference ids (as strings, each once)
``ragas_id_context_recall``     ``IDBasedContextRecall``: reference ids retrieved
==============================  ================================================

The reference is the case's first expected answer; reference contexts are the case's
``corpus``; context ids are ``retrieved_context_ids`` (the output's ``extra``) and
``reference_context_ids`` (the case's), as :mod:`evalnb.io.ragas_data` reads them. Where
ragas returns NaN (no ids, no reference contexts) the row is unscored with the reason.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import polars as pl

from evalnb.evaluation.base import (
    BLOCK_ROWS,
    Evaluator,
    MetricSpec,
    Param,
    reasons,
    register,
    result_frame,
    threshold_param,
)
from evalnb.evaluation.families.text.bleu import sentence_bleu
from evalnb.evaluation.families.text.rouge import id_rouge_parts
from evalnb.lab.rankings import extra_ids
from evalnb.text.chrf import chrf
from evalnb.text.contains import contains_each
from evalnb.text.distance import MEASURES, best_matches, similarity
from evalnb.text.ngram import id_ngram_stats, ids_13a_segments
from evalnb.text.rouge_tokens import rouge_token_ids

if TYPE_CHECKING:
    from collections.abc import Mapping

    from evalnb.evaluation.base import Context

__all__ = [
    "RagasBleu",
    "RagasChrf",
    "RagasContextPrecision",
    "RagasContextRecall",
    "RagasExactMatch",
    "RagasIdContextPrecision",
    "RagasIdContextRecall",
    "RagasRouge",
    "RagasStringPresence",
    "RagasStringSimilarity",
]

_HOST = "the model host failed to answer"
_NO_REFERENCE = "no expected answer (ragas' reference)"


def _reference(rows: pl.DataFrame) -> pl.Series:
    """Return ragas' ``reference``: the case's first expected answer."""
    return rows["expected"].list.first()


def _string_params(default: float, metric: str) -> tuple[Param, ...]:
    return (
        Param(
            "distance_measure",
            str,
            default="levenshtein",
            choices=MEASURES,
            description="rapidfuzz distance (ragas' DistanceMeasure)",
        ),
        threshold_param(default, metric),
    )


def _errors(rows: pl.DataFrame) -> np.ndarray:
    return rows["error"].is_not_null().to_numpy()


@register
class RagasRouge(Evaluator):
    """ragas' RougeScore, vectorised."""

    id = "ragas_rouge"
    title = "ROUGE (ragas)"
    domain = "generation"
    description = "ragas' RougeScore: rouge-score with stemming, rouge1 or rougeL, F, P or R."
    requires = ("actual", "expected")
    block_rows = BLOCK_ROWS
    metrics = (
        MetricSpec(
            "ragas_rouge",
            "ROUGE (ragas)",
            "ragas' RougeScore of the answer against the first expected answer.",
            primary=True,
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param(
            "rouge_type",
            str,
            default="rougeL",
            choices=("rouge1", "rougeL"),
            description="ROUGE-1 or ROUGE-L, as ragas' rouge_type",
        ),
        Param(
            "mode",
            str,
            default="fmeasure",
            choices=("fmeasure", "precision", "recall"),
            description="which of rouge-score's numbers",
        ),
        threshold_param(0.5, "ragas_rouge"),
    )

    def score(self, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context) -> pl.DataFrame:
        """Tokenize once (stemmed), count overlaps compiled, pick ragas' number."""
        reference = _reference(rows)
        tokens = rouge_token_ids([rows["actual"], reference], stem=True)
        p_off, t_off = tokens.offsets
        parts = id_rouge_parts(tokens, p_off[:-1], p_off[1:], t_off[:-1], t_off[1:])
        key = "rouge_1" if params["rouge_type"] == "rouge1" else "rouge_l"
        which = ("precision", "recall", "fmeasure").index(str(params["mode"]))
        value = parts[key][which].copy()
        missing = reference.is_null().to_numpy()
        errored = _errors(rows)
        value[missing | errored] = np.nan
        why = reasons(rows.height, (missing, _NO_REFERENCE), (errored, _HOST))
        return result_frame(rows, {"ragas_rouge": value}, why)


class _Pairwise(Evaluator):
    """A metric of (answer, first expected answer) pairs."""

    requires = ("actual", "expected")
    key: ClassVar[str]

    @abstractmethod
    def values(
        self, actual: pl.Series, reference: pl.Series, params: Mapping[str, object]
    ) -> np.ndarray:
        """Return the metric of every pair (both present)."""

    def score(self, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context) -> pl.DataFrame:
        """Score the rows that have an answer and a reference."""
        reference = _reference(rows)
        ok = (reference.is_not_null() & rows["actual"].is_not_null()).to_numpy()
        value = np.full(rows.height, np.nan)
        if ok.all():  # the usual case: no copy of the columns
            value = np.array(self.values(rows["actual"], reference, params), dtype=np.float64)
        elif ok.any():
            value[ok] = self.values(rows["actual"].filter(ok), reference.filter(ok), params)
        errored = _errors(rows)
        value[errored] = np.nan
        why = reasons(rows.height, (~ok, _NO_REFERENCE), (errored, _HOST))
        return result_frame(rows, {self.key: value}, why)


@register
class RagasExactMatch(_Pairwise):
    """ragas' ExactMatch."""

    id = key = "ragas_exact_match"
    title = "Exact match (ragas)"
    domain = "generation"
    description = "ragas' ExactMatch: 1 when the answer is the reference, character for character."
    metrics = (
        MetricSpec(
            key, "Exact match (ragas)", "1 when the answer equals the reference.", primary=True
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (threshold_param(0.5, key),)

    def values(
        self, actual: pl.Series, reference: pl.Series, params: Mapping[str, object]
    ) -> np.ndarray:
        """Compare the strings, vectorised."""
        return (actual == reference).cast(pl.Float64).to_numpy()


@register
class RagasStringPresence(_Pairwise):
    """ragas' StringPresence."""

    id = key = "ragas_string_presence"
    title = "String presence (ragas)"
    domain = "generation"
    description = "ragas' StringPresence: 1 when the reference occurs inside the answer."
    metrics = (
        MetricSpec(
            key,
            "String presence (ragas)",
            "1 when the reference is a substring of the answer.",
            primary=True,
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (threshold_param(0.5, key),)

    def values(
        self, actual: pl.Series, reference: pl.Series, params: Mapping[str, object]
    ) -> np.ndarray:
        """Search each reference literally in its answer."""
        return contains_each(actual, reference).astype(np.float64)


@register
class RagasStringSimilarity(_Pairwise):
    """ragas' NonLLMStringSimilarity."""

    id = key = "ragas_string_similarity"
    title = "String similarity (ragas)"
    domain = "generation"
    description = (
        "ragas' NonLLMStringSimilarity: 1 − the normalised string distance "
        "between the reference and the answer (rapidfuzz)."
    )
    metrics = (
        MetricSpec(
            key,
            "String similarity (ragas)",
            "1 − normalised distance of the answer to the reference.",
            primary=True,
        ),
    )
    params: ClassVar[tuple[Param, ...]] = _string_params(0.5, key)

    def values(
        self, actual: pl.Series, reference: pl.Series, params: Mapping[str, object]
    ) -> np.ndarray:
        """Distances of all pairs in one parallel call."""
        return similarity(reference.to_list(), actual.to_list(), str(params["distance_measure"]))


@register
class RagasBleu(_Pairwise):
    """ragas' BleuScore, vectorised."""

    id = key = "ragas_bleu"
    title = "BLEU (ragas)"
    domain = "generation"
    description = (
        "ragas' BleuScore: sacrebleu's corpus BLEU of the answer's first "
        "'. '-separated segment against the reference's segments (13a tokens)."
    )
    block_rows = BLOCK_ROWS
    metrics = (
        MetricSpec(
            key, "BLEU (ragas)", "ragas' BleuScore against the first expected answer.", primary=True
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (threshold_param(0.5, key),)

    def values(
        self, actual: pl.Series, reference: pl.Series, params: Mapping[str, object]
    ) -> np.ndarray:
        """Split as ragas does, count n-grams compiled, score as sacrebleu's corpus_bleu."""
        # ragas splits both texts on ". " and calls corpus_bleu(hyps, [[r] for r in refs]):
        # sacrebleu zips the hypotheses with that one-segment stream, so only the answer's
        # first segment is scored, against every reference segment as a reference.
        # The segments are read where they lie in the columns' bytes (no new strings).
        tokens, refs_per_pair = ids_13a_segments(actual, reference, ". ")
        stats = id_ngram_stats(tokens, refs_per_pair, 4)
        return sentence_bleu(stats, "exp", effective_order=False)


@register
class RagasChrf(_Pairwise):
    """ragas' CHRFScore, vectorised."""

    id = key = "ragas_chrf"
    title = "chrF (ragas)"
    domain = "generation"
    description = (
        "ragas' CHRFScore: sacrebleu's chrF (character 1- to 6-grams, β = 2, "
        "whitespace removed, effective order) of the answer against the reference."
    )
    block_rows = BLOCK_ROWS
    metrics = (
        MetricSpec(
            key, "chrF (ragas)", "ragas' CHRFScore against the first expected answer.", primary=True
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (threshold_param(0.5, key),)

    def values(
        self, actual: pl.Series, reference: pl.Series, params: Mapping[str, object]
    ) -> np.ndarray:
        """Characters as tokens, n-grams counted compiled, sacrebleu's F-score."""
        return chrf(actual, reference)


class _ContextMatch(Evaluator):
    """Retrieved chunks against reference contexts (the case's corpus) by string similarity.

    Precision looks at each retrieved chunk's best match among the references, recall at each
    reference's best match among the retrieved chunks; the subclasses aggregate the matches.
    """

    requires = ("context",)
    key: ClassVar[str]
    precision: ClassVar[bool]

    @abstractmethod
    def aggregate(
        self, best: np.ndarray, row_of: np.ndarray, n: np.ndarray, threshold: float, rows: int
    ) -> np.ndarray:
        """Return each row's value from its items' best similarities."""

    def score(self, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context) -> pl.DataFrame:
        """Best match of every item (one batched distance call), then ragas' aggregate."""
        left, right = ("context", "corpus") if self.precision else ("corpus", "context")
        threshold = float(params["similarity_threshold"])  # type: ignore[arg-type]
        # Only the comparison with the threshold counts: distances out of its reach stop early.
        best, row_of, n = best_matches(
            rows[left], rows[right], str(params["distance_measure"]), floor=threshold
        )
        value = self.aggregate(best, row_of, n, threshold, rows.height)
        no_ctx = (rows["context"].list.len().fill_null(0) == 0).to_numpy()
        no_refs = (rows["corpus"].list.len().fill_null(0) == 0).to_numpy()
        errored = _errors(rows)
        # ragas: a recall without retrieved chunks fails (max of an empty list) and a
        # precision without references too: such rows are unscored here, with the reason.
        value[no_ctx | no_refs | errored] = np.nan
        why = reasons(
            rows.height,
            (no_ctx, "no retrieved contexts"),
            (no_refs, "no reference contexts (the case's corpus)"),
            (errored, _HOST),
        )
        return result_frame(rows, {self.key: value}, why)


def _context_params(metric: str, comparison: str) -> tuple[Param, ...]:
    return (
        Param(
            "similarity_threshold",
            float,
            default=0.5,
            low=0.0,
            high=1.0,
            description=f"similarity from which two texts match ({comparison}, as ragas)",
        ),
        *_string_params(0.5, metric),
    )


@register
class RagasContextPrecision(_ContextMatch):
    """ragas' NonLLMContextPrecisionWithReference, vectorised."""

    id = key = "ragas_context_precision"
    precision = True
    title = "Context precision, string-based (ragas)"
    domain = "retrieval"
    description = (
        "ragas' NonLLMContextPrecisionWithReference: a retrieved chunk is relevant "
        "when its best string similarity to a reference context reaches the "
        "threshold; the average precision of those verdicts in rank order."
    )
    metrics = (
        MetricSpec(
            key,
            "Context precision (ragas, string)",
            "Average precision of the retrieved chunks.",
            primary=True,
        ),
    )
    params: ClassVar[tuple[Param, ...]] = _context_params(key, ">=")

    def aggregate(
        self, best: np.ndarray, row_of: np.ndarray, n: np.ndarray, threshold: float, rows: int
    ) -> np.ndarray:
        """Sum over i of (hits in the first i + 1) / (i + 1) · v_i, over hits + 1e-10."""
        verdict = (best >= threshold).astype(np.float64)
        # Items come row by row (in rank order): the hits so far within a row are the running
        # sum less its value where the row began.
        starts = np.flatnonzero(np.r_[True, row_of[1:] != row_of[:-1]]) if row_of.size else row_of
        first = np.repeat(starts, np.diff(np.r_[starts, row_of.size]))
        running = np.cumsum(verdict)
        hits_so_far = running - running[first] + verdict[first]
        precision_at = hits_so_far / (np.arange(row_of.size) - first + 1)
        num = np.bincount(row_of, weights=precision_at * verdict, minlength=rows)
        hits = np.bincount(row_of, weights=verdict, minlength=rows)
        value = np.full(rows, np.nan)
        seen = np.bincount(row_of, minlength=rows) > 0
        value[seen] = num[seen] / (hits[seen] + 1e-10)
        return value


@register
class RagasContextRecall(_ContextMatch):
    """ragas' NonLLMContextRecall, vectorised."""

    id = key = "ragas_context_recall"
    precision = False
    title = "Context recall, string-based (ragas)"
    domain = "retrieval"
    description = (
        "ragas' NonLLMContextRecall: the share of reference contexts whose best "
        "string similarity to a retrieved chunk exceeds the threshold."
    )
    metrics = (
        MetricSpec(
            key,
            "Context recall (ragas, string)",
            "Share of reference contexts retrieved.",
            primary=True,
        ),
    )
    params: ClassVar[tuple[Param, ...]] = _context_params(key, ">")

    def aggregate(
        self, best: np.ndarray, row_of: np.ndarray, n: np.ndarray, threshold: float, rows: int
    ) -> np.ndarray:
        """Return the share of references whose best match exceeds the threshold."""
        sums = np.bincount(row_of, weights=(best > threshold).astype(np.float64), minlength=rows)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n > 0, sums / np.maximum(n, 1), np.nan)


def _ids(rows: pl.DataFrame, column: str, key: str) -> pl.Series:
    """Return the id list stored under ``key`` in a JSON ``extra`` column, each once."""
    return extra_ids(rows[column], key).list.unique()


def _id_sets(rows: pl.DataFrame) -> tuple[pl.Series, pl.Series]:
    """Return the output's retrieved ids and the case's reference ids (``extra`` JSON)."""
    return (
        _ids(rows, "output_extra", "retrieved_context_ids"),
        _ids(rows, "case_extra", "reference_context_ids"),
    )


class _IdMetric(Evaluator):
    requires = ("actual",)
    key: ClassVar[str]
    precision: ClassVar[bool]

    def score(self, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context) -> pl.DataFrame:
        """Set intersections of the id lists, vectorised."""
        retrieved, reference = _id_sets(rows)
        frame = pl.DataFrame({"ret": retrieved, "ref": reference})
        base = "ret" if self.precision else "ref"
        out = frame.select(
            hits=pl.col("ret").list.set_intersection(pl.col("ref")).list.len(),
            total=pl.col(base).list.len(),
            missing=pl.col("ret").is_null() | pl.col("ref").is_null(),
        )
        total = out["total"].fill_null(0).to_numpy().astype(np.float64)
        missing = out["missing"].to_numpy() | (total == 0)
        value = np.where(
            missing, np.nan, out["hits"].fill_null(0).to_numpy() / np.maximum(total, 1)
        )
        errored = _errors(rows)
        value[errored] = np.nan
        what = "retrieved" if self.precision else "reference"
        why = reasons(
            rows.height,
            (
                missing,
                f"no {what} context ids (retrieved_context_ids in the output's "
                "extra, reference_context_ids in the case's)",
            ),
            (errored, _HOST),
        )
        return result_frame(rows, {self.key: value}, why)


@register
class RagasIdContextPrecision(_IdMetric):
    """ragas' IDBasedContextPrecision."""

    id = key = "ragas_id_context_precision"
    precision = True
    title = "Context precision, id-based (ragas)"
    domain = "retrieval"
    description = (
        "ragas' IDBasedContextPrecision: the share of retrieved ids among the reference ids."
    )
    metrics = (
        MetricSpec(
            key,
            "Context precision (ragas, ids)",
            "Retrieved ids that are reference ids.",
            primary=True,
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (threshold_param(0.5, key),)


@register
class RagasIdContextRecall(_IdMetric):
    """ragas' IDBasedContextRecall."""

    id = key = "ragas_id_context_recall"
    precision = False
    title = "Context recall, id-based (ragas)"
    domain = "retrieval"
    description = "ragas' IDBasedContextRecall: the share of reference ids retrieved."
    metrics = (
        MetricSpec(
            key, "Context recall (ragas, ids)", "Reference ids that were retrieved.", primary=True
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (threshold_param(0.5, key),)
