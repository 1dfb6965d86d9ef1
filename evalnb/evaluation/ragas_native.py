"""ragas' judge-free metrics, vectorised over whole columns: ragas' numbers, ours to run.

Each evaluator computes what its ragas namesake computes for a single-turn sample, on every
row at once, and is tested against ragas itself (``tests/test_ragas.py``) to 1e-9:

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
from evalnb.text.ngram import NgramStats, id_ngram_stats, ids_13a

if TYPE_CHECKING:
    from collections.abc import Mapping

    from evalnb.evaluation.base import Context

__all__ = ["RagasBleu", "RagasChrf", "RagasContextPrecision", "RagasContextRecall",
           "RagasExactMatch", "RagasIdContextPrecision", "RagasIdContextRecall", "RagasRouge",
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


_LOG_ZERO = -9999999999.0  # sacrebleu's my_log(0)
_EPS = 1e-16  # sacrebleu chrF's


def corpus_bleu_of_one(stats: NgramStats) -> np.ndarray:
    """Return sacrebleu's ``corpus_bleu`` of one segment per row, scaled to [0, 1].

    Order 4, exp smoothing and no effective order, as ``corpus_bleu`` scores: an order with
    no n-gram counts sacrebleu's log of zero.
    """
    correct = stats.correct.astype(np.float64)
    total = stats.total.astype(np.float64)
    n = correct.shape[0]
    smooth = np.ones(n)
    active = np.ones(n, dtype=bool)
    log_sum = np.zeros(n)
    for k in range(4):
        c, t = correct[:, k], total[:, k]
        active &= t > 0
        zero = c == 0
        with np.errstate(divide="ignore", invalid="ignore"):
            smooth = np.where(active & zero, smooth * 2, smooth)
            p = np.where(zero, 100.0 / (smooth * t), 100.0 * c / t)
            log_p = np.where(active & (p > 0), np.log(np.where(p > 0, p, 1.0)), _LOG_ZERO)
        log_sum += log_p
    sys_len = stats.hyp_len.astype(np.float64)
    ref_len = stats.ref_len.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        bp = np.where(
            sys_len < ref_len,
            np.where(sys_len > 0, np.exp(1.0 - ref_len / np.maximum(sys_len, 1)), 0.0),
            1.0,
        )
        score = bp * np.exp(log_sum / 4)
    return np.where(stats.correct.sum(axis=1) > 0, score, 0.0) / 100.0


def ragas_bleu(response: pl.Series, reference: pl.Series) -> np.ndarray:
    """Return ragas' BleuScore of each pair.

    ragas splits both texts on ". " and calls ``corpus_bleu(hyps, [[r] for r in refs])``:
    sacrebleu zips the hypotheses with that one-segment stream, so only the answer's first
    segment is scored, against every reference segment as a reference of its own.
    """
    hyp = response.fill_null("").str.split(". ").list.first().fill_null("")
    refs = reference.fill_null("").str.split(". ")
    per = refs.list.len().to_numpy()
    stats = id_ngram_stats(ids_13a(hyp, refs.explode().fill_null("")), per, 4)
    return corpus_bleu_of_one(stats)


def _chars(texts: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """Return the texts' characters without white space (as Python's split), as code points.

    One join and one UTF-32 encoding for the whole column: the code points are the ids the
    n-gram counter hashes, with no per-character string made.
    """
    stripped = texts.fill_null("").str.replace_all(r"[\s\x1c-\x1f]", "")
    lens = stripped.str.len_chars().to_numpy().astype(np.int64)
    points = np.frombuffer("".join(stripped.to_list()).encode("utf-32-le"), dtype=np.uint32)
    return points.astype(np.int64), lens


def ragas_chrf(
    response: pl.Series, reference: pl.Series, *, beta: float = 2.0, order: int = 6
) -> np.ndarray:
    """Return ragas' CHRFScore: sacrebleu's chrF (characters, effective order), in [0, 1].

    Characters are the tokens of the compiled n-gram counter; an empty text scores 0, as
    ragas returns for it.
    """
    from evalnb.text.ngram_kernel import clipped_counts  # noqa: PLC0415 - compiles on first use

    h_chars, h_len = _chars(response)
    r_chars, r_len = _chars(reference)
    ids = np.concatenate([h_chars, r_chars])
    h_off = np.concatenate([[0], np.cumsum(h_len)])
    r_off = np.concatenate([[0], np.cumsum(r_len)]) + h_off[-1]
    n = h_len.size
    match, hyp_count, _ = clipped_counts(
        ids, h_off[:-1], h_off[1:], r_off[:-1], r_off[1:], np.arange(n + 1, dtype=np.int64), order
    )
    match = match.astype(np.float64)
    orders = np.arange(1, order + 1)
    ref_count = np.maximum(r_len[:, None] - orders[None, :] + 1, 0).astype(np.float64)
    hyp_total = np.where(ref_count > 0, hyp_count, 0).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        prec = np.where(hyp_total > 0, match / np.maximum(hyp_total, 1), _EPS)
        rec = np.where(ref_count > 0, match / np.maximum(ref_count, 1), _EPS)
    eff = (hyp_total > 0) & (ref_count > 0)
    k = eff.sum(axis=1)
    avg_p = np.where(k > 0, (prec * eff).sum(axis=1) / np.maximum(k, 1), 0.0)
    avg_r = np.where(k > 0, (rec * eff).sum(axis=1) / np.maximum(k, 1), 0.0)
    f2 = beta**2
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.where(avg_p + avg_r > 0, (1 + f2) * avg_p * avg_r / (f2 * avg_p + avg_r), 0.0)
    empty = (response.fill_null("").str.strip_chars() == "") | (
        reference.fill_null("").str.strip_chars() == ""
    )
    return np.where(empty.to_numpy(), 0.0, score)


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


@register
class RagasBleu(_Pairwise):
    """ragas' BleuScore, vectorised."""

    id = key = "ragas_bleu"
    title = "BLEU (ragas)"
    domain = "generation"
    description = ("ragas' BleuScore: sacrebleu's corpus BLEU of the answer's first "
                   "'. '-separated segment against the reference's segments (13a tokens).")  # fmt: skip
    block_rows = BLOCK_ROWS
    metrics = (MetricSpec(key, "BLEU (ragas)", "ragas' BleuScore against the first expected "
                          "answer.", primary=True),)  # fmt: skip
    params: ClassVar[tuple[Param, ...]] = (threshold_param(0.5, key),)

    def values(self, actual: pl.Series, reference: pl.Series,
               params: Mapping[str, object]) -> np.ndarray:  # fmt: skip
        """Split as ragas does, count n-grams compiled, score as sacrebleu's corpus_bleu."""
        return ragas_bleu(actual, reference)


@register
class RagasChrf(_Pairwise):
    """ragas' CHRFScore, vectorised."""

    id = key = "ragas_chrf"
    title = "chrF (ragas)"
    domain = "generation"
    description = ("ragas' CHRFScore: sacrebleu's chrF (character 1- to 6-grams, β = 2, "
                   "whitespace removed, effective order) of the answer against the reference.")  # fmt: skip
    block_rows = BLOCK_ROWS
    metrics = (MetricSpec(key, "chrF (ragas)", "ragas' CHRFScore against the first expected "
                          "answer.", primary=True),)  # fmt: skip
    params: ClassVar[tuple[Param, ...]] = (threshold_param(0.5, key),)

    def values(self, actual: pl.Series, reference: pl.Series,
               params: Mapping[str, object]) -> np.ndarray:  # fmt: skip
        """Characters as tokens, n-grams counted compiled, sacrebleu's F-score."""
        return ragas_chrf(actual, reference)


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
