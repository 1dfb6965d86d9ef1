from __future__ import annotations

import functools
import inspect
import os
import re
import subprocess
import tempfile
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

from evalnb_testkit import budget  # noqa: F401 - loads the Hypothesis profile (ci or fast)
from evalnb_testkit.judge_server import local_judge  # noqa: F401 - the real local LLM judge
from evalnb_testkit.paths import SHARED
from evalnb_testkit.pg_server import pg_server  # noqa: F401 - the PostgreSQL fixture, everywhere

# Tests never reach a model hub, and keep their embedding cache out of the home folder.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("EVALNB_CACHE_DIR", tempfile.mkdtemp(prefix="evalnb-cache-"))
# Two workers, their kernels, servers and subprocesses share two cores: OpenMP's threads
# (torch's, llama.cpp's) would spin between parallel regions, holding a core another process
# is waiting for. Waiting passively cut the CPU time of two encoders side by side by 30 %
# (41 to 30 s each) at the same wall time. Read when torch loads, so set before any test
# imports it, and inherited by every process a test starts.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


# -- tiers ----------------------------------------------------------------------------------
# Plain `pytest` runs the fast tier (pyproject's addopts deselect the others); `bash
# scripts/test` runs every tier (-m ""). A test's tier follows from what it starts, read
# off its own code and its fixtures here, so a new test lands in its tier by itself:
# `services` starts PostgreSQL, Ray, a Jupyter kernel, a process under resource limits, the
# peers' environments, mkdocs or an install; `browser` drives JupyterLab in Chromium;
# `soak` kills processes again and again. Long computations (simulations, suites generated
# from a real corpus, the whole demo) say `slow` themselves.
_TIERS: dict[str, tuple[str, ...]] = {
    "browser": ("require_browser(", "lab_page("),
    "soak": ("soak(", "SIGKILL", "signal.SIGTERM", "kill_at"),
    "services": (
        "start_server(",
        "LocalServer",
        'engine="ray"',
        "RayEngine",
        "venv-peers",
        "PEERS",
        "with_peers",
        "venv-ppi",
        "ppi_python_means(",
        "mkdocs",
        "scripts/install",
        "bounded_fuzz",
        "setrlimit",
        "run_notebook",
        "nbclient",
        "ExecutePreprocessor",
        "jupyter_harness",
        "LoopbackLLM",
        "run_with_ragas(",
        "_peer(",
        "subprocess.run([sys.executable",
    ),
}
_SERVICE_FIXTURES = {"pg_server", "cluster", "local_judge"}


@functools.cache
def _code_of(function: object) -> str:
    try:
        return inspect.getsource(function)  # type: ignore[arg-type]
    except (OSError, TypeError):
        return ""


# The order tests are handed to the workers in: a group (one worker runs all of it), then
# the browser, soak, slow and services tiers, the fast tests last. The longest work starts
# first and the short tests fill the end, so neither worker idles while the other finishes
# a ten-minute group. Within a rank pytest-randomly's shuffle stands (the sort is stable).
_RANKS = ("xdist_group", "browser", "soak", "slow", "services")


