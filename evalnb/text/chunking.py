"""Sections of text into chunks that respect sentences and a token budget.

``semchunk`` does the cutting: it splits at the largest boundary that keeps a chunk within
the budget (blank lines, then line breaks, then sentence ends, then clause punctuation,
then words), merges the pieces back up to the budget, and gives each chunk's character
span, so a chunk is always an exact slice of its section. Tokens are counted with the
tokenizer of the embedding model that will embed the chunks, so a chunk never exceeds what
that model reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["CHUNK_SCHEMA", "chunk_texts"]

CHUNK_SCHEMA = pl.Schema(
    {
        "section": pl.Int64(),
        "chunk": pl.Int64(),
        "start": pl.Int64(),
        "end": pl.Int64(),
        "text": pl.String(),
        "n_tokens": pl.Int64(),
    }
)


def chunk_texts(
    texts: Sequence[str],
    *,
    max_tokens: int,
    tokenizer: Any,  # noqa: ANN401 - tokenizers or transformers, both duck-typed
    overlap: float | None = None,
) -> pl.DataFrame:
    """Cut each text into chunks of at most ``max_tokens`` tokens.

    Parameters
    ----------
    texts
        The texts (sections) to cut.
    max_tokens
        The token budget of a chunk.
    tokenizer
        A ``tokenizers.Tokenizer`` or a ``transformers`` tokenizer: tokens are counted
        with it, special tokens excluded (as semchunk counts them).
    overlap
        Share of a chunk repeated at the start of the next (``None``: no overlap).

    Returns
    -------
    polars.DataFrame
        One row per chunk (:data:`CHUNK_SCHEMA`): the index of its text (``section``), its
        index within it, its ``[start, end)`` span in the text, the text and its tokens.
    """
    from semchunk.semchunk import chunkerify  # noqa: PLC0415 - loaded with the corpus tools only

    if max_tokens < 8:
        msg = f"max_tokens must be at least 8 (a chunk holds a few words), got {max_tokens}"
        raise ValueError(msg)
    chunker: Any = chunkerify(tokenizer, max_tokens)  # its result type depends on flags
    rows: list[tuple[int, int, int, int, str]] = []
    for i, text in enumerate(texts):
        if not text.strip():
            continue
        chunks, spans = chunker(text, offsets=True, overlap=overlap)
        rows.extend(
            (i, j, start, end, chunk)
            for j, (chunk, (start, end)) in enumerate(zip(chunks, spans, strict=True))
        )
    counts = _counts(tokenizer, [r[4] for r in rows])
    return pl.DataFrame(
        [(*r, n) for r, n in zip(rows, counts, strict=True)], schema=CHUNK_SCHEMA, orient="row"
    )


def _counts(tokenizer: Any, texts: list[str]) -> list[int]:  # noqa: ANN401
    """Tokens of each text without special tokens, in one batched call."""
    if not texts:
        return []
    if hasattr(tokenizer, "encode_batch"):  # tokenizers: Rust, in parallel
        return [len(e.ids) for e in tokenizer.encode_batch(texts, add_special_tokens=False)]
    return [len(ids) for ids in tokenizer(texts, add_special_tokens=False)["input_ids"]]
