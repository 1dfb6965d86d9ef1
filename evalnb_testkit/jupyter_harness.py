"""A real JupyterLab server on loopback, driven by Playwright with Debian's chromium.

The server runs with a private config/settings/workspace folder (nothing from the user's
home leaks in) and ``expose_app_in_browser`` so tests can run cells through JupyterLab's
own commands and read outputs from the notebook model, as a user's clicks would.

One server per test worker: it serves the worker's pytest temporary folder, and each test
gets a fresh page, its own JupyterLab workspace (no tabs carried over) and its own kernels,
shut down when the test ends. A JupyterLab start is several seconds of both cores; twenty
browser tests paid it twenty times.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(
    os.environ.get(
        "EVALNB_ARTIFACTS", Path(__file__).resolve().parents[1] / "out" / "test-artifacts"
    )
)


def require_browser() -> Any:
    """Return playwright's sync API, or skip when it or Debian chromium is missing."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed (EVALNB_BROWSER=1 bash scripts/install)")
    return sync_api


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def notebook(path: Path, cells: list[str]) -> Path:
    """Write a notebook of code cells with kernelspec metadata (else Lab asks for a kernel)."""
    nb = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "id": f"c{i}",
                "metadata": {},
                "outputs": [],
                "source": src,
            }
            for i, src in enumerate(cells)
        ],
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(nb), encoding="utf-8")
    return path


class JupyterLab:
    """One ``jupyter lab`` process serving ``root``; stop it with :meth:`stop`."""

    def __init__(self, root: Path, home: Path) -> None:
        self.root = root
        self.port = _free_port()
        self.token = secrets.token_hex(16)
        settings = home / "settings" / "@jupyterlab" / "apputils-extension"
        settings.mkdir(parents=True, exist_ok=True)
        # No news/update toasts covering the notebook.
        (settings / "notification.jupyterlab-settings").write_text(
            json.dumps({"fetchNews": "false", "checkForUpdates": False})
        )
        env = {
            **os.environ,
            "JUPYTER_CONFIG_DIR": str(home / "config"),
            "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
            "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
            "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        }
        self.log = (home / "jupyterlab.log").open("wb")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jupyterlab",
                "--no-browser",
                f"--port={self.port}",
                "--ServerApp.ip=127.0.0.1",
                f"--IdentityProvider.token={self.token}",
                f"--ServerApp.root_dir={root}",
                "--LabApp.expose_app_in_browser=True",
                "--ServerApp.port_retries=0",
                "--allow-root",
            ],
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.log.close()
                msg = f"jupyter lab exited with {self.proc.returncode}; see {self.log.name}"
                raise RuntimeError(msg)
            try:
                with urllib.request.urlopen(f"{self.url}/api/status?token={self.token}", timeout=2):
                    return
            except OSError:
                time.sleep(0.3)
        self.stop()
        msg = f"jupyter lab did not answer on {self.url} within 60 s; see {self.log.name}"
        raise RuntimeError(msg)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()

    def sessions(self) -> list[dict[str, Any]]:
        """Return the kernel sessions the server holds."""
        with urllib.request.urlopen(f"{self.url}/api/sessions?token={self.token}", timeout=10) as r:
            return list(json.loads(r.read()))

    def end_sessions(self) -> None:
        """Shut down every kernel session (what a test started, before the next one)."""
        for session in self.sessions():
            request = urllib.request.Request(
                f"{self.url}/api/sessions/{session['id']}?token={self.token}", method="DELETE"
            )
            with contextlib.suppress(OSError), urllib.request.urlopen(request, timeout=30):
                pass

    def open(self, page: Any, name: str, *, workspace: str | None = None) -> None:
        """Open notebook ``name`` and wait until its kernel is idle."""
        where = f"workspaces/{workspace}/tree" if workspace else "tree"
        page.goto(f"{self.url}/lab/{where}/{name}?token={self.token}&reset")
        page.wait_for_function("() => window.jupyterapp !== undefined", timeout=60_000)
        # wait_for_function polls a plain predicate (a Promise would count as true at once)
        page.wait_for_function(
            """() => {
                const w = window.__nb || window.jupyterapp.shell.currentWidget;
                if (!w || !w.sessionContext) return false;
                window.__nb = w;  // the notebook panel; focus moves but this stays
                const k = w.sessionContext.session && w.sessionContext.session.kernel;
                return !!k && k.status === 'idle' && w.content.widgets.length > 0;
            }""",
            timeout=90_000,
        )

    def run_cell(
        self, page: Any, index: int, *, timeout_ms: int = 120_000, expect_error: bool = False
    ) -> str:
        """Run cell ``index`` through JupyterLab's command; return its text output.

        A cell that raised fails the test, unless ``expect_error``: then the error's
        ``name: value`` is returned (and a cell that did not raise fails the test).
        """
        # Clear the count first: a restarted kernel counts from 1 again, so "the count
        # changed" would not tell that this run finished.
        page.evaluate(
            """(i) => { const nb = window.__nb.content;
                        nb.activeCellIndex = i; nb.widgets[i].model.executionCount = null; }""",
            index,
        )
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-cell')")
        page.wait_for_function(
            """(i) => { const w = window.__nb;
                const c = w.content.widgets[i].model;
                return c.executionCount !== null
                       && w.sessionContext.session.kernel.status === 'idle'; }""",
            arg=index,
            timeout=timeout_ms,
        )
        outputs = page.evaluate(
            "(i) => window.__nb.content.widgets[i].model.outputs.toJSON()",
            index,
        )
        errors = [o for o in outputs if o.get("output_type") == "error"]
        if expect_error:
            if not errors:
                pytest.fail(f"cell {index} was expected to raise but printed {outputs!r}")
            return f"{errors[0]['ename']}: {errors[0]['evalue']}"
        if errors:
            e = errors[0]
            pytest.fail(f"cell {index} raised {e['ename']}: {e['evalue']}")
        return "".join(_text(o) for o in outputs)

    def run_code(self, page: Any, code: str, **kw: Any) -> str:
        """Append a code cell with ``code``, run it, return its text output."""
        index = page.evaluate(
            """(code) => { const nb = window.__nb.content;
                const n = nb.model.cells.length;
                nb.model.sharedModel.insertCell(n, {cell_type: 'code', source: code});
                return n; }""",
            code,
        )
        return self.run_cell(page, index, **kw)


