"""ragas' judge-free metrics, vectorised over whole columns: ragas' numbers, ours to run.

Each evaluator computes what its ragas namesake computes for a single-turn sample, on every
row at once, and is tested against ragas itself (``tests/test_ragas.py``) to 1e-9:

==============================  ================================================
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
from evalnb.evaluation.rouge import id_rouge_parts, ids_rouge

if TYPE_CHECKING:
    from collections.abc import Mapping

    from evalnb.evaluation.base import Context

__all__ = ["RagasContextPrecision", "RagasContextRecall", "RagasExactMatch",
           "RagasIdContextPrecision", "RagasIdContextRecall", "RagasRouge",
           "RagasStringPresence", "RagasStringSimilarity"]  # fmt: skip

_HOST = "the model host failed to answer"
_NO_REFERENCE = "no expected answer (ragas' reference)"
_MEASURES = ("levenshtein", "hamming", "jaro", "jaro_winkler")


def _reference(rows: pl.DataFrame) -> pl.Series:
    return (
        rows["expected"].list.first()
        if "expected" in rows.columns
        else pl.Series([None] * rows.height)
    )


def _measure(name: str) -> object:
    from rapidfuzz import distance  # noqa: PLC0415 - loads its C++ extension once needed

    return {"levenshtein": distance.Levenshtein, "hamming": distance.Hamming,
            "jaro": distance.Jaro, "jaro_winkler": distance.JaroWinkler}[name]  # fmt: skip


def similarity(left: list[str], right: list[str], measure: str) -> np.ndarray:
    """Return 1 − normalised distance of each (left[i], right[i]) pair, in parallel C++."""
    from rapidfuzz.process import cpdist  # noqa: PLC0415

    if not left:
        return np.zeros(0)
    scorer = _measure(measure).normalized_distance  # type: ignore[attr-defined]
    # float64: cpdist returns float32 by default, 3e-8 away from ragas' Python floats
    out = cpdist(left, right, scorer=scorer, workers=-1, dtype=np.float64)
    return 1.0 - np.asarray(out, dtype=np.float64)


def _string_params(default: float, metric: str) -> tuple[Param, ...]:
    return (Param("distance_measure", str, default="levenshtein", choices=_MEASURES,
                  description="rapidfuzz distance (ragas' DistanceMeasure)"),
            threshold_param(default, metric))  # fmt: skip


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
    metrics = (MetricSpec("ragas_rouge", "ROUGE (ragas)", "ragas' RougeScore of the answer "
                          "against the first expected answer.", primary=True),)  # fmt: skip
    params: ClassVar[tuple[Param, ...]] = (
        Param("rouge_type", str, default="rougeL", choices=("rouge1", "rougeL"),
              description="ROUGE-1 or ROUGE-L, as ragas' rouge_type"),
        Param("mode", str, default="fmeasure", choices=("fmeasure", "precision", "recall"),
              description="which of rouge-score's numbers"),
        threshold_param(0.5, "ragas_rouge"),
    )  # fmt: skip

    def score(self, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context) -> pl.DataFrame:
        """Tokenize once (stemmed), count overlaps compiled, pick ragas' number."""
        reference = _reference(rows)
        tokens = ids_rouge(rows["actual"].fill_null(""), reference.fill_null(""), stem=True)
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

    def values(self, actual: pl.Series, reference: pl.Series,
               params: Mapping[str, object]) -> np.ndarray:  # fmt: skip
        """Return the metric of every pair (both present)."""
        raise NotImplementedError

    def score(self, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context) -> pl.DataFrame:
        """Score the rows that have an answer and a reference."""
        reference = _reference(rows)
        ok = (reference.is_not_null() & rows["actual"].is_not_null()).to_numpy()
        value = np.full(rows.height, np.nan)
        if ok.any():
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
    metrics = (MetricSpec(key, "Exact match (ragas)", "1 when the answer equals the "
                          "reference.", primary=True),)  # fmt: skip
    params: ClassVar[tuple[Param, ...]] = (threshold_param(0.5, key),)

    def values(self, actual: pl.Series, reference: pl.Series,
               params: Mapping[str, object]) -> np.ndarray:  # fmt: skip
        """Compare the strings, vectorised."""
        return (actual == reference).cast(pl.Float64).to_numpy()


