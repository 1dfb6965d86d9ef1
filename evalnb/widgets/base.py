"""What every evalnb widget shares: its bundled front end and a strict constructor."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import anywidget
import traitlets

__all__ = ["EvalWidget", "static_file"]

# The esbuild bundles live in evalnb/static (pyproject: build_dir), beside the subpackages.
_STATIC = Path(__file__).parent.parent / "static"


def static_file(name: str) -> Path:
    """Path of a bundled front-end file, with a clear error when the bundle was not built."""
    path = _STATIC / name
    if not path.is_file():
        msg = (
            f"the widget bundle {path} is missing: evalnb was installed without building its "
            "front end; reinstall with `pip install -e .` (needs node and npm) or run "
            "`npm run build` in widgets/"
        )
        raise FileNotFoundError(msg)
    return path


class EvalWidget(anywidget.AnyWidget):
    """Base widget: loads its bundle, refuses unknown keyword arguments instead of ignoring them.

    A subclass names its bundle in ``_bundle`` (``evalnb/static/<_bundle>.js`` and ``.css``).
    """

    _bundle: ClassVar[str]
    _esm = traitlets.Any().tag(sync=True)
    _css = traitlets.Any().tag(sync=True)

    def __init__(self, **kwargs: object) -> None:
        public = sorted(n for n in self.trait_names(sync=True) if not n.startswith("_"))
        unknown = sorted(k for k in kwargs if k not in self.trait_names())
        if unknown:
            msg = f"{type(self).__name__} got unknown argument(s) {unknown}; valid: {public}"
            raise TypeError(msg)
        super().__init__(
            _esm=static_file(f"{self._bundle}.js").read_text(encoding="utf-8"),
            _css=static_file(f"{self._bundle}.css").read_text(encoding="utf-8"),
            **kwargs,
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"