def _text(output: dict[str, Any]) -> str:
    if output.get("output_type") == "stream":
        text = output.get("text", "")
    else:
        text = output.get("data", {}).get("text/plain", "")
    return "".join(text) if isinstance(text, list) else str(text)


def launch(playwright: Any) -> Any:
    """Launch Debian chromium headless with the flags these machines need."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)


LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}


def _is_loopback(url: str) -> bool:
    """Whether ``url`` stays on this machine (``data:`` and loopback ``blob:`` URLs do)."""
    if url.startswith(("data:", "about:")):
        return True
    if url.startswith("blob:"):
        url = url[len("blob:") :]
    return urllib.parse.urlsplit(url).hostname in LOOPBACK


class Traffic:
    """Records what a page asks of the network and what it logs as an error.

    Requests that would leave the loopback address are aborted (so a test never depends on a
    network it does not have) and recorded; :meth:`check` fails the test on any of them and
    on any console error or uncaught page exception.
    """

    def __init__(self, page: Any) -> None:
        self.outside: list[str] = []
        self.errors: list[str] = []
        page.route("**/*", self._route)
        page.on("websocket", lambda ws: self._seen(ws.url))
        page.on("console", lambda m: m.type == "error" and self.errors.append(f"console: {m.text}"))
        page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))

    def _seen(self, url: str) -> bool:
        if _is_loopback(url):
            return True
        self.outside.append(url)
        return False

    def _route(self, route: Any) -> None:
        if self._seen(route.request.url):
            route.continue_()
        else:
            route.abort()

    def check(self) -> None:
        problems = [f"request leaving loopback: {u}" for u in self.outside] + self.errors
        if problems:
            pytest.fail("the page was not clean:\n" + "\n".join(problems))


_SHARED: dict[Path, JupyterLab] = {}
_WORKSPACES = itertools.count()


def _serving_root(root: Path) -> Path | None:
    """Return the worker's pytest temporary folder above ``root`` (None: not under one)."""
    for folder in [root, *root.parents]:
        if folder.name.startswith("popen-gw") or folder.parent.name.startswith("pytest-of-"):
            return folder
    return None


def _stop_shared() -> None:
    for server in _SHARED.values():
        server.stop()
    _SHARED.clear()


atexit.register(_stop_shared)


class View:
    """The worker's server as one test sees it: notebook names relative to the test's root."""

    def __init__(self, server: JupyterLab, prefix: str, workspace: str) -> None:
        self.server = server
        self.prefix = prefix
        self.workspace = workspace

    def open(self, page: Any, name: str) -> None:
        """Open notebook ``name`` (under the test's root) in the test's own workspace."""
        self.server.open(page, f"{self.prefix}{name}", workspace=self.workspace)

    def run_cell(self, page: Any, index: int, **kw: Any) -> str:
        """Run cell ``index`` (see :meth:`JupyterLab.run_cell`)."""
        return self.server.run_cell(page, index, **kw)

    def run_code(self, page: Any, code: str, **kw: Any) -> str:
        """Append and run a cell (see :meth:`JupyterLab.run_code`)."""
        return self.server.run_code(page, code, **kw)


def _server_for(root: Path) -> tuple[JupyterLab, str, bool]:
    """Return the worker's shared server and ``root``'s path on it; or a server of its own."""
    base = _serving_root(root.resolve())
    if base is None:
        return JupyterLab(root, root / ".jupyter"), "", True
    server = _SHARED.get(base)
    if server is None or server.proc.poll() is not None:
        server = _SHARED[base] = JupyterLab(base, base / ".jupyter-shared")
    relative = root.resolve().relative_to(base).as_posix()
    return server, f"{relative}/" if relative != "." else "", False


@contextlib.contextmanager
def lab_page(root: Path, *, width: int = 1300, height: int = 1000) -> Iterator[tuple[View, Any]]:
    """A JupyterLab serving ``root`` and a chromium page on it, checked clean at the end."""
    sync_api = require_browser()
    server, prefix, own = _server_for(root)
    view = View(server, prefix, f"test{next(_WORKSPACES)}")
    try:
        with sync_api.sync_playwright() as pw:
            browser = launch(pw)
            page = browser.new_page(viewport={"width": width, "height": height})
            traffic = Traffic(page)
            yield view, page
            traffic.check()
            browser.close()
    finally:
        if own:
            server.stop()
        else:
            server.end_sessions()
