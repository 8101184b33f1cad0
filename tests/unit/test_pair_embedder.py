"""Two embedders side by side: the cosine of two pair vectors is the mean of the two models' cosines, so
review's cosine rules read one similarity; queries go through each model's own query form."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pipeline.adapters.fakes import HashingEmbedder
from pipeline.adapters.model_identity import identity_of
from pipeline.adapters.pair_embedder import PairEmbedder
from pipeline.core.config import PAIR_MODEL, Settings
from pipeline.core.ports import Vector, embed_queries

TEXTS = ["I moved to Lisbon in May.", "My sister visits in May.", "The cat sleeps on the sofa all day."]


class _Warm(HashingEmbedder):
    def warm_up(self) -> None:
        pass


class _Queried(_Warm):
    """Embeds a query as its text with a prefix, as e5 does."""

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        return self.embed([f"query: {t}" for t in texts])


def test_the_pair_cosine_is_the_mean_of_the_two_models_cosines() -> None:
    a, b = _Warm(dimension=64), _Warm(dimension=32)
    pair = PairEmbedder(a, b)
    assert pair.dimension == 96
    v = pair.embed(TEXTS)
    assert v.shape == (3, 96)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    va, vb = a.embed(TEXTS), b.embed(TEXTS)
    np.testing.assert_allclose(v @ v.T, (va @ va.T + vb @ vb.T) / 2, atol=1e-5)


def test_queries_take_each_model_own_query_form() -> None:
    a, b = _Queried(dimension=16), _Warm(dimension=24)
    q = embed_queries(PairEmbedder(a, b), ["where do I live"])
    np.testing.assert_allclose(q[0, :16] * np.sqrt(2), a.embed(["query: where do I live"])[0], atol=1e-5)
    np.testing.assert_allclose(q[0, 16:] * np.sqrt(2), b.embed(["where do I live"])[0], atol=1e-5)


def test_the_pair_is_its_own_model_for_the_store() -> None:
    pair = Settings(embedding={"model": "minilm+use-m"})
    assert (pair.embedding.dimension, pair.embedding.reads_cjk) == (896, True)
    ident, minilm = identity_of(pair), identity_of(Settings(embedding={"model": "all-MiniLM-L6-v2"}))
    assert ident.name == PAIR_MODEL
    assert ident.dimension == 896
    assert not ident.same_vectors(minilm)  # a switch needs `hindsight reindex`
    assert identity_of(pair, "all-MiniLM-L6-v2").same_vectors(minilm)


def test_settings_for_another_model_derive_its_dimension_and_script_support() -> None:
    pair = Settings(embedding={"torch_threads": 1}).embedding
    minilm = pair.with_model("all-MiniLM-L6-v2")
    assert (minilm.model, minilm.dimension, minilm.reads_cjk) == ("all-MiniLM-L6-v2", 384, False)
    assert (minilm.torch_threads, minilm.backend) == (1, pair.backend)  # the rest is kept
    assert (pair.with_model(PAIR_MODEL).dimension, pair.with_model(PAIR_MODEL).reads_cjk) == (896, True)
