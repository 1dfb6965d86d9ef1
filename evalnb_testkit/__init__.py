"""What the tests and benches share: servers they start, labs and texts they build, references.

One support package under a name no installed package takes (a top-level ``tests`` is
shipped by some, ppi-python among them, and would shadow ours). Tests live in ``tests/``,
in a tree that mirrors ``evalnb/``; they and ``bench/`` import helpers from here, never from
each other (``tests/project/test_layout.py`` keeps it so).
"""
