"""The evaluator catalog: every family imported, looked up by id, listed as a frame.

The families (:mod:`evalnb.evaluation.families`) register themselves through
:mod:`evalnb.evaluation.base` when imported; this module imports them all (lazily, so
``import evalnb`` stays light: heavy ones load their models only when they score), and is
the only module of the contract and the runners that does (the ``runners-no-family``
contract in ``pyproject.toml``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import polars as pl

from evalnb.evaluation.base import DOMAINS, registered

if TYPE_CHECKING:
    from evalnb.evaluation.base import Evaluator

__all__ = ["catalog", "get_evaluator"]


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


def _load_catalog() -> None:
    # Importing a family module registers its evaluators (see the module docstring).
    import evalnb.evaluation.families.agents.agent_sanity  # noqa: PLC0415
    import evalnb.evaluation.families.agents.step_alignment  # noqa: PLC0415
    import evalnb.evaluation.families.agents.trajectory_metrics  # noqa: PLC0415
    import evalnb.evaluation.families.judges.agent_judges  # noqa: PLC0415
    import evalnb.evaluation.families.judges.fact_check  # noqa: PLC0415
    import evalnb.evaluation.families.judges.h2o_judges  # noqa: PLC0415
    import evalnb.evaluation.families.judges.ragas_judges  # noqa: PLC0415
    import evalnb.evaluation.families.models.embedding  # noqa: PLC0415
    import evalnb.evaluation.families.models.gptscore  # noqa: PLC0415
    import evalnb.evaluation.families.models.model_backed  # noqa: PLC0415
    import evalnb.evaluation.families.models.summarization  # noqa: PLC0415
    import evalnb.evaluation.families.text.bleu  # noqa: PLC0415
    import evalnb.evaluation.families.text.encoding  # noqa: PLC0415
    import evalnb.evaluation.families.text.language_match  # noqa: PLC0415
    import evalnb.evaluation.families.text.leakage  # noqa: PLC0415
    import evalnb.evaluation.families.text.looping  # noqa: PLC0415
    import evalnb.evaluation.families.text.ragas_nonllm  # noqa: PLC0415
    import evalnb.evaluation.families.text.rouge  # noqa: PLC0415
    import evalnb.evaluation.families.text.rules  # noqa: PLC0415
    import evalnb.evaluation.families.text.text_matching  # noqa: F401, PLC0415
