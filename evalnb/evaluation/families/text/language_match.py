"""Whether the answer is in the case's language (a model answering a French question in English).

H2O's ``language_mismatch`` asks an LLM judge; this one asks the language detector
(:func:`evalnb.text.language.detect_languages`), free and over the whole column. An answer
too short to tell (fewer than ``min_letters`` letters: "Oui", "42") is left unscored.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import polars as pl

from evalnb.evaluation.base import (
    Context,
    Evaluator,
    MetricSpec,
    Param,
    register,
    result_frame,
    threshold_param,
)
from evalnb.text.language import LANGUAGE_NAMES, detect_languages, language_name, row_languages

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["AnswerLanguage"]


_CJK = r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}]"
_CJK_WEIGHT = 4


def _detail(want: str | None, got: str | None, short: bool, bad: bool) -> str | None:
    if bad:
        return json.dumps({"reason": "the model host failed to answer: worst value"})
    if short:
        return json.dumps({"reason": "answer too short to tell its language"})
    if want is None:
        return json.dumps({"reason": "the case's language is unknown"})
    if want != got:
        return json.dumps(
            {
                "reason": f"answered in {language_name(got)}, the case is in {language_name(want)}",
                "language": want,
                "answer_language": got,
            }
        )
    return None


def _candidates(languages: pl.Series) -> list[str]:
    return sorted({*languages.drop_nulls().unique().to_list(), "en"} & set(LANGUAGE_NAMES))


@register
class AnswerLanguage(Evaluator):
    """1 where the answer's detected language is the case's, 0 where it is another."""

    id = "answer_language"
    version = "2"  # 2: a CJK character counts as four letters towards "too short"
    title = "Answer language"
    domain = "generation"
    description = (
        "1 when the answer is in the case's language (cases.language, else detected from the "
        "prompt and expected answer), 0 when it is in another; answers too short to tell "
        "are left unscored. A detector's verdict, no judge."
    )
    requires = ("actual",)
    metrics = (
        MetricSpec(
            "same_language",
            "Same language",
            "The answer is in the case's language.",
            threshold=0.5,
            primary=True,
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param(
            "min_letters",
            int,
            default=12,
            low=1,
            description=(
                "fewer letters than this in an answer: too short to tell its language (a "
                "Chinese, Japanese or Korean character counts as four)"
            ),
        ),
        threshold_param(0.5, "same_language"),
    )

    def score(
        self,
        rows: pl.DataFrame,
        params: Mapping[str, object],
        ctx: Context,  # noqa: ARG002 - needs no shared service
    ) -> pl.DataFrame:
        """Detect each answer's language and compare it with its case's."""
        actual = rows["actual"].cast(pl.String)
        expected = row_languages(rows.drop("actual", strict=False))
        # An answer is in its case's language or in another of the lab's (English, most
        # often): told so, the detector stops reading "25 euros" as Catalan.
        answered = detect_languages(actual, _candidates(expected))
        # A Chinese, Japanese or Korean character carries about a word: it counts as four
        # letters (else "是的，可以。" would be "too short"), and the script decides the language.
        text = actual.fill_null("")
        cjk = text.str.count_matches(_CJK).to_numpy()
        letters = text.str.count_matches(r"\p{L}").to_numpy() + (_CJK_WEIGHT - 1) * cjk
        short = letters < int(str(params["min_letters"]))
        unknown = expected.is_null().to_numpy() | answered.is_null().to_numpy() | short
        same = (expected == answered).fill_null(value=False).to_numpy()
        value = np.where(unknown, np.nan, same.astype(np.float64))
        errored = rows["error"].is_not_null().to_numpy()
        value[errored] = 0.0
        # A detail per distinct (case language, answer language, short, failed): a lab has
        # millions of rows and a handful of these.
        keys = pl.DataFrame(
            {"want": expected, "got": answered, "short": short, "bad": errored},
            schema={"want": pl.String, "got": pl.String, "short": pl.Boolean, "bad": pl.Boolean},
        )
        kinds = keys.unique()
        kinds = kinds.with_columns(
            detail=pl.Series([_detail(*k) for k in kinds.iter_rows()], dtype=pl.String)
        )
        detail = keys.join(
            kinds, on=list(keys.columns), how="left", maintain_order="left", nulls_equal=True
        )["detail"].to_list()
        return result_frame(rows, {"same_language": value}, detail)