def _rank(item: pytest.Item) -> int:
    return next((i for i, mark in enumerate(_RANKS) if item.get_closest_marker(mark)), len(_RANKS))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test with the tier of what it starts (see ``_TIERS``); longest work first."""
    del config
    for item in items:
        function = getattr(item, "function", None)
        if function is None:  # a doctest: fast
            continue
        code = _code_of(function)
        tiers = {tier for tier, needles in _TIERS.items() if any(n in code for n in needles)}
        if _SERVICE_FIXTURES & set(getattr(item, "fixturenames", ())):
            tiers.add("services")
        for tier in sorted(tiers):
            item.add_marker(tier)
    items.sort(key=_rank)


# What a service's start runs: a fast-tier test that starts one was mis-tiered (its needle
# above missed), and plain `pytest` would grow past its minutes without anyone seeing why.
_SERVICE_PROGRAM = re.compile(
    r"(?:^|[/\s.])(pg_ctl|initdb|postgres|raylet|gcs_server|ipykernel_launcher|jupyter-lab|"
    r"jupyter_server|chromium|playwright|llama_cpp\.server)(?:\b|$)"
)
_SLOW_TIERS = ("services", "browser", "soak", "slow")


@pytest.fixture(autouse=True)
def _fast_tier_tripwire(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail a fast-tier test the moment it starts PostgreSQL, Ray, a kernel, Chromium or llama.cpp."""
    if any(request.node.get_closest_marker(tier) for tier in _SLOW_TIERS):
        return
    start = subprocess.Popen.__init__

    def guarded(self: subprocess.Popen[bytes], args: object, *rest: object, **kw: object) -> None:
        words = args if isinstance(args, list | tuple) else [args]
        found = _SERVICE_PROGRAM.search(" ".join(str(w) for w in words))
        if found:
            pytest.fail(
                f"{request.node.nodeid} is in the fast tier but starts {found[1]}: add what it "
                "calls to tests/conftest.py's _TIERS needles (or mark it services)",
                pytrace=False,
            )
        start(self, args, *rest, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(subprocess.Popen, "__init__", guarded)


@pytest.hookimpl(trylast=True)  # after xdist's own hook has named the groups
def pytest_collection_finish(session: pytest.Session) -> None:
    """Fail when ``--dist loadgroup`` does not take effect: a group's server would start twice.

    xdist groups tests by appending ``@group`` to their node ids; a pytest that stores ids
    elsewhere (9.2) leaves them unchanged and every worker starts its own PostgreSQL, Ray
    cluster and local judge, doubling the slowest setups without any test failing.
    """
    if not getattr(session.config.option, "loadgroup", False):
        return
    lost = [
        i.nodeid
        for i in session.items
        if i.get_closest_marker("xdist_group") and "@" not in i.nodeid
    ]
    if lost:
        msg = (
            f"pytest-xdist's --dist loadgroup did not group {len(lost)} test(s) (e.g. {lost[0]}): "
            "this pytest/xdist pair does not rename node ids; install the pins of "
            "pyproject.toml's dev extra (bash scripts/install)"
        )
        raise pytest.UsageError(msg)


# Polars raises its deprecations from Rust: under ``filterwarnings = error`` such a warning is
# printed to stderr and swallowed instead of raised, so the setting alone never sees it. Python
# itself prints a warning after its file and line, never at the start of a line.
_SWALLOWED_WARNING = re.compile(r"^(\w*Warning): (.*)$", re.MULTILINE)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Fail a passing test whose captured stderr shows a warning that was printed, not raised."""
    report: pytest.TestReport = yield
    if report.when == "call" and report.passed:
        found = _SWALLOWED_WARNING.search(report.capstderr)
        if found:
            report.outcome = "failed"
            report.longrepr = (
                f"{item.nodeid}: a {found[1]} was printed to stderr instead of raised "
                f"(filterwarnings = error cannot see it): {found[2]!r}; fix its cause"
            )
    return report


@pytest.fixture(scope="module", autouse=True)
def _module_embedding_state(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Give each test module an empty embedding cache; the encoder loads once per worker.

    A vector read from the cache equals a fresh one to about 1e-7 only (the forward pass
    depends on the batch a text was padded in), and topic models, clusters and fitted
    thresholds can turn on such a difference: with one cache per process a module's results
    depended on which modules ran before it. The vectors are what must not carry over, not
    the model: each module starts with an empty memory and cache folder, the model stays.
    """
    from evalnb.models.encoder import restart_vector_caches

    before = os.environ["EVALNB_CACHE_DIR"]
    os.environ["EVALNB_CACHE_DIR"] = str(tmp_path_factory.mktemp("evalnb-cache"))
    restart_vector_caches()
    yield
    os.environ["EVALNB_CACHE_DIR"] = before
    restart_vector_caches()


@pytest.fixture
def h2o_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"H2O reference data not found at {SHARED} (../shared absent)")
    return SHARED
