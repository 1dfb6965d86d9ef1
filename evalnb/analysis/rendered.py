"""A rendered HTML report: a path where one was written, a preview in a notebook."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path

from evalnb.lab.files import write_atomic

__all__ = ["Report"]


@dataclass(frozen=True)
class Report:
    """What :meth:`evalnb.Lab.report` returns.

    Usable as the path it was written to (``os.fspath``, ``str``); in a notebook cell it shows
    itself in a sandboxed frame; ``html`` holds the document. Printing it prints the path, not
    the whole document.
    """

    html: str = field(repr=False)
    path: Path | None = None

    @classmethod
    def written(cls, text: str, path: str | Path | None) -> Report:
        """Return the report of ``text``, written first (atomically) to ``path`` if given."""
        if path is None:
            return cls(text)
        write_atomic(path, text)
        return cls(text, Path(path))

    def __fspath__(self) -> str:
        if self.path is None:
            msg = "this report was not written to a file: pass a path to Lab.report(path)"
            raise TypeError(msg)
        return str(self.path)

    def __str__(self) -> str:
        return str(self.path) if self.path is not None else repr(self)

    def __repr__(self) -> str:
        where = str(self.path) if self.path is not None else "not written"
        return f"Report({where}, {len(self.html):,} characters)"

    def _repr_html_(self) -> str:
        # The document goes in a frame's srcdoc, escaped once more, sandboxed with no
        # permissions: its styles stay out of the notebook and nothing in it can run.
        return (
            f'<iframe sandbox="" title="evalnb report" style="width:100%;height:720px;'
            f'border:1px solid #ccc" srcdoc="{html.escape(self.html, quote=True)}"></iframe>'
        )
