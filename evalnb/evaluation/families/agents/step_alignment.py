"""H2O's step alignment & completeness: an answer's procedure against the retrieved context's.

After Sudjianto & Sudjianto, "Evaluating Procedure Generation in RAG Systems", as H2O Eval
Studio describes it: the steps of every enumeration in the retrieved context chunks and in the
answer are extracted (regular expressions, :mod:`evalnb.text.enumerations`, or the LLM judge
with ``extraction="llm"``), embedded with all-MiniLM-L6-v2 through the model engine, and
aligned by a step-level edit distance in which two steps match when their cosine similarity
reaches ``similarity_threshold`` (:mod:`evalnb.text.step_edits`, compiled, all rows at once).

The context is the ground truth. Each pair of an answer enumeration and a context enumeration
is aligned; the pair with the most matched steps (then the fewest edits) is the row's: the
procedure the answer follows. Its counts are the metrics: ``edits`` (primary) =
``insertions`` (context steps missing from the answer) + ``deletions`` (answer steps not in
the context) + ``mismatches`` (substitutions), with ``context_steps`` and ``answer_steps``.
A row whose context has no enumeration is not scored, with the reason; an answer without one
has every context step to insert.

Bounded: the first ``MAX_LISTS`` enumerations of an answer and of a row's context are
aligned (so at most ``MAX_LISTS``² pairs a row, each of at most ``MAX_STEPS``² step pairs),
and a row's step similarities come from one matrix product.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from evalnb.evaluation.base import (
    Context,
    Evaluator,
    MetricSpec,
    Param,
    reasons,
    register,
    result_frame,
    threshold_param,
)
from evalnb.llm.parsed import parse_json_schema
from evalnb.models.resolve import used_model
from evalnb.text.enumerations import MAX_STEP_CHARS, MAX_STEPS, enumerations
from evalnb.text.step_edits import edit_counts

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import polars as pl

__all__ = ["StepAlignment"]

# Enumerations aligned per answer and per row's context (the first ones; see the docstring).
MAX_LISTS = 32

_INF = float("inf")
_COUNTS = ("insertions", "deletions", "mismatches")
_EXTRACT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "enumerations": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}}
    },
    "required": ["enumerations"],
}
_EXTRACT_PROMPT = (
    "Extract every enumeration of steps (a procedure, a sequence, a numbered, lettered or "
    "bulleted list, or prose such as 'First ... Then ... Finally ...') from the text below. "
    "Give each enumeration as the list of its steps in order, each step as its own words "
    "without the number or bullet. An enumeration has two steps or more; a text may have "
    'none. Reply with JSON only: {"enumerations": [["step", "step"], ...]}.\n\n'
    "Text:\n<<<\n{TEXT}\n>>>"
)


def _spec(
    key: str, title: str, text: str, *, primary: bool = False, higher: bool = False
) -> MetricSpec:
    return MetricSpec(
        key, title, text, max=_INF, higher_is_better=higher, threshold=0.75, primary=primary
    )


@register
class StepAlignment(Evaluator):
    """Steps of the answer's procedure against the retrieved context's, by edit distance."""

    id = "step_alignment"
    title = "Step alignment & completeness"
    domain = "retrieval"
    description = (
        "Steps of procedures in the answer against those in the retrieved context (the ground "
        "truth): extracted by regular expressions or the LLM judge, matched by sentence "
        "embeddings, aligned by dynamic programming; edits, insertions, deletions, mismatches."
    )
    requires = ("actual", "context")
    uses_judge = True
    metrics = (
        _spec(
            "edits",
            "Edits",
            "Insertions, deletions and substitutions turning the answer's "
            "steps into the context's.",
            primary=True,
        ),
        _spec("insertions", "Insertions", "Context steps missing from the answer."),
        _spec("deletions", "Deletions", "Answer steps not in the context."),
        _spec(
            "mismatches",
            "Mismatches",
            "Answer steps standing where a different context step should be (substitutions).",
        ),
        _spec(
            "context_steps",
            "Retrieved context steps",
            "Steps detected in the retrieved context's enumeration the answer is aligned with.",
            higher=True,
        ),
        _spec(
            "answer_steps",
            "Actual answer steps",
            "Steps detected in the answer's enumeration.",
            higher=True,
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param(
            "model",
            str,
            default="sentence-transformers/all-MiniLM-L6-v2",
            description="sentence-transformers model embedding the steps (H2O: all-MiniLM-L6-v2)",
            normalize=lambda m: used_model(str(m)),
        ),
        Param(
            "similarity_threshold",
            float,
            default=0.7,
            low=-1.0,
            high=1.0,
            description="cosine similarity from which two steps are the same step",
        ),
        Param(
            "extraction",
            str,
            default="regex",
            choices=("regex", "llm"),
            description="how steps are found: regular expressions, or the LLM judge "
            "(evaluate(..., judge=LLMClient(...)))",
        ),
        Param(
            "judge_model",
            str,
            default="",
            description="the judge's model name (set from the judge client)",
        ),
        threshold_param(0.75, "edits", high=None),
    )

    def score(self, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context) -> pl.DataFrame:
        """Align every row's answer steps with its context's; see the module docstring."""
        answers = rows["actual"].to_list()
        contexts = [list(c or []) for c in rows["context"].to_list()]
        errored = rows["error"].is_not_null().to_numpy()
        # A failed host call is an answer without steps: every context step is missing.
        answers = [None if e else a for a, e in zip(answers, errored, strict=True)]
        texts = answers + [chunk for row in contexts for chunk in row]
        if params["extraction"] == "llm":
            found, failures = _llm_enumerations(texts, ctx)
        else:
            found, failures = [enumerations(t) for t in texts], [None] * len(texts)
        found = [f[:MAX_LISTS] for f in found]
        ans_enums = found[: rows.height]
        ctx_enums: list[list[tuple[int, list[str]]]] = []  # per row: (chunk, enumeration)
        at = rows.height
        for row in contexts:
            mine = [(k, e) for k, chunk in enumerate(row) for e in found[at + k]]
            ctx_enums.append(mine[:MAX_LISTS])
            at += len(row)
        failed = _row_failures(failures, rows.height, [len(r) for r in contexts])
        best = _align(ans_enums, ctx_enums, params, ctx)
        values = {
            k: np.full(rows.height, np.nan)
            for k in ("edits", *_COUNTS, "context_steps", "answer_steps")
        }
        details: list[str | None] = [None] * rows.height
        for i, got in enumerate(best):
            if got is None:
                continue
            for key, value in got.items():
                if key in values:
                    values[key][i] = value
            details[i] = json.dumps({"aligned": got["aligned"]}, ensure_ascii=False)
        no_steps = np.array([not e for e in ctx_enums], dtype=bool)
        has_failure = np.array([f is not None for f in failed], dtype=bool)
        for column in values.values():
            column[no_steps | has_failure] = np.nan
        why = reasons(
            rows.height, (no_steps, "no enumerated steps in the retrieved context"), base=details
        )
        for at in np.flatnonzero(has_failure).tolist():
            why[at] = json.dumps({"reason": f"step extraction by the judge failed: {failed[at]}"})
        return result_frame(rows, values, why)


def _row_failures(
    failures: Sequence[str | None], n: int, chunks: Sequence[int]
) -> list[str | None]:
    """Return the first extraction failure of each row (its answer, then its chunks)."""
    out = list(failures[:n])
    at = n
    for i, count in enumerate(chunks):
        out[i] = out[i] or next((f for f in failures[at : at + count] if f), None)
        at += count
    return out


def _llm_enumerations(
    texts: Sequence[str | None], ctx: Context
) -> tuple[list[list[list[str]]], list[str | None]]:
    """Ask the judge for each distinct text's enumerations (one batch, cached)."""
    if ctx.judge is None:
        msg = (
            "step_alignment with extraction='llm' needs an LLM judge: evalnb.evaluate(lab, "
            "['step_alignment'], extraction='llm', judge=evalnb.LLMClient(...))"
        )
        raise ValueError(msg)
    distinct = sorted({t for t in texts if t})
    asks = [[{"role": "user", "content": _EXTRACT_PROMPT.replace("{TEXT}", t)}] for t in distinct]
    replies = ctx.judge.chat_many(asks, progress=False) if asks else []
    by_text: dict[str, tuple[list[list[str]], str | None]] = {}
    for text, reply in zip(distinct, replies, strict=True):
        if reply.error:
            by_text[text] = ([], f"judge call failed: {reply.error}")
            continue
        parsed = parse_json_schema(reply.content, _EXTRACT_SCHEMA)
        if not parsed.ok:
            by_text[text] = ([], f"judge reply not understood: {parsed.note}")
            continue
        enums = [
            [" ".join(str(s).split())[:MAX_STEP_CHARS] for s in e[:MAX_STEPS] if str(s).strip()]
            for e in parsed.value["enumerations"]
        ]
        by_text[text] = ([e for e in enums if len(e) >= 2], None)
    out = [by_text.get(t, ([], None)) if t else ([], None) for t in texts]
    return [o[0] for o in out], [o[1] for o in out]


