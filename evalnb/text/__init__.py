"""Text kernels: sentence splitting, tokenizing and interning, n-gram counting, repeats, synthetic corpora.

Pure functions over strings and Arrow buffers (several compiled with numba, so this
``__init__`` imports none of them). May import: ``lab``.
"""

from __future__ import annotations
