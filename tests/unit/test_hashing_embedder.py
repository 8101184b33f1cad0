from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from pipeline.adapters.fakes import HashingEmbedder
from pipeline.core.ports import Embedder


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def test_it_is_an_embedder() -> None:
    embedder: Embedder = HashingEmbedder()
    assert embedder.dimension == 384


def test_shape_and_dtype() -> None:
    vectors = HashingEmbedder(dimension=64).embed(["one text", "another text", "a third"])

    assert vectors.shape == (3, 64)
    assert vectors.dtype == np.float32


def test_no_texts_give_an_empty_matrix() -> None:
    assert HashingEmbedder(dimension=32).embed([]).shape == (0, 32)


def test_rows_are_l2_normalised() -> None:
    vectors = HashingEmbedder().embed(
        ["short", "a somewhat longer sentence about the weather in Lisbon", "x"]
    )

    assert np.linalg.norm(vectors, axis=1) == pytest.approx([1.0, 1.0, 1.0], abs=1e-5)


def test_a_text_without_words_is_the_zero_vector() -> None:
    vectors = HashingEmbedder().embed(["", "  ...  "])

    assert not vectors.any()


def test_deterministic_across_instances_and_case() -> None:
    text = "The user prefers dark mode in the editor"
    first = HashingEmbedder().embed([text])
    again = HashingEmbedder().embed([text, text.upper()])

    np.testing.assert_array_equal(first[0], again[0])
    np.testing.assert_array_equal(first[0], again[1])


def test_deterministic_across_processes() -> None:
    # str hashes are salted per process; the embedder must not depend on them.
    code = (
        "from pipeline.adapters.fakes import HashingEmbedder;"
        "print(HashingEmbedder(dimension=8).embed(['hello world'])[0].tolist())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    here = HashingEmbedder(dimension=8).embed(["hello world"])[0].tolist()

    assert out.strip() == str(here)


def test_texts_sharing_words_score_high_and_unrelated_texts_low() -> None:
    anchor, similar, unrelated, other_unrelated = HashingEmbedder().embed(
        [
            "The user prefers dark mode in the editor",
            "user prefers the dark mode editor theme",
            "Quarterly revenue grew in Europe last year",
            "Alice enjoys hiking every weekend",
        ]
    )

    assert _cos(anchor, similar) > 0.7
    assert abs(_cos(anchor, unrelated)) < 0.2
    assert abs(_cos(anchor, other_unrelated)) < 0.2
    assert _cos(anchor, similar) > _cos(anchor, unrelated) + 0.5


def test_word_variants_overlap_through_trigrams() -> None:
    hike, hiking, revenue = HashingEmbedder().embed(["hike", "hiking", "revenue"])

    assert _cos(hike, hiking) > _cos(hike, revenue)


def test_dimension_must_be_positive() -> None:
    with pytest.raises(ValueError):
        HashingEmbedder(dimension=0)
