"""scripts/uv_pip.py hands uv the package sources pip is configured with, in pip's precedence."""

from __future__ import annotations

import itertools
import os
import sys
from pathlib import Path

import pytest

from evalnb_testkit.paths import script_module

UV_PIP = script_module("uv_pip")


def test_a_variable_beats_the_install_section_which_beats_global(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "pip.conf"
    config.write_text(
        "[global]\nfind-links = /from/global\nconstraint = /caps.txt\ntimeout = 60\n"
        "[install]\nfind-links = /from/install\n"
    )
    for name in [n for n in os.environ if n.startswith("PIP_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("PIP_CONFIG_FILE", str(config))
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "file:///one/simple https://two/simple")
    settings = UV_PIP.pip_settings(sys.executable)
    assert settings["find-links"] == "/from/install"
    assert settings["constraint"] == "/caps.txt"
    assert settings["extra-index-url"] == "file:///one/simple https://two/simple"
    monkeypatch.setenv("PIP_FIND_LINKS", "/from/env")
    assert UV_PIP.pip_settings(sys.executable)["find-links"] == "/from/env"


def test_each_source_becomes_a_uv_option_and_the_best_version_wins_across_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    settings = {
        "find-links": "/wheels /more-wheels",
        "extra-index-url": "file:///mirror/simple",
        "constraint": "/caps.txt",
        "index-url": "https://index/simple",
        "no-index": "false",
    }
    command = UV_PIP.uv_command("/env/bin/python", settings, ["-q", "numpy"])
    assert command[:5] == ["/env/bin/uv", "pip", "install", "--python", "/env/bin/python"]
    pairs = list(itertools.pairwise(command))
    assert ("--index-strategy", "unsafe-best-match") in pairs  # pip's choice, not the first index's
    assert ("--find-links", "/wheels") in pairs and ("--find-links", "/more-wheels") in pairs
    assert ("--extra-index-url", "file:///mirror/simple") in pairs
    assert ("--constraint", "/caps.txt") in pairs and (
        "--index-url",
        "https://index/simple",
    ) in pairs
    assert "--no-index" not in command and command[-2:] == ["-q", "numpy"]
    assert "--compile-bytecode" not in command  # the first import of a module writes it
    # Where no import may write bytecode, uv writes it all at install, as pip does.
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    assert "--compile-bytecode" in UV_PIP.uv_command("/env/bin/python", settings, [])
