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
    from collections.abc import Callable, Sequence

__all__ = ["CHUNK_SCHEMA", "chunk_texts"]

CHUNK_SCHEMA = pl.Schema(
    {"section": pl.Int64(), "chunk": pl.Int64(), "start": pl.Int64(), "end": pl.Int64(),
     "text": pl.String(), "n_tokens": pl.Int64()}
)  # fmt: skip


def chunk_texts(
    texts: Sequence[str],
    *,
    max_tokens: int,
    count_tokens: Callable[[str], int] | Any,  # noqa: ANN401 - a counter or a tokenizer
    overlap: float | None = None,
) -> pl.DataFrame:
    """Cut each text into chunks of at most ``max_tokens`` tokens.

    Parameters
    ----------
    texts
        The texts (sections) to cut.
    max_tokens
        The token budget of a chunk.
    count_tokens
        A function from text to its token count, or a ``tokenizers.Tokenizer`` /
        ``transformers`` tokenizer (semchunk counts with it, special tokens excluded).
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
    chunker: Any = chunkerify(count_tokens, max_tokens)  # its result type depends on flags
    counter = (
        count_tokens if callable(count_tokens) and not hasattr(count_tokens, "encode") else None
    )
    rows: list[tuple[int, int, int, int, str, int]] = []
    for i, text in enumerate(texts):
        if not text.strip():
            continue
        chunks, spans = chunker(text, offsets=True, overlap=overlap)
        for j, (chunk, (start, end)) in enumerate(zip(chunks, spans, strict=True)):
            n = counter(chunk) if counter is not None else _count(count_tokens, chunk)
            rows.append((i, j, start, end, chunk, n))
    return pl.DataFrame(rows, schema=CHUNK_SCHEMA, orient="row")


def _count(tokenizer: Any, text: str) -> int:  # noqa: ANN401 - tokenizers or transformers
    """Tokens of ``text`` without special tokens, as semchunk counts them."""
    encoded = tokenizer.encode(text, add_special_tokens=False)
    ids = getattr(encoded, "ids", encoded)
    return len(ids)
