"""``evalnb.adversarial``: adversarial cases for a suite, linked to the cases they came from."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import polars as pl

from evalnb.generation.adversarial_cases import H2O_ADVERSARIAL_KINDS, adversarial_cases

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from evalnb.api.lab import Lab
    from evalnb.llm.client import LLMClient

__all__ = ["ADVERSARIAL_REPORT", "adversarial", "keep_report"]

ADVERSARIAL_REPORT = "adversarial_generation"


def keep_report(lab: Lab, key: str, entry: Mapping[str, object]) -> pl.DataFrame:
    """Return ``lab``'s ``info`` table with ``entry`` (JSON) under ``key``, replacing the old."""
    info = lab.table("info").filter(pl.col("key") != key)
    return pl.concat([info, pl.DataFrame({"key": [key], "value": [json.dumps(entry)]})])


def adversarial(
    lab: Lab,
    *,
    kinds: Sequence[str] | None = None,
    n: int = 30,
    llm: LLMClient | None = None,
    topics: Sequence[str] | None = None,
    seed: int = 0,
) -> Lab:
    """Add adversarial test cases to ``lab``, each linked to its base case.

    Parameters
    ----------
    lab
        A lab of test cases (generated or imported) with expected answers.
    kinds
        H2O's ``misleading``, ``ambiguous`` and ``contradictory``, and evalnb's
        ``injection`` (:mod:`evalnb.generation.adversarial_cases` describes them). Default: H2O's
        three with ``llm``; without one, ``misleading``, ``contradictory`` and
        ``injection`` (``ambiguous`` needs an LLM).
    n
        How many adversarial cases, shared over the kinds (fewer when the suite offers
        fewer bases a kind can use, or LLM replies fail to parse).
    llm
        The client that rewrites base cases adversarially; without one the judge-free
        kinds are built from the base case's own text.
    topics
        Only base cases of these topics.
    seed
        Same seed, same suite: same adversarial cases.

    Returns
    -------
    evalnb.Lab
        The lab with the adversarial cases added (in its store when it has one):
        ``perturbation_of`` names the base case, ``perturbation`` is
        ``adversarial_<kind>``. Answer and score them with the rest, then compare with
        ``lab.robustness.effect`` and ``lab.robustness.chart``.
    """
    default = (
        H2O_ADVERSARIAL_KINDS if llm is not None else ("misleading", "contradictory", "injection")
    )
    cases = lab.cases
    if topics is not None:
        cases = cases.filter(pl.col("topic").is_in(list(topics)))
    added, report = adversarial_cases(cases, kinds=list(kinds or default), n=n, seed=seed, llm=llm)
    if added.is_empty():
        msg = (
            "no adversarial case could be made: the suite has no case with an expected answer "
            "(in the topics asked for) that these kinds can use"
        )
        raise ValueError(msg)
    kept = lab.cases.filter(~pl.col("case_id").is_in(added["case_id"].to_list()))
    entry = {
        "llm": llm.model if llm is not None else None,
        "seed": seed,
        "n": n,
        "generators": report.to_dicts(),
    }
    return lab.with_tables(
        {"cases": pl.concat([kept, added]), "info": keep_report(lab, ADVERSARIAL_REPORT, entry)}
    )
