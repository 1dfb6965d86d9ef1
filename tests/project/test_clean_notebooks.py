"""Tutorial notebooks are saved without outputs; anyone else's keep theirs (issue 55)."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from jupyter_server.services.contents.filemanager import FileContentsManager

from evalnb.widgets import clean_notebooks

ROOT = Path(__file__).resolve().parents[2]


def _run_notebook() -> dict[str, object]:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("1 + 1")
    cell.outputs = [
        nbformat.v4.new_output("execute_result", {"text/plain": "2"}, execution_count=1)
    ]
    cell.execution_count = 1
    nb.cells = [cell, nbformat.v4.new_markdown_cell("text")]
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    return {"type": "notebook", "format": "json", "content": json.loads(nbformat.writes(nb))}


def test_a_tutorial_is_saved_clean_and_another_notebook_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tutorials = tmp_path / "notebooks"
    tutorials.mkdir()
    monkeypatch.setattr(clean_notebooks, "TUTORIALS", tutorials.resolve())
    manager = FileContentsManager(root_dir=str(tmp_path))
    manager.pre_save_hook = clean_notebooks.strip_tutorial_outputs
    manager.save(_run_notebook(), "notebooks/01.ipynb")
    manager.save(_run_notebook(), "mine.ipynb")
    clean = json.loads((tutorials / "01.ipynb").read_text())
    assert clean["cells"][0]["outputs"] == [] and clean["cells"][0]["execution_count"] is None
    assert "widgets" not in clean["metadata"]
    kept = json.loads((tmp_path / "mine.ipynb").read_text())
    assert kept["cells"][0]["outputs"] and "widgets" in kept["metadata"]


def test_the_install_registers_the_hook_and_git_ignores_checkpoints() -> None:
    install = (ROOT / "scripts" / "install").read_text()
    assert "evalnb.widgets.clean_notebooks.strip_tutorial_outputs" in install
    assert ".ipynb_checkpoints/" in (ROOT / ".gitignore").read_text().splitlines()
    assert (ROOT / "notebooks").resolve() == clean_notebooks.TUTORIALS
