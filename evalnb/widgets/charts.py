"""Altair charts that render in a notebook with no network.

Altair 6 writes Vega-Lite 6, which JupyterLab 4's built-in Vega renderer does not take, so
Altair's ``default`` renderer falls back to HTML that loads Vega from a CDN: offline, every
chart is an error. Altair's own ``jupyter`` renderer with ``offline=True`` draws the chart in
an anywidget whose JavaScript comes from ``vl-convert`` (a dependency of evalnb), so it works
in JupyterLab, Notebook 7, VS Code and Colab without reaching the internet.

Inside a Jupyter kernel, importing evalnb selects that renderer, unless the user already chose
another one. Importing Altair costs about a second, so when it is not imported yet the switch
waits for its import instead of forcing it.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import ModuleType

__all__ = ["prefer_offline_charts"]


def _switch(alt: ModuleType) -> None:
    # "default" is what Altair enables at import: anything else is the user's choice.
    if alt.renderers.active == "default":
        alt.renderers.enable("jupyter", offline=True)


class _SwitchAfterImport(importlib.abc.Loader):
    """Runs Altair's own loader, then :func:`_switch` on the finished module."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        _switch(module)


class _WatchAltair(importlib.abc.MetaPathFinder):
    """Finds nothing itself; wraps the loader of the first ``import altair``, then leaves."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "altair":
            return None
        # Ask the finders after this one, as the import system would (editable installs
        # and zip imports have their own finders).
        for finder in sys.meta_path:
            spec = None if finder is self else finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _SwitchAfterImport(spec.loader)
                # Safe while the import system walks sys.meta_path: returning a spec ends it.
                sys.meta_path.remove(self)
                return spec
        return None


def prefer_offline_charts() -> None:
    """Make Altair charts render offline in this Jupyter kernel (no-op outside a kernel).

    Undo with ``alt.renderers.enable("default")``; a renderer enabled before evalnb was
    imported is left as it is.
    """
    if "ipykernel" not in sys.modules:
        return
    if "altair" in sys.modules:
        _switch(sys.modules["altair"])
    elif not any(isinstance(f, _WatchAltair) for f in sys.meta_path):
        sys.meta_path.insert(0, _WatchAltair())
