"""``evalnb.validate_tests``: score a suite's cases against their sources, list and drop outliers."""

from __future__ import annotations

import json
import warnings
from typing import TYPE_CHECKING

import polars as pl

from evalnb.evaluation.engine import NothingScoredWarning
from evalnb.generation.validation import METRICS, outliers, validation_rows
from evalnb.models.hf import ModelUnavailable, load_classifier

if TYPE_CHECKING:
    from collections.abc import Sequence

    from evalnb.api.lab import Lab

__all__ = ["Validation", "validate_tests"]


class Validation:
    """A suite's validation scores, kept in its lab's ``validation`` table.

    Attributes
    ----------
    lab
        The lab validated (its ``validation`` table holds the scores).
    z
        The robust z-score below which a case is an outlier.
    """

    def __init__(self, lab: Lab, z: float) -> None:
        self.lab, self.z = lab, z

    def scores(self) -> pl.DataFrame:
        """One row per validated case: its prompt, generator, topic and each score."""
        rows = self.lab.table("validation")
        wide = rows.pivot(on="metric", index="case_id", values="value", aggregate_function="first")
        metrics = [m for m in METRICS if m in wide.columns]
        return self.lab.cases.select("case_id", "prompt", "question_type", "topic").join(
            wide.select("case_id", *metrics), on="case_id", how="inner"
        )

    def outliers(self, z: float | None = None) -> pl.DataFrame:
        """Cases scoring far below the others on some metric (see :mod:`evalnb.generation.validation`)."""
        found = outliers(self.lab.table("validation"), z=self.z if z is None else z)
        return found.join(self.lab.cases.select("case_id", "prompt", "expected"), on="case_id")

    def exclude(
        self, case_ids: Sequence[str], *, reason: str = "excluded in test validation"
    ) -> Lab:
        """Drop cases from the suite (and the store); their validation rows record why."""
        ids = list(case_ids)
        unknown = sorted(set(ids) - set(self.lab.cases["case_id"].to_list()))
        if unknown:
            msg = f"no cases {unknown[:5]} in this lab; pass ids from validation.scores()"
            raise KeyError(msg)
        table = self.lab.table("validation").with_columns(
            detail=pl.when(pl.col("case_id").is_in(ids))
            .then(pl.lit(json.dumps({"excluded": reason})))
            .otherwise("detail")
        )
        keep = ~pl.col("case_id").is_in(ids)
        self.lab.replace_tables(
            {
                "cases": self.lab.cases.filter(keep),
                "outputs": self.lab.outputs.filter(keep),
                "scores": self.lab.scores.filter(keep),
                "validation": table,
            }
        )
        return self.lab


def validate_tests(
    lab: Lab,
    *,
    model: str = "all-MiniLM-L6-v2",
    nli_model: str | None = None,
    outlier_z: float = 3.0,
) -> Validation:
    """Validate a suite: each case's expected answer against the source it was written from.

    Parameters
    ----------
    lab
        A lab whose cases carry an expected answer and their source in ``corpus`` (as
        :func:`evalnb.generate_tests` writes them); other cases are left out.
    model
        The embedding model for the cosine and the token-matching scores.
    nli_model
        An NLI model (a local folder, or a name in the local Hugging Face cache, e.g.
        ``cross-encoder/nli-deberta-v3-small``) for ``nli_entailment``; without one that
        score is skipped, with a warning.
    outlier_z
        Robust z-score below which :meth:`Validation.outliers` lists a case.

    Returns
    -------
    Validation
        Scores in ``lab``'s ``validation`` table (and its store), replacing earlier ones of
        the same cases.
    """
    nli = None
    if nli_model is None:
        warnings.warn(
            NothingScoredWarning(
                "test validation: nli_entailment not computed (no NLI model given); pass "
                "nli_model='<local folder or cached name>' to add it"
            ),
            stacklevel=2,
        )
    else:
        try:
            nli = load_classifier(nli_model, "test validation")
        except ModelUnavailable as exc:
            warnings.warn(NothingScoredWarning(f"nli_entailment not computed: {exc}"), stacklevel=2)
    rows = validation_rows(lab.cases, model=model, nli=nli, nli_name=nli_model or "")
    kept = lab.table("validation").filter(
        ~pl.col("case_id").is_in(rows["case_id"].unique().to_list())
    )
    lab.replace_tables({"validation": pl.concat([kept, rows])})
    return Validation(lab, outlier_z)
