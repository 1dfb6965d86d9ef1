"""evalnb's Altair charts draw in a notebook with no network, and the user's charts as before.

Altair 6 writes Vega-Lite 6, which JupyterLab 4's built-in Vega renderer does not take, so
Altair's ``default`` renderer falls back to HTML that loads Vega from a CDN: offline, every
chart is an error. Altair's ``jupyter`` renderer with ``offline=True`` draws a chart in an
anywidget whose JavaScript comes from ``vl-convert`` (a dependency of evalnb), so it works in
JupyterLab, Notebook 7, VS Code and Colab without reaching the internet.

:func:`offline` gives one chart that renderer for its own display only, while the user has
chosen no renderer (Altair's ``default``); the renderer in force is never changed, so the
user's other charts draw as Altair draws them. It sits on the floor because every layer that
draws (``analysis``, ``diagnosis``) uses it; Altair is imported only when a chart is shown.
"""

from __future__ import annotations

from typing import Any, TypeVar

__all__ = ["offline"]

C = TypeVar("C")


def offline(chart: C) -> C:
    """Return ``chart`` (the same object) drawn offline when displayed; see the module docstring.

    Only this chart's own display changes (an attribute of the object, never of its class
    nor of Altair's registry): a chart the user derives from it (``chart.properties(...)``,
    ``chart + other``) is the user's, and draws with the renderer in force.
    """
    shown = type(chart)._repr_mimebundle_  # type: ignore[attr-defined]

    def drawn(*args: Any, **kwargs: Any) -> Any:  # noqa: ANN401 - Altair's own signature
        import altair as alt  # noqa: PLC0415 - a second to import; only when shown

        if alt.renderers.active != "default":  # the user chose a renderer: theirs draws
            return shown(chart, *args, **kwargs)
        # A context manager: the registry's state is restored once the display is made.
        with alt.renderers.enable("jupyter", offline=True):
            return shown(chart, *args, **kwargs)

    # Altair's charts keep attributes set the usual way as chart properties: this one
    # goes to the object itself, where Jupyter's display looks first.
    object.__setattr__(chart, "_repr_mimebundle_", drawn)
    return chart
