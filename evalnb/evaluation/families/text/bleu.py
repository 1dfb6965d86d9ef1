"""BLEU over whole columns.

``bleu_1`` … ``bleu_4`` are H2O's: ``nltk.word_tokenize`` on both texts, then NLTK's
``sentence_bleu`` with one-hot weights per order and no smoothing (the order's clipped
precision times the brevity penalty). NLTK splits words on spaces, so on a case in a language
written without them (Chinese, Japanese, Thai …) these say "not meaningful for <language>"
and stay unscored instead of a silent 0.

With ``sacrebleu=True``, the metric ``sacrebleu`` is sacrebleu's sentence BLEU (effective
order, smoothing) with sacrebleu's tokenizer for each case's language (``tokenize="auto"``:
:func:`~evalnb.text.multilingual.bleu_tokenizer_for`), and ``chrf`` sacrebleu's sentence
chrF: other numbers, under their own keys, scored only when asked. Any number of references
per case.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import polars as pl

from evalnb.evaluation.base import (
    ASKED,
    BLOCK_ROWS,
    Context,
    Evaluator,
    MetricSpec,
    Param,
    register,
    result_frame,
    threshold_param,
)
from evalnb.evaluation.families.text.meaningful import not_meaningful
from evalnb.text.chrf import chrf
from evalnb.text.language import row_languages
from evalnb.text.multilingual import (
    BLEU_TOKENIZERS,
    COMPILED_BLEU,
    bleu_tokenizer_for,
    bleu_tokens,
    compiled_bleu_ids,
    grouped_token_ids,
    languages_by,
)
from evalnb.text.ngram import NgramStats, TokenIds, id_ngram_stats, ids_13a
from evalnb.text.treebank import treebank_token_ids

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["Bleu", "sentence_bleu", "single_order_bleu"]

_MAX_ORDER = 4
_LOG_ZERO = -9999999999.0  # sacrebleu's my_log(0)


def _brevity(stats: NgramStats) -> np.ndarray:
    sys_len = stats.hyp_len.astype(np.float64)
    ref_len = stats.ref_len.astype(np.float64)
    with np.errstate(divide="ignore"):
        shorter = np.where(sys_len > 0, np.exp(1.0 - ref_len / np.maximum(sys_len, 1)), 0.0)
    return np.where(sys_len < ref_len, shorter, 1.0)


def sentence_bleu(
    stats: NgramStats,
    smooth: str = "exp",
    smooth_value: float | None = None,
    *,
    effective_order: bool = True,
) -> np.ndarray:
    """``sacrebleu.sentence_bleu`` (effective order) from the statistics, scaled to [0, 1].

    ``effective_order=False`` scores as ``sacrebleu.corpus_bleu`` does each pair's segment:
    the mean is over all four orders, one without n-grams counting sacrebleu's log of zero.
    """
    value = {"floor": 0.1, "add-k": 1.0}.get(smooth, 0.0) if smooth_value is None else smooth_value
    correct = stats.correct.astype(np.float64)
    total = stats.total.astype(np.float64)
    n_pairs = correct.shape[0]
    any_correct = stats.correct.sum(axis=1) > 0  # checked before add-k, as sacrebleu does
    smooth_mteval = np.ones(n_pairs)
    active = np.ones(n_pairs, dtype=bool)  # orders before the first with no n-grams
    log_sum = np.zeros(n_pairs)
    eff_order = np.zeros(n_pairs)
    for n in range(_MAX_ORDER):
        c, t = correct[:, n].copy(), total[:, n].copy()
        if smooth == "add-k" and n > 0:
            c, t = c + value, t + value
        active &= t > 0
        zero = c == 0
        with np.errstate(divide="ignore", invalid="ignore"):
            if smooth == "exp":
                smooth_mteval = np.where(active & zero, smooth_mteval * 2, smooth_mteval)
                p_zero = 100.0 / (smooth_mteval * t)
            elif smooth == "floor":
                p_zero = 100.0 * value / t
            else:
                p_zero = np.zeros(n_pairs)
            p = np.where(zero, p_zero, 100.0 * c / t)
            log_p = np.where(p > 0, np.log(np.where(p > 0, p, 1.0)), _LOG_ZERO)
        log_sum += np.where(active, log_p, 0.0 if effective_order else _LOG_ZERO)
        eff_order += active if effective_order else 1
    with np.errstate(invalid="ignore", divide="ignore"):
        score = _brevity(stats) * np.exp(log_sum / np.maximum(eff_order, 1))
    return np.where(any_correct, score, 0.0) / 100.0


def single_order_bleu(stats: NgramStats, n: int) -> np.ndarray:
    """H2O's ``bleu_n``: the order-``n`` clipped precision times the brevity penalty.

    H2O (NLTK, no smoothing) turns a zero precision into the smallest float; it is 0 here.
    """
    c, t = stats.correct[:, n - 1], stats.total[:, n - 1]
    precision = np.where(t > 0, c / np.maximum(t, 1), 0.0)
    return _brevity(stats) * precision


@register
class Bleu(Evaluator):
    """n-gram overlap between the answer and the expected answers."""

    id = "bleu"
    version = "2"  # 2: sacrebleu's tokenizer by language, chrF, H2O's "not meaningful"
    title = "BLEU"
    domain = "summarization"
    description = (
        "BLEU of the answer against the expected answers. bleu_1..bleu_4 are H2O's: NLTK "
        "word_tokenize, then the n-gram order's clipped precision times the brevity penalty "
        "(NLTK sentence_bleu, one-hot weights, no smoothing). With sacrebleu=True the "
        "metric sacrebleu is sacrebleu's sentence BLEU (13a tokens, effective order, "
        "smoothing), a different number."
    )
    requires = ("actual", "expected")
    block_rows = BLOCK_ROWS
    metrics = (
        MetricSpec(
            "bleu_1",
            "BLEU-1",
            "Unigram precision × brevity penalty (H2O).",
            threshold=0.75,
            primary=True,
            kernel="h2o",
        ),
        MetricSpec(
            "bleu_2", "BLEU-2", "Bigram precision × brevity penalty.", threshold=0.75, kernel="h2o"
        ),
        MetricSpec(
            "bleu_3", "BLEU-3", "Trigram precision × brevity penalty.", threshold=0.75, kernel="h2o"
        ),
        MetricSpec(
            "bleu_4", "BLEU-4", "4-gram precision × brevity penalty.", threshold=0.75, kernel="h2o"
        ),
        MetricSpec(
            "sacrebleu",
            "sacreBLEU",
            "sacrebleu's sentence BLEU up to 4-grams (effective order, smoothing) with "
            "sacrebleu's tokenizer for the case's language (13a, zh, ja-mecab, ko-mecab, "
            "intl or char), in [0, 1]; not H2O's. Scored with sacrebleu=True, or when asked "
            "for (metrics=).",
            threshold=0.75,
            kernel="sacrebleu",
        ),
        MetricSpec(
            "chrf",
            "chrF",
            "sacrebleu's sentence chrF (character 1- to 6-grams, beta 2; the best "
            "reference), in [0, 1]: meaningful in every script. Scored with sacrebleu=True, "
            "or when asked for (metrics=).",
            threshold=0.5,
            kernel="chrf",
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param(
            "tokenizer",
            str,
            default="nltk",
            choices=("nltk", "13a"),
            description="tokens of bleu_1..bleu_4: NLTK word_tokenize as H2O, or "
            "sacrebleu's 13a (the sacrebleu metric has its own `tokenize`)",
        ),
        Param("lowercase", bool, default=False, description="lower-case before tokenizing"),
        Param(
            "sacrebleu",
            bool,
            default=False,
            description="also score sacrebleu's sentence BLEU and chrF (metrics sacrebleu, chrf)",
        ),
        Param(
            "tokenize",
            str,
            default="auto",
            choices=("auto", *BLEU_TOKENIZERS),
            description="sacrebleu's tokenizer of the sacrebleu metric: auto picks it by "
            "each case's language (zh, ja-mecab, ko-mecab, intl for Arabic, Hindi and other "
            "scripts with punctuation of their own, char for Thai and its kin, 13a "
            "otherwise); rows not on 13a record it in their detail",
        ),
        Param(
            "smooth_method",
            str,
            default="exp",
            choices=("exp", "floor", "add-k", "none"),
            description="smoothing of the sacrebleu metric (sacrebleu's methods)",
        ),
        threshold_param(0.75, "bleu_1"),
    )

    def score(
        self,
        rows: pl.DataFrame,
        params: Mapping[str, object],
        ctx: Context,  # noqa: ARG002 - n-grams need no shared service
    ) -> pl.DataFrame:
        """Score every row against all its expected answers at once.

        Three computations, each run only when a metric asked for needs it (``metrics=``;
        by default H2O's BLEU-1..4, and sacrebleu's BLEU and chrF with ``sacrebleu=True``).
        """
        actual = rows["actual"].fill_null("")
        expected = rows["expected"]
        if params["lowercase"]:
            actual = actual.str.to_lowercase()
            expected = expected.list.eval(pl.element().str.to_lowercase())
        lengths = expected.list.len().fill_null(0)
        no_ref = (lengths == 0).to_numpy()
        errored = rows["error"].is_not_null().to_numpy()
        base = np.full(rows.height, None, dtype=object)
        base[errored] = json.dumps({"reason": "the model host failed to answer: worst value"})
        kernels = self.kernels(params)
        # H2O's BLEU with tokenizer="13a" and sacrebleu's tokenize the same texts alike: once.
        shared: dict[str, TokenIds] = {}
        extra = params.get(ASKED) is not None or bool(params["sacrebleu"])
        frames = []
        if "h2o" in kernels:
            h2o, h2o_detail = self._h2o(rows, actual, expected, params, base, shared)
            h2o_detail[no_ref] = json.dumps({"reason": "no expected answer to compare with"})
            frames.append(result_frame(rows, _final(h2o, no_ref, errored), h2o_detail.tolist()))
        for kernel in ("sacrebleu", "chrf"):
            if kernel not in kernels or not extra:
                continue
            if kernel == "sacrebleu":
                values, detail = _sacrebleu_scores(rows, actual, expected, params, base, shared)
            else:
                values, detail = {"chrf": _chrf_scores(actual, expected)}, base.copy()
            detail[no_ref] = json.dumps({"reason": "no expected answer to compare with"})
            frames.append(result_frame(rows, _final(values, no_ref, errored), detail.tolist()))
        return pl.concat(frames) if len(frames) > 1 else frames[0]

    @staticmethod
    def _h2o(
        rows: pl.DataFrame,
        actual: pl.Series,
        expected: pl.Series,
        params: Mapping[str, object],
        base: np.ndarray,
        shared: dict[str, TokenIds],
    ) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """H2O's BLEU-1..4 (NLTK's or sacrebleu's 13a tokens) and each row's detail.

        With 13a tokens, they are left in ``shared`` for sacrebleu's metric.
        """
        lengths = expected.list.len().fill_null(0)
        # All references as one flat column: one tokenizer pass, no nesting.
        refs = expected.fill_null([]).explode().drop_nulls()
        per_pair = lengths.to_numpy()
        # NLTK splits on spaces: a reference in Chinese, Japanese or Thai is one "word".
        pointless = (
            not_meaningful(rows, "NLTK's word_tokenize (H2O's BLEU)")
            if params["tokenizer"] == "nltk"
            else {}
        )
        if params["tokenizer"] == "13a":
            shared["13a"] = ids_13a(actual, refs)
            stats = id_ngram_stats(shared["13a"], per_pair, _MAX_ORDER)
        else:
            # Rows said to be not meaningful are not tokenized (NLTK's slow path reads every
            # character outside ASCII one at a time): their scores are dropped anyway.
            hyps, ref_texts = actual, refs.cast(pl.String)
            if pointless:
                skip = np.zeros(rows.height, dtype=bool)
                skip[list(pointless)] = True
                # scatter writes in place: on copies, so the sacrebleu metrics see the texts.
                hyps = hyps.clone().scatter(np.flatnonzero(skip), "")
                where = np.flatnonzero(np.repeat(skip, per_pair))
                ref_texts = ref_texts.clone().scatter(where, "")
            ids = treebank_token_ids([hyps, ref_texts])
            stats = id_ngram_stats(ids, per_pair, _MAX_ORDER)
        h2o = {f"bleu_{n}": single_order_bleu(stats, n) for n in range(1, 5)}
        detail = base.copy()
        for i, reason in pointless.items():
            detail[i] = reason
        for values in h2o.values():
            values[list(pointless)] = np.nan
        return h2o, detail


def _final(
    values: dict[str, np.ndarray], no_ref: np.ndarray, errored: np.ndarray
) -> dict[str, np.ndarray]:
    return {k: np.where(no_ref, np.nan, np.where(errored, 0.0, v)) for k, v in values.items()}


def _sacrebleu_scores(
    rows: pl.DataFrame,
    actual: pl.Series,
    expected: pl.Series,
    params: Mapping[str, object],
    base: np.ndarray,
    shared: Mapping[str, TokenIds],
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Sacrebleu's sentence BLEU of each row, each row with its language's tokens.

    Every row on 13a reuses H2O's 13a tokens when ``shared`` has them.
    """
    lengths = expected.list.len().fill_null(0).to_numpy()
    refs = expected.fill_null([]).explode().drop_nulls().cast(pl.String)
    detail = base.copy()
    choice = str(params["tokenize"])
    if choice == "auto":
        languages = row_languages(rows, latin_is_enough=True)
        groups = languages_by(languages, bleu_tokenizer_for)
    else:
        groups = {choice: np.arange(rows.height)}
    # 13a's, zh's and intl's rows take their compiled paths whatever the other rows' are.
    if set(groups) == {"13a"} and "13a" in shared:
        tokens = shared["13a"]
    else:
        compiled = {name: compiled_bleu_ids(name) for name in COMPILED_BLEU}
        tokens = grouped_token_ids(actual, refs, lengths, groups, bleu_tokens, compiled=compiled)
    if set(groups) != {"13a"}:
        for name, where in groups.items():
            if name != "13a":  # 13a is the default every other row says nothing of
                note = json.dumps({"tokenize": name})
                detail[where[detail[where] == None]] = note  # noqa: E711 - object array
    stats = id_ngram_stats(tokens, lengths, _MAX_ORDER)
    return {"sacrebleu": sentence_bleu(stats, str(params["smooth_method"]))}, detail


def _chrf_scores(actual: pl.Series, expected: pl.Series) -> np.ndarray:
    """Sacrebleu's sentence chrF of each row against its best reference.

    chrF counts characters: no tokenizer, any language (sacrebleu's ``sentence_chrf``).
    """
    lengths = expected.list.len().fill_null(0).to_numpy()
    refs = expected.fill_null([]).explode().drop_nulls().cast(pl.String)
    row_of = np.repeat(np.arange(actual.len()), lengths)
    best = np.full(actual.len(), np.nan)
    if row_of.size:
        per_ref = chrf(actual.gather(row_of), refs)
        np.fmax.at(best, row_of, per_ref)
    return best
