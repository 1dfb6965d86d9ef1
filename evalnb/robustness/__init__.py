"""Robustness: H2O's prompt perturbators, their WordNet lexicon, perturbed copies of cases.

Flips between a case and its perturbations are problems (:mod:`evalnb.analysis.problems`).

May import ``evaluation``, ``io`` and the layers below them.
"""

from __future__ import annotations

from evalnb.robustness.perturbators import PERTURBATORS, perturb_text
from evalnb.robustness.perturbed_cases import perturb

__all__ = ["PERTURBATORS", "perturb", "perturb_text"]
