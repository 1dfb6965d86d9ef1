"""Retrievers under test: call a user's retriever on every case, keep what it ranked.

The contract. ``fn(question)`` is the user's retriever: sync or async, it returns the ranked
document ids (best first) or ``(id, score)`` pairs. :func:`run_retriever` calls it once per
case question (the case's prompt), at most ``concurrency`` at a time and ``timeout_s`` each,
keeps the first ``k`` documents as the ``retrievals`` of model ``name`` (sample 0) and an
output row per case, so the ``retrieval`` evaluator, leaderboards and ``decide`` take the
retriever like any other system. What the function returns is untrusted: an id is text of at
most :data:`MAX_ID` characters, a score a finite number; a call that raises, times out or
returns something else is that case's ``error`` (the output row says what), never a crash of
the run and never a ranking. Ranks without scores get falling scores (``k``, ``k - 1``, …) so
trec_eval's order is the order returned. Cases the lab already holds rankings of ``name``
for are not asked again (a rerun resumes), as answers are cached.
"""

from __future__ import annotations

import asyncio
import inspect
import math
from typing import TYPE_CHECKING, Any, TypeVar

import polars as pl

from evalnb.lab.schema import RETRIEVALS
from evalnb.llm.pacing import run_blocking

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from evalnb.lab.core import LabCore

__all__ = ["MAX_ID", "keep_rankings", "run_retriever"]

L = TypeVar("L", bound="LabCore")
MAX_ID = 512
"""The longest document id kept (characters); a longer one makes the call an error."""


def _ranking(value: object, k: int) -> list[tuple[str, float]]:
    """Read what a retriever returned; ``ValueError`` saying what is wrong with it."""
    if isinstance(value, str | bytes) or not isinstance(value, list | tuple):
        msg = f"expected a list of document ids or (id, score) pairs; got {type(value).__name__}"
        raise ValueError(msg)
    items = list(value)[:k]
    out: list[tuple[str, float]] = []
    for position, item in enumerate(items):
        if isinstance(item, tuple | list) and len(item) == 2:
            doc, score = item
        else:
            doc, score = item, float(k - position)
        if not isinstance(doc, str | int) or isinstance(doc, bool):
            msg = f"item {position}: a document id is text; got {type(doc).__name__}"
            raise ValueError(msg)
        doc = str(doc)
        if not doc or len(doc) > MAX_ID:
            msg = f"item {position}: a document id of 1 to {MAX_ID} characters; got {len(doc)}"
            raise ValueError(msg)
        if (
            not isinstance(score, int | float)
            or isinstance(score, bool)
            or not math.isfinite(score)
        ):
            msg = f"item {position}: a score is a finite number; got {score!r:.40}"
            raise ValueError(msg)
        out.append((doc, float(score)))
    if len({d for d, _ in out}) < len(out):
        msg = "a document is listed twice (trec_eval would refuse the ranking)"
        raise ValueError(msg)
    return out


async def _ask_all(
    fn: Callable[[str], Any], questions: Sequence[str], k: int, concurrency: int, timeout_s: float
) -> list[tuple[list[tuple[str, float]] | None, str | None]]:
    gate = asyncio.Semaphore(concurrency)
    is_async = inspect.iscoroutinefunction(fn)

    async def ask(question: str) -> tuple[list[tuple[str, float]] | None, str | None]:
        async with gate:
            try:
                call = fn(question) if is_async else asyncio.to_thread(fn, question)
                value = await asyncio.wait_for(call, timeout_s)
                return _ranking(value, k), None
            except TimeoutError:
                return None, f"the retriever took longer than {timeout_s:g} s"
            except Exception as exc:
                return None, f"the retriever failed: {type(exc).__name__}: {str(exc)[:300]}"

    return list(await asyncio.gather(*(ask(q) for q in questions)))


