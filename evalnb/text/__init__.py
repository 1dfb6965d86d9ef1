"""Text kernels: sentence splitting, tokenizing, interning, n-gram counts, repeats, test corpora.

Pure functions over strings and Arrow buffers (several compiled with numba, so this
``__init__`` imports none of them).

May import ``lab``.
"""

from __future__ import annotations
