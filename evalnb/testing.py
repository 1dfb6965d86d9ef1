"""Assertions for a test suite or CI: ``from evalnb.testing import assert_not_worse``.

A pull request whose candidate is worse fails with the decision's one-screen explanation
(:mod:`evalnb.api.testing`, where it is written).
"""

from __future__ import annotations

from evalnb.api.testing import assert_not_worse

__all__ = ["assert_not_worse"]
