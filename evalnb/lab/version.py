"""The installed evalnb version (in the bottom layer, so any package may read it)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ["__version__"]

try:
    __version__ = version("evalnb")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"
