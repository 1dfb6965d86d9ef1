"""Evaluators: the contract, the catalog, the runners that score a lab, the families in drawers.

* ``base``: the contract (:class:`Evaluator`, :class:`MetricSpec`, :class:`Param`,
  :func:`register`) and the result rows;
* ``catalog``: every family by id (imported lazily);
* ``engine`` (``evaluate``), ``scoring`` (a batch of rows, here or on Ray), ``on_disk``
  (a lab kept as Parquet parts), ``ray_engine`` (the cluster);
* ``ragas_objects``: ragas' own metric objects as evaluators;
* ``families/{text,models,judges,agents}``: the evaluators, by what they need.

May import ``llm``, ``models``, ``text``, ``lab``.
"""

from __future__ import annotations

from evalnb.evaluation.base import Context, Evaluator, MetricSpec, Param, register
from evalnb.evaluation.catalog import get_evaluator
from evalnb.evaluation.engine import evaluate, evaluators
from evalnb.evaluation.families.text.condition import ConditionError

__all__ = [
    "ConditionError",
    "Context",
    "Evaluator",
    "MetricSpec",
    "Param",
    "evaluate",
    "evaluators",
    "get_evaluator",
    "register",
]
