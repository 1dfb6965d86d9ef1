"""The package layout keeps the public API: README names resolve, nothing is shadowed."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import re
from pathlib import Path

import pytest

import evalnb
from evalnb_testkit.paths import ROOT

# evalnb.__all__ before the package was split into subpackages: none may disappear.
PUBLIC_BEFORE_LAYOUT = {
    "FORMATS",
    "SCHEMAS",
    "TABLES",
    "ChatResult",
    "ConditionError",
    "EvalnbError",
    "Eye",
    "FailureClusters",
    "InputError",
    "LLMClient",
    "Lab",
    "Labeler",
    "RichTable",
    "StoreError",
    "TopicModel",
    "Weakness",
    "__version__",
    "detect_format",
    "evaluate",
    "evaluators",
    "eye",
    "labeler",
    "load",
    "open",
    "pairwise",
    "run_suite",
    "table",
    "topics",
    "transforms",
    "weakness",
}


def _readme_code() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    code = "\n".join(re.findall(r"```python\n(.*?)```", text, flags=re.S))
    return re.sub(r'"[^"\n]*"', '""', code)  # file names such as "lab.duckdb" are no API


def test_every_public_name_of_before_the_layout_is_still_exported() -> None:
    # Exported here, or moved to a door that exports it and still answering here with a
    # DeprecationWarning that names the door.
    for name in PUBLIC_BEFORE_LAYOUT - set(evalnb.__all__):
        with pytest.warns(DeprecationWarning, match=r"is now evalnb\.(\w+)\.") as seen:
            value = getattr(evalnb, name)
        door = re.search(r"is now evalnb\.(\w+)\.", str(seen[0].message)).group(1)  # type: ignore[union-attr]
        module = importlib.import_module(f"evalnb.{door}")
        assert name in module.__all__ and getattr(module, name) is value
    for name in evalnb.__all__:
        assert hasattr(evalnb, name), name


def test_readme_names_resolve() -> None:
    code = _readme_code()
    module_names = set(re.findall(r"\bevalnb\.(\w+)", code))
    lab_methods = set(re.findall(r"\blab\.(\w+)", code))
    assert len(module_names) > 5 and len(lab_methods) > 20  # the README was read
    assert sorted(n for n in module_names if not hasattr(evalnb, n)) == []
    assert sorted(m for m in lab_methods if not hasattr(evalnb.Lab, m)) == []
    spaced = set(re.findall(r"\blab\.(\w+)\.(\w+)\(", code))
    assert len(spaced) > 5
    assert sorted(f"{a}.{b}" for a, b in spaced if not hasattr(getattr(evalnb.Lab, a), b)) == []


def test_importing_every_module_rebinds_no_public_name() -> None:
    # A subpackage named like a public function (evalnb.evaluators(), evalnb.weakness())
    # would replace it, or be replaced by it, depending on import order.
    before = {name: getattr(evalnb, name) for name in evalnb.__all__}
    for info in pkgutil.walk_packages(evalnb.__path__, "evalnb."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)
    assert {name: getattr(evalnb, name) for name in evalnb.__all__} == before
    assert callable(evalnb.evaluators) and callable(evalnb.weakness)


def test_every_subpackage_says_what_it_holds() -> None:
    for info in pkgutil.iter_modules(evalnb.__path__):
        if info.ispkg:
            doc = importlib.import_module(f"evalnb.{info.name}").__doc__
            assert doc and len(doc.split()) >= 8, info.name


def test_lower_layers_hand_back_the_facade() -> None:
    import polars as pl

    prompt = "Which account has the lowest fee, and which one pays the highest interest rate?"
    lab = evalnb.load(pl.DataFrame({"prompt": [prompt], "expected": ["a b"], "actual": ["a c"]}))
    assert type(lab) is evalnb.Lab
    scored = evalnb.evaluate(lab, ["rouge"], progress=False)
    assert type(scored) is evalnb.Lab and type(scored.merge(lab)) is evalnb.Lab
    assert type(lab.robustness.perturb("synonym", seed=1)) is evalnb.Lab


def test_no_test_or_bench_reads_the_shared_folder_but_the_h2o_reference_labs() -> None:
    """A user's clone has no ``../shared``: only the H2O reference labs may come from there
    (``evalnb_testkit/paths.py``, whose tests skip with a reason without them). ``bench/gpu_check.sh``
    names the workplace's GPU bundle script in its instructions, and reads no data."""
    root = Path(__file__).resolve().parents[2]
    # A path into it: "../shared/...", or "shared" joined as a path component.
    naming = re.compile(r"\.\./shared/|[\"']shared[\"']\s*[/,)]|/\s*[\"']shared[\"']")
    allowed = {"evalnb_testkit/paths.py", "bench/gpu_check.sh", "tests/project/test_layout.py"}
    found = sorted(
        str(path.relative_to(root))
        for folder in ("tests", "evalnb_testkit", "bench")
        for path in (root / folder).rglob("*")
        if path.is_file()
        and path.suffix in (".py", ".sh", ".json", ".txt", ".md", "")
        and naming.search(path.read_text(encoding="utf-8", errors="replace"))
    )
    assert [f for f in found if f not in allowed] == []
    paths = (root / "evalnb_testkit" / "paths.py").read_text(encoding="utf-8")
    assert '"shared" / "data" / "h2o"' in paths  # the reference labs, and nothing else there
    assert paths.count('"shared"') == 1


