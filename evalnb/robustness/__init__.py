"""Robustness: prompt perturbators (H2O's), the WordNet lexicon they use, perturbed copies of a lab's cases.

Flips between a case and its perturbations are problems (:mod:`evalnb.analysis.problems`).
May import: ``lab``.
"""

from __future__ import annotations

from evalnb.robustness.perturbators import PERTURBATORS, perturb_text
from evalnb.robustness.perturbed_cases import perturb

__all__ = ["PERTURBATORS", "perturb", "perturb_text"]
