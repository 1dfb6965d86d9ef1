"""ppi-python's estimates, computed in a process of its own (its top-level ``tests`` package
would shadow ours): the reference the monitor's and the calibration's PPI are checked against.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from evalnb_testkit.paths import ROOT

PPI = ROOT / ".venv-ppi"

_SCRIPT = """\
import json, sys, numpy as np
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate
alpha = float(sys.argv[1])
out = []
for c in json.load(sys.stdin):
    y, f, u = (np.array(c[k]) for k in ('y', 'f', 'u'))
    lo, hi = ppi_mean_ci(y, f, u, alpha=alpha)
    est = ppi_mean_pointestimate(y, f, u)
    out.append([float(np.ravel(est)[0]), float(np.ravel(lo)[0]), float(np.ravel(hi)[0])])
print(json.dumps(out))
"""


def ppi_python_means(cases: list[dict[str, list[float]]], *, alpha: float) -> list[list[float]]:
    """Return ppi-python's ``[estimate, low, high]`` of a mean for each ``{"y", "f", "u"}`` case.

    Skips the calling test when ``scripts/test`` has not installed ppi-python into
    ``.venv-ppi``.
    """
    if not (PPI / "ppi_py").is_dir():
        pytest.skip("ppi-python is installed into .venv-ppi by scripts/test")
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(alpha)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(PPI)},
        check=True,
        timeout=300,
        cwd=PPI,  # not the repository: ppi-python's own `tests` package must not meet ours
    )
    return json.loads(done.stdout)
