"""An encoder forgets its vectors on demand and keeps its model (the suite's cache per module)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evalnb.models.encoder import get_encoder, restart_vector_caches
from evalnb_testkit.reference_models import MODEL


def test_restart_forgets_the_vectors_keeps_the_model_and_moves_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    encoder = get_encoder(MODEL)
    model = encoder._model
    first = encoder.encode(["a sentence to keep", "another one"])
    memo = encoder._memo
    monkeypatch.setenv("EVALNB_CACHE_DIR", str(tmp_path / "fresh"))
    restart_vector_caches()
    assert get_encoder(MODEL) is encoder and encoder._model is model  # no second load
    assert encoder._memo is not memo  # what was held in memory is gone
    again = encoder.encode(["a sentence to keep", "another one"])
    np.testing.assert_allclose(again, first, atol=1e-5)
    assert encoder._cache is not None
    encoder._cache.flush()
    assert any(p.is_file() for p in (tmp_path / "fresh").rglob("*"))