def _align(
    answers: Sequence[list[list[str]]],
    contexts: Sequence[list[tuple[int, list[str]]]],
    params: Mapping[str, object],
    ctx: Context,
) -> list[dict[str, Any] | None]:
    """Per row, the counts of its best (answer, context) enumeration pair."""
    steps: dict[str, int] = {}
    for row in answers:
        for e in row:
            for s in e:
                steps.setdefault(s, len(steps))
    for crow in contexts:
        for _, e in crow:
            for s in e:
                steps.setdefault(s, len(steps))
    if steps:
        encoder = ctx.encoder(str(params["model"]))
        emb = np.asarray(encoder.encode(list(steps)), dtype=np.float32)
        emb /= np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)
    else:
        emb = np.zeros((0, 1), dtype=np.float32)
    tau = float(params["similarity_threshold"])  # type: ignore[arg-type]
    pairs: list[tuple[int, int, int]] = []  # (row, answer enumeration or -1, context candidate)
    blocks, ns, ms = [], [], []
    for i, (arow, crow) in enumerate(zip(answers, contexts, strict=True)):
        # One product per row: every answer step against every context step, then the
        # block of each (answer, context) enumeration pair cut out of it.
        a_ids = [steps[s] for e in arow for s in e]
        c_ids = [steps[s] for _, e in crow for s in e]
        hit = (emb[a_ids] @ emb[c_ids].T >= tau) if a_ids and c_ids else None
        a_at = np.cumsum([0, *(len(e) for e in arow)])
        c_at = np.cumsum([0, *(len(e) for _, e in crow)])
        for k, (_, cenum) in enumerate(crow):
            for a, aenum in enumerate(arow or [[]]):
                if hit is not None and aenum:
                    block = hit[a_at[a] : a_at[a + 1], c_at[k] : c_at[k + 1]]
                    blocks.append(block.ravel())
                ns.append(len(aenum))
                ms.append(len(cenum))
                pairs.append((i, a if arow else -1, k))
    match = np.concatenate(blocks) if blocks else np.zeros(0, dtype=bool)
    counts = edit_counts(match, np.array(ns, dtype=np.int64), np.array(ms, dtype=np.int64))
    best: list[dict[str, Any] | None] = [None] * len(answers)
    keys: list[tuple[int, int]] = [(-1, 0)] * len(answers)
    for p, (i, a, k) in enumerate(pairs):
        ins, dele, sub, same = (int(x) for x in counts[p])
        key = (same, -(ins + dele + sub))
        if best[i] is None or key > keys[i]:
            chunk, cenum = contexts[i][k]
            keys[i] = key
            best[i] = {
                "edits": ins + dele + sub,
                "insertions": ins,
                "deletions": dele,
                "mismatches": sub,
                "context_steps": ms[p],
                "answer_steps": ns[p],
                "aligned": {
                    "context_chunk": chunk,
                    "context_steps": cenum,
                    "answer_steps": answers[i][a] if a >= 0 else [],
                    "matched": same,
                },
            }
    return best
