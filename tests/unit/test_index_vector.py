"""review.index_vector: what a turn's point in the vector index reads."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.review.index_vector import in_context


def _unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(384).astype(np.float32)
    return v / np.linalg.norm(v)


def test_the_first_turn_of_a_session_is_found_by_its_own_vector() -> None:
    own = _unit(1)
    assert in_context(own, None) is own


@pytest.mark.parametrize("seed", [2, 3, 4])
def test_a_turn_in_context_is_a_unit_vector_nearer_its_own_words_than_the_turn_before(seed: int) -> None:
    own, previous = _unit(seed), _unit(seed + 100)
    v = in_context(own, previous)
    assert v.dtype == np.float32
    assert float(np.linalg.norm(v)) == pytest.approx(1.0, abs=1e-5)
    assert float(v @ own) > float(v @ previous) > 0.2
    # The mean of the turn alone and the turn with its predecessor: own + (own + previous) / |own + previous|.
    c = float(own @ previous)
    n = float(np.sqrt(2 + 2 * c))
    assert float(v @ own) / float(v @ previous) == pytest.approx(
        (1 + (1 + c) / n) / (c + (1 + c) / n), rel=1e-4
    )


def test_a_vector_of_another_dimension_is_no_context() -> None:
    own = _unit(5)
    assert in_context(own, np.ones(768, dtype=np.float32)) is own
