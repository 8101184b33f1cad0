"""bench.vector_cache: one on-disk cache of bench texts' vectors, by model and text."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bench import poisoning_calibrated as pc
from bench import vector_cache
from bench.vector_cache import cached_vectors, embedder_name
from pipeline.core.config import Settings


class Embedder:
    """Each text's vector is `value` then its length; every call is recorded."""

    def __init__(self, value: float, calls: list[list[str]]) -> None:
        self.value, self.calls = value, calls

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.array([[self.value, len(t)] for t in texts], dtype=np.float32)


def test_only_the_distinct_texts_it_lacks_are_embedded_and_rows_keep_their_order(tmp_path: Path) -> None:
    calls: list[list[str]] = []
    first = cached_vectors(["aa", "b", "aa"], Embedder(1.0, calls).embed, "m", cache_dir=tmp_path)
    assert first.vectors.tolist() == [[1.0, 2.0], [1.0, 1.0], [1.0, 2.0]]
    assert first.vectors.dtype == np.float32
    assert (first.embedded, calls) == (2, [["aa", "b"]])
    assert first.texts_per_s > 0
    # A second call (a new process would read the same shard) embeds only what is new.
    second = cached_vectors(["ccc", "b", "aa"], Embedder(5.0, calls).embed, "m", cache_dir=tmp_path)
    assert second.vectors.tolist() == [[5.0, 3.0], [1.0, 1.0], [1.0, 2.0]]
    assert (second.embedded, calls[-1]) == (1, ["ccc"])
    again = cached_vectors(["b"], Embedder(9.0, calls).embed, "m", cache_dir=tmp_path)
    assert (again.embedded, again.texts_per_s, len(calls)) == (0, 0.0, 2)
    assert again.vectors.tolist() == [[1.0, 1.0]]
    assert not list(tmp_path.rglob("*.partial.npz"))


def test_each_model_has_its_own_vectors_even_at_the_same_dimension(tmp_path: Path) -> None:
    calls: list[list[str]] = []
    cached_vectors(["a"], Embedder(1.0, calls).embed, "all-MiniLM-L6-v2", cache_dir=tmp_path)
    other = cached_vectors(["a"], Embedder(2.0, calls).embed, "multilingual-e5-small", cache_dir=tmp_path)
    assert other.vectors[0, 0] == 2.0
    # An alias is the same model: its vectors are found under the canonical name.
    alias = cached_vectors(
        ["a"], Embedder(3.0, calls).embed, "sentence-transformers/all-MiniLM-L6-v2", cache_dir=tmp_path
    )
    assert (alias.vectors[0, 0], alias.embedded) == (1.0, 0)
    # A model named by a local path stays inside the cache.
    cached_vectors(["a"], Embedder(4.0, calls).embed, "/models/../mine", cache_dir=tmp_path)
    assert all(p.is_relative_to(tmp_path) for p in tmp_path.rglob("*.npz"))
    assert len({p.parent for p in tmp_path.rglob("*.npz")}) == 3


def test_the_configured_embedder_is_named_by_model_and_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HINDSIGHT_EMBEDDING__MODEL", "all-MiniLM-L6-v2")
    monkeypatch.setenv("HINDSIGHT_EMBEDDING__BACKEND", "onnx")
    onnx = embedder_name(Settings())
    monkeypatch.setenv("HINDSIGHT_EMBEDDING__BACKEND", "onnx-int8")
    assert embedder_name(Settings()) != onnx
    assert onnx.startswith("all-MiniLM-L6-v2")


def test_an_embedder_that_returns_the_wrong_count_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="1 vectors for 2 texts"):
        cached_vectors(["a", "b"], lambda texts: np.zeros((1, 2)), "m", cache_dir=tmp_path)
    assert not list(tmp_path.rglob("*.npz"))


def test_the_poisoning_screen_reads_the_cache_per_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vector_cache, "VECTOR_CACHE", tmp_path)  # not the bench's vector cache
    calls: list[list[str]] = []
    monkeypatch.setenv("HINDSIGHT_EMBEDDING__MODEL", "all-MiniLM-L6-v2")
    assert pc.embed(["a", "b"], Embedder(1.0, calls))[0, 0] == 1.0
    assert pc.embed(["b", "a"], Embedder(9.0, calls))[1, 0] == 1.0  # cached: the embedder is not asked again
    assert [sorted(c) for c in calls] == [["a", "b"]]
    # Another model of the same dimension: its own vectors, not the last model's.
    monkeypatch.setenv("HINDSIGHT_EMBEDDING__MODEL", "multilingual-e5-small")
    assert pc.embed(["a"], Embedder(2.0, calls))[0, 0] == 2.0
    assert [sorted(c) for c in calls] == [["a", "b"], ["a"]]