@register
class RagasStringPresence(_Pairwise):
    """ragas' StringPresence."""

    id = key = "ragas_string_presence"
    title = "String presence (ragas)"
    domain = "generation"
    description = "ragas' StringPresence: 1 when the reference occurs inside the answer."
    metrics = (MetricSpec(key, "String presence (ragas)", "1 when the reference is a "
                          "substring of the answer.", primary=True),)  # fmt: skip
    params: ClassVar[tuple[Param, ...]] = (threshold_param(0.5, key),)

    def values(self, actual: pl.Series, reference: pl.Series,
               params: Mapping[str, object]) -> np.ndarray:  # fmt: skip
        """Search each reference literally in its answer."""
        frame = pl.DataFrame({"a": actual, "r": reference})
        found = frame.select(pl.col("a").str.contains(pl.col("r"), literal=True))["a"]
        return found.cast(pl.Float64).to_numpy()


@register
class RagasStringSimilarity(_Pairwise):
    """ragas' NonLLMStringSimilarity."""

    id = key = "ragas_string_similarity"
    title = "String similarity (ragas)"
    domain = "generation"
    description = ("ragas' NonLLMStringSimilarity: 1 − the normalised string distance "
                   "between the reference and the answer (rapidfuzz).")  # fmt: skip
    metrics = (MetricSpec(key, "String similarity (ragas)", "1 − normalised distance of the "
                          "answer to the reference.", primary=True),)  # fmt: skip
    params: ClassVar[tuple[Param, ...]] = _string_params(0.5, key)

    def values(self, actual: pl.Series, reference: pl.Series,
               params: Mapping[str, object]) -> np.ndarray:  # fmt: skip
        """Distances of all pairs in one parallel call."""
        return similarity(reference.to_list(), actual.to_list(), str(params["distance_measure"]))


