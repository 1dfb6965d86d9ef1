"""The documentation site: strict builds fail on what a reader would trip over.

``scripts/test`` builds the real site; these tests check that the build really fails on a
broken link, a missing anchor or an unknown generated section, and that the generated
sections say what the code says.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evalnb.io.tabular import FIELDS
from evalnb_testkit.paths import ROOT, script_module

MKDOCS = Path(sys.executable).with_name("mkdocs")


def _copy(tmp: Path) -> Path:
    site = tmp / "site"
    shutil.copytree(ROOT / "docs", site / "docs")
    (site / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "docs_hooks.py", site / "scripts")
    shutil.copy(ROOT / "mkdocs.yml", site)
    return site


def _build(site: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [str(MKDOCS), "build", "-d", str(site / "out")],
        cwd=site,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


@pytest.fixture(scope="module")
def unchanged_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The docs copied and built once, unchanged: the build every broken variant starts from."""
    if not MKDOCS.exists():
        pytest.skip("mkdocs is not installed (pip install 'evalnb[docs]')")
    site = _copy(tmp_path_factory.mktemp("docs"))
    built = _build(site)
    assert built.returncode == 0, "the unchanged docs must build:\n" + built.stderr[-2000:]
    return site


@pytest.mark.slow
@pytest.mark.xdist_group("docs_build")  # `unchanged_site` is built once: on one worker
@pytest.mark.parametrize(
    ("additions", "complaints"),
    [
        (["[gone](nowhere.md)"], ["nowhere.md"]),
        (["[gone](formats.md#no-such-section)"], ["no-such-section"]),
        (["<!-- evalnb:no_such_section -->"], ["unknown generated section 'no_such_section'"]),
    ],
)
def test_the_strict_build_fails_on(
    unchanged_site: Path, tmp_path: Path, additions: list[str], complaints: list[str]
) -> None:
    site = tmp_path / "site"
    shutil.copytree(unchanged_site, site, ignore=shutil.ignore_patterns("out"))
    index = site / "docs" / "index.md"
    extra = "".join(f"\n{a}\n" for a in additions)
    index.write_text(index.read_text(encoding="utf-8") + extra, encoding="utf-8")
    failed = _build(site)
    assert failed.returncode != 0
    said = failed.stdout + failed.stderr
    assert [c for c in complaints if c not in said] == []


def test_the_generated_sections_follow_the_code() -> None:
    hooks = script_module("docs_hooks")
    columns = hooks._columns()
    for field, names in FIELDS.items():
        row = next(line for line in columns.splitlines() if line.startswith(f"| `{field}` |"))
        assert ", ".join(f"`{n}`" for n in names) in row
    import evalnb

    catalog = hooks._catalog()
    assert all(f"### `{i}`" in catalog for i in evalnb.evaluators()["id"])
    cli = hooks._cli()
    assert "## `evalnb evaluate`" in cli and "--evaluator ID" in cli
    assert "### `evalnb calibrate export`" in cli


def test_an_undescribed_loader_field_stops_the_build(monkeypatch: pytest.MonkeyPatch) -> None:
    hooks = script_module("docs_hooks")
    monkeypatch.setitem(FIELDS, "new_field", ("new_field",))
    with pytest.raises(Exception, match=r"describe the loader fields \['new_field'\]"):
        hooks._columns()


def test_the_front_page_links_every_workflow_and_the_readme_links_getting_started() -> None:
    root = Path(__file__).resolve().parents[2]
    index = (root / "docs" / "index.md").read_text(encoding="utf-8")
    missing = [
        p.name
        for p in sorted((root / "docs" / "workflows").glob("*.md"))
        if f"(workflows/{p.name})" not in index
    ]
    assert missing == [], f"docs/index.md does not link {missing}"
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert "docs/getting-started.md" in readme
    for notebook in sorted((root / "notebooks").glob("*.ipynb")):
        assert notebook.name in readme, f"the README never names {notebook.name}"
