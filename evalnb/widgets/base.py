"""What every evalnb widget shares: its bundled front end and a strict constructor."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import anywidget

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
    The bundle is given to anywidget as a path: in a source checkout with ``ANYWIDGET_HMR=1``,
    anywidget watches it and reloads open widgets when ``npm run dev`` (in ``widgets/``)
    rebuilds it.
    """

    _bundle: ClassVar[str]

    def __init_subclass__(cls, **kwargs: dict[str, object]) -> None:
        bundle = cls.__dict__.get("_bundle")
        # anywidget turns `_esm` and `_css` paths set on the class into watched file contents
        # (its own __init_subclass__, below). A bundle not built yet is reported when a widget
        # is made (see __init__), not when evalnb is imported.
        if bundle and all((_STATIC / f"{bundle}.{ext}").is_file() for ext in ("js", "css")):
            cls._esm = _STATIC / f"{bundle}.js"
            cls._css = _STATIC / f"{bundle}.css"
        super().__init_subclass__(**kwargs)

    def __init__(self, **kwargs: object) -> None:
        public = sorted(n for n in self.trait_names(sync=True) if not n.startswith("_"))
        unknown = sorted(k for k in kwargs if k not in self.trait_names())
        if unknown:
            msg = f"{type(self).__name__} got unknown argument(s) {unknown}; valid: {public}"
            raise TypeError(msg)
        if "_esm" not in type(self).__dict__:
            static_file(f"{self._bundle}.js")  # the bundle was not built: say how to build it
            static_file(f"{self._bundle}.css")
        super().__init__(**kwargs)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"
