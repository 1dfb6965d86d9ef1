"""Run code that needs evalnb and ragas together.

ragas' pins clash with our dev tools (rich), so ragas lives in ``.venv-peers``. A script
that needs both runs in this project's interpreter with the peers' site-packages appended
to its path: every package ours has is ours, ragas and what only it needs come from there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PEERS = ROOT / ".venv-peers" / "bin" / "python"
_LAUNCH = (
    "import runpy, sys; sys.path.append(sys.argv[1]); sys.argv = sys.argv[2:]; "
    "runpy.run_path(sys.argv[0], run_name='__main__')"
)


def peers_site() -> str:
    """Return the peers' site-packages folder (skips the test when there is none)."""
    if not PEERS.is_file():
        pytest.skip("the peers' environment .venv-peers is built by scripts/test")
    done = subprocess.run(
        [str(PEERS), "-c", "import ragas, site; print(site.getsitepackages()[0])"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        pytest.skip(".venv-peers has no ragas")
    return done.stdout.strip()


def run_with_ragas(script: str, *args: str, timeout: int = 600) -> object:
    """Run ``tests/<script>`` with evalnb and ragas; return the JSON it prints last."""
    cmd = [
        sys.executable,
        "-c",
        _LAUNCH,
        peers_site(),
        str(ROOT / "evalnb_testkit" / script),
        *args,
    ]
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "HF_HUB_OFFLINE": "1",
        "OPENAI_API_KEY": os.environ.get("OPENAI_API_KEY", "sk-loopback"),
        "RAGAS_DO_NOT_TRACK": "true",
    }
    done = subprocess.run(
        cmd, capture_output=True, text=True, timeout=timeout, check=False, cwd=ROOT, env=env
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
