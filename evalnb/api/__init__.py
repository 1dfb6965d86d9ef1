"""The public facade: :class:`Lab` (the lab's core plus every notebook method) and the entry points that hand a user one.

The only package allowed to import every layer below ``cli``; nothing below imports it.
"""

from __future__ import annotations

from evalnb.api.lab import Lab, load, open_lab

__all__ = ["Lab", "load", "open_lab"]
