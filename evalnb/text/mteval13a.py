"""The character replacements of mteval-v13a (sacrebleu's tokenizer_13a), in its order.

Kept apart so that both 13a tokenizers — the Polars one (:mod:`evalnb.text.ngram`) and the
compiled one over UTF-8 buffers (:mod:`evalnb.text.rules13a`) — read one table without
importing each other.
"""

from __future__ import annotations

__all__ = ["REPLACEMENTS_13A"]

REPLACEMENTS_13A = (
    ("<skipped>", ""),
    ("-\n", ""),
    ("\n", " "),
    ("&quot;", '"'),
    ("&amp;", "&"),
    ("&lt;", "<"),
    ("&gt;", ">"),
)
