"""Perturbed copies of a lab's cases: a pure frame transform, and adding them to a lab."""

from __future__ import annotations

import hashlib
import json
import logging
import warnings
from typing import TYPE_CHECKING, TypeVar

import polars as pl

from evalnb.lab.core import LabCore
from evalnb.lab.errors import EvalnbError
from evalnb.robustness.misinformation import NAME as MISINFORMATION
from evalnb.robustness.misinformation import misinform
from evalnb.robustness.perturbators import INTENSITIES, perturb_text, unfit_for
from evalnb.text.language import case_languages

if TYPE_CHECKING:
    from evalnb.llm.client import LLMClient

_log = logging.getLogger("evalnb")

__all__ = ["perturb", "perturbed_cases"]

L = TypeVar("L", bound=LabCore)


def perturbed_cases(
    cases: pl.DataFrame,
    names: list[str],
    intensity: str,
    seed: int,
    field: str,
    llm: LLMClient | None = None,
) -> pl.DataFrame:
    """One new case per (original case, perturbator); ids derive from the lineage and seed.

    A case the perturbator cannot change (H2O's retry limit) is skipped and logged; a
    perturbator that changes no case at all is an error. ``contextual_misinformation``
    rewrites through ``llm`` and records the false claim in the new case's ``extra``.
    """
    if field not in ("prompt", "system"):
        msg = f"perturb: field must be 'prompt' or 'system'; got {field!r}"
        raise ValueError(msg)
    originals = cases.filter(pl.col("perturbation_of").is_null() & pl.col(field).is_not_null())
    level = intensity.lower()
    if level not in INTENSITIES:
        msg = f"unknown intensity {intensity!r}; expected one of {INTENSITIES}"
        raise EvalnbError(msg)
    parts = []
    languages = case_languages(originals).to_list()
    for name in names:
        unfit = [unfit_for(name, lang) for lang in languages]
        _warn_unfit(name, unfit)
        texts: list[str | None] = []
        extras = originals["extra"].to_list()
        if name == MISINFORMATION:
            rewrites = misinform(llm, originals[field].to_list(), level, seed)
            texts = [r[0] if r else None for r in rewrites]
            extras = [
                _with_claim(e, r[1], level) if r else e
                for e, r in zip(extras, rewrites, strict=True)
            ]
        for text, why in zip(
            originals[field].to_list() if name != MISINFORMATION else (), unfit, strict=False
        ):
            if why is not None:
                texts.append(None)
                continue
            try:
                texts.append(perturb_text(name, text, level, seed=seed))
            except EvalnbError as exc:  # e.g. no 'y' to swap, too few words for the step
                _log.info("perturb: case skipped: %s", exc)
                texts.append(None)
        ids = [
            "p" + hashlib.sha256(f"{cid}\x1f{name}\x1f{level}\x1f{seed}".encode()).hexdigest()[:16]
            for cid in originals["case_id"].to_list()
        ]
        done = pl.Series([t is not None for t in texts])
        if not done.any() and originals.height:
            if all(w is not None for w in unfit):
                msg = f"perturbator {name!r} fits none of the cases: {unfit[0]}"
                raise EvalnbError(msg)
            msg = f"perturbator {name!r} at {level!r} could not change any {field}; the last reason is logged"
            raise EvalnbError(msg)
        parts.append(
            originals.with_columns(extra=pl.Series(extras, dtype=pl.String))
            .filter(done)
            .with_columns(
                pl.Series(field, [t for t in texts if t is not None], dtype=pl.String),
                case_id=pl.Series(ids, dtype=pl.String).filter(done),
                perturbation_of=pl.col("case_id"),
                perturbation=pl.lit(name),
                perturbation_intensity=pl.lit(level),
                categories=pl.col("categories")
                .fill_null([])
                .list.concat(pl.lit([f"perturbed_by:{name}:{level}"])),
            )
        )
    return pl.concat(parts) if parts else cases.clear()


def _warn_unfit(name: str, unfit: list[str | None]) -> None:
    """Say once per perturbator how many cases it skips for their language, and why."""
    reasons: dict[str, int] = {}
    for why in unfit:
        if why is not None:
            reasons[why] = reasons.get(why, 0) + 1
    if reasons:
        listed = "; ".join(f"{why} ({n} case(s))" for why, n in reasons.items())
        warnings.warn(f"perturb: {name} skips cases: {listed}", stacklevel=4)
        _log.info("perturb: %s skips cases: %s", name, listed)


def _with_claim(extra: str | None, claim: str, level: str) -> str:
    """Return the case's extra with the planted false claim (what a model should resist)."""
    known = json.loads(extra) if extra else {}
    known = known if isinstance(known, dict) else {"extra": known}
    return json.dumps(
        {**known, "misinformation": {"false_claim": claim, "intensity": level}}, ensure_ascii=False
    )


def perturb(
    lab: L,
    perturbators: str | list[str],
    *,
    intensity: str = "medium",
    seed: int = 0,
    field: str = "prompt",
    llm: LLMClient | None = None,
) -> L:
    """Add a perturbed copy of every original case per perturbator (H2O lineage).

    Each new case keeps its original's fields but ``field`` (default the prompt), links
    back through ``perturbation_of`` and carries H2O's ``perturbed_by:<name>:<intensity>``
    category. Models have not answered the new cases yet: run them (or import their
    answers), then evaluate; ``lab.problems`` reports verdicts that flip. Deterministic
    for a seed; written through to the lab's store when it has one. A perturbed case already
    in the lab (same lineage and seed, so the same id) is kept as it is.

    ``"contextual_misinformation"`` (H2O's agent-based perturbator) rewrites each prompt
    around a plausible false claim through ``llm`` (an :class:`evalnb.LLMClient`), and
    keeps the claim in the new case's ``extra``.
    """
    names = [perturbators] if isinstance(perturbators, str) else list(perturbators)
    added = perturbed_cases(lab.cases, names, intensity, seed, field, llm)
    cases = pl.concat(
        [lab.cases, added.filter(~pl.col("case_id").is_in(lab.cases["case_id"].implode()))]
    )
    lab.replace_tables({"cases": cases})
    return lab