def run_retriever(
    lab: L,
    fn: Callable[[str], Any],
    *,
    name: str,
    k: int = 100,
    concurrency: int = 8,
    timeout_s: float = 30.0,
    cases: Sequence[str] | None = None,
) -> L:
    """Run the retriever ``fn`` on every case's question; return the lab with its rankings.

    Parameters
    ----------
    lab
        The lab whose cases' prompts are the questions.
    fn
        ``fn(question) -> [doc_id, ...]`` or ``[(doc_id, score), ...]``, sync or async.
    name
        The retriever's name: its ``model`` in the lab (e.g. ``"bm25-chunk512"``).
    k
        Documents kept per case (the first ``k`` returned).
    concurrency, timeout_s
        Calls at a time, and seconds each may take before it is that case's error.
    cases
        Only these case ids (all by default).

    Returns
    -------
    LabCore
        A new lab (the class given) with the rankings in ``retrievals`` and an output row per
        case asked (``error`` set where the call failed).
    """
    if k < 1 or concurrency < 1 or not timeout_s > 0:
        msg = f"k and concurrency are positive integers, timeout_s positive; got {k}, {concurrency}, {timeout_s}"
        raise ValueError(msg)
    if not name.strip():
        msg = "name is the retriever's model name in the lab; got an empty one"
        raise ValueError(msg)
    asked = lab.cases.select("case_id", "prompt")
    if cases is not None:
        asked = asked.filter(pl.col("case_id").is_in(list(cases)))
    done = lab.table("retrievals").filter(pl.col("model") == name).select("case_id").unique()
    asked = asked.join(done, on="case_id", how="anti")
    if asked.is_empty():
        return lab
    results = run_blocking(  # also from a notebook's running event loop
        _ask_all(fn, asked["prompt"].fill_null("").to_list(), k, concurrency, timeout_s)
    )
    ids = asked["case_id"].to_list()
    rows = [
        (case_id, rank, doc, score)
        for case_id, (ranking, _) in zip(ids, results, strict=True)
        for rank, (doc, score) in enumerate(ranking or [], start=1)
    ]
    ranked = pl.DataFrame(
        rows,
        schema={k: RETRIEVALS[k] for k in ("case_id", "rank", "doc_id", "score")},
        orient="row",
    )
    return keep_rankings(lab, name, ranked, ids, [e for _, e in results])


def keep_rankings(
    lab: L,
    name: str,
    ranked: pl.DataFrame,
    case_ids: Sequence[str],
    errors: Sequence[str | None],
) -> L:
    """Return ``lab`` with retriever ``name``'s rankings of ``case_ids`` and an output row each.

    ``ranked`` holds ``case_id``, ``rank``, ``doc_id`` and ``score`` of the cases asked;
    ``errors[i]`` says why case ``i`` has no ranking (None where it has one). The output row
    (sample 0) is what leaderboards and ``decide`` count the retriever's cases by; a case
    asked again replaces its earlier ranking and output row.
    """
    new = ranked.select(
        pl.col("case_id").cast(pl.String),
        model=pl.lit(name, dtype=pl.String),
        sample=pl.lit(0, dtype=RETRIEVALS["sample"]),
        rank=pl.col("rank").cast(RETRIEVALS["rank"]),
        doc_id=pl.col("doc_id").cast(pl.String),
        score=pl.col("score").cast(RETRIEVALS["score"]),
    )
    outputs = pl.DataFrame(
        {
            "case_id": pl.Series(list(case_ids), dtype=pl.String),
            "model": [name] * len(case_ids),
            "sample": [0] * len(case_ids),
            "error": pl.Series(list(errors), dtype=pl.String),
        }
    )
    kept = lab.outputs.join(
        outputs.select("case_id", "model", "sample"), on=["case_id", "model", "sample"], how="anti"
    )
    asked = pl.col("case_id").is_in(pl.Series(list(case_ids), dtype=pl.String).implode())
    earlier = lab.table("retrievals").filter(~((pl.col("model") == name) & asked))
    return lab.with_tables(
        {
            "retrievals": pl.concat([earlier, new]),
            "outputs": pl.concat([kept, outputs], how="diagonal_relaxed"),
        }
    )
