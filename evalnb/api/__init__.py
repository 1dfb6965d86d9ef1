"""The public facade: :class:`Lab` (the core plus every notebook method) and its entry points.

It may import every layer below it (``widgets`` down to ``lab``); only ``workflow`` and
``cli`` import it.
"""

from __future__ import annotations

from evalnb.api.lab import Lab, load, open_lab

__all__ = ["Lab", "load", "open_lab"]
