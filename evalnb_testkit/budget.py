"""How many examples a property test draws: the whole budget in CI, a tenth in the fast tier.

``EVALNB_TEST_PROFILE=ci`` (``bash scripts/test`` sets it) gives each property test the count
it names; otherwise (plain ``pytest``, the inner loop) a tenth of it, at least ten. The
Hypothesis profiles of the same names set the count of tests that name none (100 / 20: the
mutation fuzz ran 100 in CI before the profiles too).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

__all__ = ["CI", "examples"]

CI = os.environ.get("EVALNB_TEST_PROFILE", "fast") == "ci"

settings.register_profile(
    "ci", max_examples=100, deadline=None, suppress_health_check=list(HealthCheck)
)
settings.register_profile(
    "fast", max_examples=20, deadline=None, suppress_health_check=list(HealthCheck)
)
settings.load_profile("ci" if CI else "fast")


def examples(n: int) -> int:
    """Return the examples a property test naming ``n`` draws under this profile."""
    return n if CI else max(10, n // 10)