def test_no_module_imports_a_private_name_of_another() -> None:
    """What another module calls has a public name (the house style): ``from x import _y`` is refused."""
    import ast

    root = Path(__file__).resolve().parents[2]
    found = []
    for folder in ("evalnb", "evalnb_testkit", "tests", "bench", "scripts"):
        for path in sorted((root / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                names: list[str] = []
                if isinstance(node, ast.ImportFrom):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.Import):
                    names = [part for a in node.names for part in a.name.split(".")]
                found += [
                    f"{path.relative_to(root)}:{node.lineno}: {name}"
                    for name in names
                    if name.startswith("_") and not name.startswith("__")
                ]
    assert found == []


def test_evaluation_keeps_at_most_nine_modules_beside_its_drawers() -> None:
    """The contract, the user's door (``custom.py``) and the runners only; an evaluator
    family goes into a drawer of ``evaluation/families`` (whose imports the
    ``family-drawers`` contract checks)."""
    folder = Path(evalnb.__file__).parent / "evaluation"
    modules = sorted(p.name for p in folder.glob("*.py"))
    assert len(modules) <= 9, modules
    drawers = sorted(
        p.name for p in (folder / "families").iterdir() if (p / "__init__.py").exists()
    )
    assert drawers == ["agents", "judges", "models", "retrieval", "text"]


def test_the_formatter_formats_everything() -> None:
    """No ``# fmt: skip``: a table the formatter lays out one item a line is still a table."""
    root = Path(__file__).resolve().parents[2]
    found = [
        f"{path.relative_to(root)}:{n}"
        for folder in ("evalnb", "evalnb_testkit", "tests", "bench")
        for path in sorted((root / folder).rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if line.rstrip().endswith(tuple(f"fmt: {word}" for word in ("skip", "off")))
    ]
    assert found == []


def test_the_test_tree_mirrors_the_package_and_helpers_live_in_the_testkit() -> None:
    """``tests/<subpackage>/test_*.py`` for each of evalnb's subpackages (``tests/project``:
    the repository's own checks: docs, README, notebooks, layout); helpers only in
    ``evalnb_testkit``, which nothing installed can shadow; nobody imports from ``tests``."""
    import ast

    root = Path(__file__).resolve().parents[2]
    subpackages = {p.parent.name for p in (root / "evalnb").glob("*/__init__.py")}
    folders = {p.name for p in (root / "tests").iterdir() if p.is_dir() and p.name[0] not in "._"}
    assert folders - subpackages == {"project"}, sorted(folders - subpackages)
    loose = sorted(p.name for p in (root / "tests").glob("*.py") if p.name != "conftest.py")
    assert loose == [], "tests/ holds conftest.py and the folders; helpers go to evalnb_testkit"
    helpers = sorted(
        str(p.relative_to(root))
        for p in (root / "tests").rglob("*.py")
        if p.name != "conftest.py" and not p.name.startswith("test_")
    )
    assert helpers == []
    names = [p.stem for p in (root / "tests").rglob("test_*.py")]
    assert len(names) == len(set(names)), "test modules are imported by their base name"
    from_tests = []
    for folder in ("evalnb", "evalnb_testkit", "tests", "bench", "scripts"):
        for path in sorted((root / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                module = node.module if isinstance(node, ast.ImportFrom) else None
                imported = [a.name for a in node.names] if isinstance(node, ast.Import) else []
                if any(m == "tests" or m.startswith("tests.") for m in [module or "", *imported]):
                    from_tests.append(f"{path.relative_to(root)}:{node.lineno}")
    from_tests += [
        p.name for p in (root / "notebooks").glob("*.ipynb") if "from tests." in p.read_text()
    ]
    assert from_tests == []
    spec = importlib.util.find_spec("evalnb_testkit")
    assert spec is not None and str(spec.origin).startswith(str(root))


def test_the_doors_open_on_the_objects_themselves() -> None:
    """``evalnb.judges``, ``evalnb.decisions``, ``evalnb.testing``: real modules, no wrappers."""
    import importlib

    from evalnb.analysis import decide, estimate
    from evalnb.api import testing
    from evalnb.judge_reliability import lights

    doors = {
        name: importlib.import_module(f"evalnb.{name}")
        for name in ("judges", "decisions", "testing")
    }
    assert doors["judges"].BOUNDS is lights.BOUNDS and doors["judges"].PRICES is estimate.PRICES
    assert doors["decisions"].decide is decide.decide
    assert doors["testing"].assert_not_worse is testing.assert_not_worse
    for module in doors.values():
        assert sorted(module.__all__) == sorted(set(module.__all__))
        assert all(hasattr(module, name) for name in module.__all__)
    # The deep paths the docs once named, each with its door on its subpackage.
    from evalnb.calibration import bundle_check
    from evalnb.team import local_server

    assert evalnb.calibration.seal is bundle_check.seal
    assert evalnb.team.LocalServer is local_server.LocalServer
    assert evalnb.monitoring.OTLPJsonFileExporter.__module__ == "evalnb.monitoring.otlp_file"
    deep = re.compile(r"local_server import LocalServer|otlp_file import|bundle_check\.seal")
    pages = [
        ROOT / "README.md",
        *(ROOT / "docs").rglob("*.md"),
        *(ROOT / "notebooks").glob("*.ipynb"),
    ]
    assert [p.name for p in pages if deep.search(p.read_text(encoding="utf-8"))] == []


def test_a_fast_tier_test_that_starts_a_service_fails_at_once() -> None:
    import subprocess

    with pytest.raises(pytest.fail.Exception, match="fast tier but starts pg_ctl"):
        subprocess.Popen(["/usr/lib/postgresql/15/bin/pg_ctl", "--version"])
    with pytest.raises(pytest.fail.Exception, match=r"starts llama_cpp\.server"):
        subprocess.Popen(["python", "-m", "llama_cpp.server", "--model", "m.gguf"])
    done = subprocess.run(["python3", "-c", "print(1)"], capture_output=True, check=True)
    assert done.stdout.strip() == b"1"  # any other program runs as before


def test_the_testkit_imports_no_bench() -> None:
    """``bench/`` builds on the testkit; the testkit never on a bench (the arrow goes one way)."""
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in sorted((ROOT / "evalnb_testkit").rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.match(r"\s*(from bench[.\s]|import bench\b)", line)
    ]
    assert found == []
