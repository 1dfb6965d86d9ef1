"""The ``evalnb`` command line (import, info, demo, metric, harpia, report, calibrate export).

The top layer: may import anything. ``python -m evalnb.cli`` runs it; this ``__init__``
imports nothing, so ``python -m evalnb.cli.main`` runs without a double import.
"""
