"""A transparent rule-based question-type classifier (used when a lab has no question types).

Rules are tried in order; the first that matches names the type, and the classifier returns
the rule's id alongside so a reviewer can see why. Users override any case afterwards with
:meth:`evalnb.Lab.set_question_types`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    from collections.abc import Mapping

    from evalnb.lab.core import LabCore

__all__ = ["RULES", "classify_questions", "set_question_types"]

_AUX = r"(?:is|are|was|were|do|does|did|can|could|should|will|would|has|have|had|may|must)"
RULES: tuple[tuple[str, str, str], ...] = (
    # (type, rule id, regular expression on the lower-cased question)
    (
        "multi-hop",
        "two questions",
        r"\?.+\?|\b(?:and|then)\s+(?:what|how|which|who|when|where|why)\b",
    ),
    (
        "comparison",
        "compare",
        r"\b(?:compare|comparison|differ|difference|versus|vs\.?|better|worse|more than|less than)\b|^\s*which\b.*\b(?:higher|lower|larger|smaller|longer|shorter|cheaper|bigger|more|less|best|worst)\b.*\bor\b",
    ),
    (
        "definition",
        "what does … mean",
        r"\bwhat does .+ mean\b|\b(?:define|definition of|meaning of|stand for)\b",
    ),
    (
        "numeric",
        "how many / how much",
        r"^\s*(?:how (?:many|much|long|often|old|far)|what (?:is|are) the (?:number|amount|rate|percentage|price|cost|fee|apr|term|limit))\b",
    ),
    ("procedural", "how to", r"^\s*how (?:do|does|can|should|to|would)\b"),
    ("causal", "why", r"^\s*why\b"),
    ("yes-no", "auxiliary first", rf"^\s*{_AUX}\b"),
    ("list", "list", r"^\s*(?:list|name|enumerate|which (?:are|of))\b"),
    (
        "definition",
        "what is <term>",
        r"^\s*what (?:is|are) (?:a|an|the)?\s*\w+(?:\s+\w+)?\s*\??\s*$",
    ),
    ("entity", "who / when / where", r"^\s*(?:who|whom|whose|when|where)\b"),
    ("factoid", "what / which", r"^\s*(?:what|which)\b"),
)
_COMPILED = [(t, rid, re.compile(rx)) for t, rid, rx in RULES]


def classify_questions(prompts: list[str | None]) -> pl.DataFrame:
    """Return ``question_type`` and the ``rule`` that decided, per prompt (``other``: none)."""
    types, rules = [], []
    for prompt in prompts:
        text = (prompt or "").strip().lower()
        hit = next(((t, rid) for t, rid, rx in _COMPILED if rx.search(text)), ("other", "no rule"))
        types.append(hit[0])
        rules.append(hit[1])
    return pl.DataFrame({"question_type": types, "rule": rules})


def set_question_types(
    lab: LabCore, types: Mapping[str, str] | pl.DataFrame | None = None, *, overwrite: bool = False
) -> pl.DataFrame:
    """Fill ``cases.question_type``; returns the cases with the rule that set each type.

    ``types`` (``{case_id: type}`` or a frame with ``case_id`` and ``question_type``) sets
    those cases; without it, cases lacking a type (all of them with ``overwrite``) get the
    rule-based type. Written through to the lab's store.
    """
    cases = lab.cases
    if types is not None:
        frame = (
            types
            if isinstance(types, pl.DataFrame)
            else pl.DataFrame({"case_id": list(types), "question_type": list(types.values())})
        )
        unknown = set(frame["case_id"]) - set(cases["case_id"])
        if unknown:
            msg = f"no case(s) {sorted(unknown)[:5]} in this lab; question types name existing case_ids"
            raise KeyError(msg)
        new = cases.join(
            frame.select("case_id", new="question_type"),
            on="case_id",
            how="left",
            maintain_order="left",
        )["new"]
        rule, take = pl.repeat("user", cases.height, eager=True), new.is_not_null()
    else:
        guess = classify_questions(cases["prompt"].to_list())
        new, rule = guess["question_type"], guess["rule"]
        take = cases["question_type"].is_null() | overwrite
    shown = cases.select(
        "case_id",
        "prompt",
        question_type=pl.when(take).then(new).otherwise(pl.col("question_type")),
        rule=pl.when(take).then(rule).otherwise(pl.lit("kept")),
    )
    lab.replace_tables({"cases": cases.with_columns(question_type=shown["question_type"])})
    return shown
