"""The languages of a lab: each case's, set or detected, and answers in another language.

A case's language is what the user or the importer set in ``cases.language``; where that
is empty it is detected from the prompt and the first expected answer
(:func:`evalnb.text.language.detect_languages`). An answer is detected on its own, so an
answer in another language than its case's (a model answering a French question in
English) is found and flagged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from evalnb.text.language import (
    LANGUAGE_NAMES,
    case_languages,
    detect_languages,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from evalnb.lab.core import LabCore

__all__ = ["answer_languages", "language_summary", "set_languages"]


def set_languages(
    lab: LabCore,
    languages: Mapping[str, str] | pl.DataFrame | None = None,
    *,
    candidates: Iterable[str] | None = None,
    overwrite: bool = False,
) -> pl.DataFrame:
    """Fill ``cases.language``; return each case's language and who set it.

    Parameters
    ----------
    lab
        The lab; the languages are written through to its store.
    languages
        ``{case_id: code}`` or a frame with ``case_id`` and ``language``: set those cases.
        Without it, cases without a language (all with ``overwrite``) get the detected one.
    candidates
        The languages the lab may be in (ISO 639-1 codes): detection is more accurate on
        short texts when told.
    overwrite
        Detect again the cases that already have a language.

    Returns
    -------
    pl.DataFrame
        ``case_id``, ``language``, ``source`` (``user``, ``detected`` or ``kept``).
    """
    cases = lab.cases
    if languages is not None:
        frame = (
            languages
            if isinstance(languages, pl.DataFrame)
            else pl.DataFrame(
                {"case_id": list(languages), "language": list(languages.values())},
                schema={"case_id": pl.String, "language": pl.String},
            )
        )
        unknown = set(frame["case_id"]) - set(cases["case_id"])
        if unknown:
            msg = (
                f"no case(s) {sorted(unknown)[:5]} in this lab; languages name existing "
                "case_ids (lab.cases['case_id'])"
            )
            raise KeyError(msg)
        _check_codes(frame["language"])
        new = cases.join(
            frame.select("case_id", new="language"), on="case_id", how="left", maintain_order="left"
        )["new"]
        take, source = new.is_not_null(), "user"
    else:
        take = cases["language"].is_null() | overwrite
        texts = cases.with_columns(language=pl.when(take).then(None).otherwise("language"))
        new = case_languages(texts, candidates)
        source = "detected"
    shown = cases.select(
        "case_id",
        language=pl.when(take).then(new).otherwise(pl.col("language")),
        source=pl.when(take).then(pl.lit(source)).otherwise(pl.lit("kept")),
    )
    lab.replace_tables({"cases": cases.with_columns(language=shown["language"])})
    return shown


def _check_codes(codes: pl.Series) -> None:
    odd = sorted({c for c in codes.drop_nulls().to_list() if c not in LANGUAGE_NAMES})
    if odd:
        msg = (
            f"languages {odd[:5]} are not ISO 639-1 codes evalnb knows; expected two-letter "
            "codes such as 'en', 'zh', 'fr' (evalnb.text.language.LANGUAGE_NAMES)"
        )
        raise ValueError(msg)


def answer_languages(lab: LabCore) -> pl.DataFrame:
    """Each answer's language next to its case's: ``mixed`` where they differ.

    Returns ``case_id``, ``model``, ``sample``, ``language`` (the case's), ``answer_language``
    and ``mixed`` (null where either is unknown: an empty answer, digits only).
    """
    cases = lab.cases
    langs = cases.select("case_id", language=case_languages(cases))
    outputs = lab.outputs.select("case_id", "model", "sample", "actual")
    joined = outputs.join(langs, on="case_id", how="left", maintain_order="left")
    # Told the lab's languages and English, the detector stops misreading short answers.
    candidates = sorted({*langs["language"].drop_nulls().to_list(), "en"} & set(LANGUAGE_NAMES))
    return joined.with_columns(
        answer_language=detect_languages(joined["actual"], candidates)
    ).select(
        "case_id",
        "model",
        "sample",
        "language",
        "answer_language",
        mixed=pl.col("language") != pl.col("answer_language"),
    )


def language_summary(lab: LabCore) -> pl.DataFrame:
    """Cases per language, with how many answers came back in another language."""
    mix = answer_languages(lab)
    return (
        mix.group_by("language")
        .agg(
            n_cases=pl.col("case_id").n_unique(),
            n_answers=pl.len(),
            n_mixed=pl.col("mixed").sum(),
        )
        .with_columns(
            name=pl.col("language").replace_strict(
                LANGUAGE_NAMES, default=pl.col("language"), return_dtype=pl.String
            )
        )
        .sort("n_cases", descending=True)
        .select("language", "name", "n_cases", "n_answers", "n_mixed")
    )
