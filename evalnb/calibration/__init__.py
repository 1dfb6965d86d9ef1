"""Human calibration: append-only labels, what to label next, threshold recalibration.

Also judge–human agreement and the exports: guardrail config and corpus patch.

May import ``evaluation``, ``io`` and the layers below them.
"""

from __future__ import annotations

from evalnb.calibration.bundle_check import seal
from evalnb.calibration.labels import add_label, reviewer_agreement
from evalnb.calibration.recalibrate import Calibration
from evalnb.calibration.sampling import calibration_sample

__all__ = ["Calibration", "add_label", "calibration_sample", "reviewer_agreement", "seal"]
