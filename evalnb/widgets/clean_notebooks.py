"""Save this repository's tutorial notebooks without their outputs, so running them leaves git clean.

``scripts/install`` registers :func:`strip_tutorial_outputs` as JupyterLab's pre-save hook
in the virtual environment (``.venv/etc/jupyter/jupyter_server_config.d``). It touches only
the notebooks in the ``notebooks/`` folder beside the evalnb package of an editable install
(the repository's own, committed without outputs); a user's notebooks anywhere else are
saved as they are. Widgets' saved state goes too: it is outputs by another name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["TUTORIALS", "strip_tutorial_outputs"]

TUTORIALS = Path(__file__).resolve().parents[2] / "notebooks"
"""The repository's tutorial notebooks (absent from an installed wheel: the hook is then a no-op)."""


def strip_tutorial_outputs(
    model: dict[str, Any],
    path: str,
    contents_manager: object,
    **_: object,
) -> None:
    """Clear outputs, execution counts and widget state of a tutorial notebook being saved."""
    if model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    root = Path(getattr(contents_manager, "root_dir", ".")).resolve()
    if (root / path).resolve().parent != TUTORIALS:
        return
    content = model["content"]
    content.get("metadata", {}).pop("widgets", None)
    for cell in content.get("cells", []):
        cell.get("metadata", {}).pop("execution", None)
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
