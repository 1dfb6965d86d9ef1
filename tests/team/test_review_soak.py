"""The review queue's guarantees under kills and a server crash (issue 44), at test size.

bench/bench_review_soak.py at its defaults is the full soak (50 reviewers, 10,000 items);
here 8 reviewers and 240 items, 3 reviewers killed and restarted and the server restarted
with ``pg_ctl restart -m immediate`` while they work. Only the guarantees are checked.
"""

from __future__ import annotations

import pytest

from bench.bench_review_soak import soak

pytestmark = pytest.mark.xdist_group("postgres")


def test_kills_and_a_crash_lose_and_double_nothing() -> None:
    result = soak(8, 240, 3, 3, 2.0, chaos_s=4.0)
    assert result["killed"] == 3 and result["server_restarts"] == 1
    assert result["items_exactly_n"] == 240  # every item: 3 labels, 3 distinct reviewers
    assert result["acknowledged_lost"] == 0
    assert result["duplicates"] == 0
    assert result["labels"] == 720