def _best_matches(
    left_col: pl.Series, right_col: pl.Series, measure: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each row and each item of ``left``, its best similarity to the row's ``right`` items.

    Returns (best per left item, row of each left item, left items per row); a left item of
    a row with no right item gets NaN. The pairs are built by a join, not a Python loop.
    """
    n_left = left_col.list.len().fill_null(0).to_numpy().astype(np.int64)
    left = (pl.DataFrame({"l": left_col}).with_row_index("row").explode("l")
            .filter(pl.col("l").is_not_null()).with_row_index("item"))  # fmt: skip
    right = (pl.DataFrame({"r": right_col}).with_row_index("row").explode("r")
             .filter(pl.col("r").is_not_null()))  # fmt: skip
    pairs = left.join(right, on="row")
    best = np.full(left.height, np.nan)
    if pairs.height:
        sims = similarity(pairs["l"].to_list(), pairs["r"].to_list(), measure)
        np.fmax.at(best, pairs["item"].to_numpy(), sims)
    return best, left["row"].to_numpy().astype(np.int64), n_left


@register
class RagasContextPrecision(Evaluator):
    """ragas' NonLLMContextPrecisionWithReference, vectorised."""

    id = "ragas_context_precision"
    title = "Context precision, string-based (ragas)"
    domain = "retrieval"
    description = ("ragas' NonLLMContextPrecisionWithReference: a retrieved chunk is relevant "
                   "when its best string similarity to a reference context reaches the "
                   "threshold; the average precision of those verdicts in rank order.")  # fmt: skip
    requires = ("context",)
    metrics = (MetricSpec("ragas_context_precision", "Context precision (ragas, string)",
                          "Average precision of the retrieved chunks.", primary=True),)  # fmt: skip
    params: ClassVar[tuple[Param, ...]] = (
        Param("similarity_threshold", float, default=0.5, low=0.0, high=1.0,
              description="similarity from which a chunk matches a reference context (>=)"),
        *_string_params(0.5, "ragas_context_precision"),
    )  # fmt: skip

    def score(self, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context) -> pl.DataFrame:
        """Best match of every retrieved chunk, then ragas' average precision per row."""
        best, row_of, n = _best_matches(rows["context"], rows["corpus"],
                                        str(params["distance_measure"]))  # fmt: skip
        verdict = (best >= float(params["similarity_threshold"])).astype(np.float64)  # type: ignore[arg-type]
        # Per row: sum_i (hits in the first i+1 / (i+1)) * v_i, over (hits + 1e-10), as ragas.
        frame = pl.DataFrame({"row": row_of, "v": verdict})
        per = (
            frame.with_columns(
                prec=pl.col("v").cum_sum().over("row") / (pl.int_range(pl.len()).over("row") + 1)
            )
            .group_by("row")
            .agg(num=(pl.col("prec") * pl.col("v")).sum(), hits=pl.col("v").sum())
        )
        value = np.full(rows.height, np.nan)
        rr = per["row"].to_numpy()
        value[rr] = per["num"].to_numpy() / (per["hits"].to_numpy() + 1e-10)
        no_refs = (rows["corpus"].list.len().fill_null(0) == 0).to_numpy()
        no_ctx = n == 0
        errored = _errors(rows)
        value[no_refs | no_ctx | errored] = np.nan
        why = reasons(rows.height,
                      (no_ctx, "no retrieved contexts"),
                      (no_refs, "no reference contexts (the case's corpus)"),
                      (errored, _HOST))  # fmt: skip
        return result_frame(rows, {"ragas_context_precision": value}, why)


@register
class RagasContextRecall(Evaluator):
    """ragas' NonLLMContextRecall, vectorised."""

    id = "ragas_context_recall"
    title = "Context recall, string-based (ragas)"
    domain = "retrieval"
    description = ("ragas' NonLLMContextRecall: the share of reference contexts whose best "
                   "string similarity to a retrieved chunk exceeds the threshold.")  # fmt: skip
    requires = ("context",)
    metrics = (MetricSpec("ragas_context_recall", "Context recall (ragas, string)",
                          "Share of reference contexts retrieved.", primary=True),)  # fmt: skip
    params: ClassVar[tuple[Param, ...]] = (
        Param("similarity_threshold", float, default=0.5, low=0.0, high=1.0,
              description="similarity above which a reference context counts retrieved (>)"),
        *_string_params(0.5, "ragas_context_recall"),
    )  # fmt: skip

    def score(self, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context) -> pl.DataFrame:
        """Best match of every reference context among the retrieved chunks."""
        best, row_of, n = _best_matches(rows["corpus"], rows["context"],
                                        str(params["distance_measure"]))  # fmt: skip
        hit = (best > float(params["similarity_threshold"])).astype(np.float64)  # type: ignore[arg-type]
        sums = np.bincount(row_of, weights=hit, minlength=rows.height)
        with np.errstate(invalid="ignore", divide="ignore"):
            value = np.where(n > 0, sums / np.maximum(n, 1), np.nan)
        no_ctx = (rows["context"].list.len().fill_null(0) == 0).to_numpy()
        errored = _errors(rows)
        # ragas: no retrieved chunk scores every reference 0 (max of an empty list raises
        # there): a row without them is unscored here, with the reason.
        value[no_ctx | errored] = np.nan
        why = reasons(rows.height, (n == 0, "no reference contexts (the case's corpus)"),
                      (no_ctx, "no retrieved contexts"), (errored, _HOST))  # fmt: skip
        return result_frame(rows, {"ragas_context_recall": value}, why)


def _ids(rows: pl.DataFrame, column: str, key: str) -> pl.Series:
    """Return the id list stored under ``key`` in a JSON ``extra`` column, each once."""
    dtype = pl.Struct({key: pl.List(pl.String)})
    decoded = rows[column].fill_null("{}").str.json_decode(dtype, infer_schema_length=None)
    return decoded.struct.field(key).list.unique()


def _id_sets(rows: pl.DataFrame) -> tuple[pl.Series, pl.Series]:
    """Return the output's retrieved ids and the case's reference ids (``extra`` JSON)."""
    return (_ids(rows, "output_extra", "retrieved_context_ids"),
            _ids(rows, "case_extra", "reference_context_ids"))  # fmt: skip


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
        why = reasons(rows.height,
                      (missing, f"no {what} context ids (retrieved_context_ids in the output's "
                                "extra, reference_context_ids in the case's)"),
                      (errored, _HOST))  # fmt: skip
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
    metrics = (MetricSpec(key, "Context precision (ragas, ids)", "Retrieved ids that are "
                          "reference ids.", primary=True),)  # fmt: skip
    params: ClassVar[tuple[Param, ...]] = (threshold_param(0.5, key),)


@register
class RagasIdContextRecall(_IdMetric):
    """ragas' IDBasedContextRecall."""

    id = key = "ragas_id_context_recall"
    precision = False
    title = "Context recall, id-based (ragas)"
    domain = "retrieval"
    description = "ragas' IDBasedContextRecall: the share of reference ids retrieved."
    metrics = (MetricSpec(key, "Context recall (ragas, ids)", "Reference ids that were "
                          "retrieved.", primary=True),)  # fmt: skip
    params: ClassVar[tuple[Param, ...]] = (threshold_param(0.5, key),)
