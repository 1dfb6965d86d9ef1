"""The public facade: :class:`Lab` (the core plus every notebook method) and its entry points.

The only package allowed to import every layer below ``cli``; nothing below imports it.
"""

from __future__ import annotations

from evalnb.api.lab import Lab, load, open_lab

__all__ = ["Lab", "load", "open_lab"]
