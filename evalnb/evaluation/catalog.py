"""The evaluator catalog: every family imported, looked up by id, listed as a frame.

The families (:mod:`evalnb.evaluation.families`) register themselves through
:mod:`evalnb.evaluation.base` when imported; this module finds and imports them all by
walking the package (lazily, so ``import evalnb`` stays light: heavy ones load their models
only when they score), then the modules installed packages name in the
``evalnb.evaluators`` entry point group (a user's own evaluators, :mod:`evalnb.evaluation.custom`),
and is the only module of the contract and the runners that does (the ``runners-no-family``
contract in ``pyproject.toml``).
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import json
import pkgutil
import warnings
from typing import TYPE_CHECKING

import polars as pl

from evalnb.evaluation.base import DOMAINS, registered

if TYPE_CHECKING:
    from collections.abc import Mapping

    from evalnb.evaluation.base import Evaluator

__all__ = ["ENTRY_POINTS", "all_evaluators", "catalog", "get_evaluator"]


def get_evaluator(evaluator_id: str) -> type[Evaluator]:
    """Return the evaluator class registered as ``evaluator_id``."""
    _load_catalog()
    known = registered()
    if evaluator_id not in known:
        msg = f"unknown evaluator {evaluator_id!r}; expected one of {sorted(known)}"
        raise ValueError(msg)
    return known[evaluator_id]


def catalog() -> pl.DataFrame:
    """One row per evaluator: id, title, domain, required fields, parameters and metrics."""
    _load_catalog()
    rows = [
        {
            "id": cls.id,
            "title": cls.title,
            "domain": cls.domain,
            "judge": cls.judge,
            "requires": list(cls.requires),
            "metrics": [m.key for m in cls.metrics],
            "primary": cls.primary().key,
            "params": json.dumps(
                {p.name: {"type": p.kind.__name__, "default": p.default} for p in cls.params}
            ),
            "description": cls.description,
        }
        for cls in sorted(registered().values(), key=lambda c: (DOMAINS.index(c.domain), c.id))
    ]
    return pl.DataFrame(rows)


def all_evaluators() -> Mapping[str, type[Evaluator]]:
    """Return every evaluator of the catalog by id: built-in, installed, made in this process."""
    _load_catalog()
    return registered()


ENTRY_POINTS = "evalnb.evaluators"
"""The entry point group of packages that add evaluators: each names a module to import."""


@functools.cache
def _load_catalog() -> None:
    # Importing a module registers its evaluators (``@register``, ``@evalnb.evaluator``):
    # every module of the families is found by walking the package, not listed by hand (a
    # module left off a list would hide its evaluators silently), then the installed
    # packages' modules named in the entry point group.
    import evalnb.evaluation.families as families  # noqa: PLC0415 - imported on first use

    for found in pkgutil.walk_packages(families.__path__, families.__name__ + "."):
        importlib.import_module(found.name)
    for entry in importlib.metadata.entry_points(group=ENTRY_POINTS):
        try:
            entry.load()
        except Exception as err:
            warnings.warn(
                f"the evaluators of {entry.value!r} (entry point {entry.name!r} of "
                f"{ENTRY_POINTS!r}) could not be loaded: {type(err).__name__}: {err}",
                stacklevel=3,
            )
