"""Bench texts' vectors, cached on disk by the model that made them and the text itself.

The floors and the offline harnesses embed the same turns run after run: LongMemEval's sample is ~15k long
turns, ~25 minutes of a loaded two-core machine for the dense floor alone, every time a ranking variant is
scored over a reused ingest. One cache serves them all (it replaced five, each keyed its own way; two of them
had once been keyed by the texts alone, so a run under another model of the same dimension read the last
model's vectors).

Layout: `<cache_dir>/<canonical model name>/<shard>.npz`, each shard a `keys` array (sha256 of the text) and
a `vectors` matrix, written whole to a temporary name and then renamed, so a killed run leaves no partial
shard. The cache is under the git-ignored bench cache: it holds vectors of LoCoMo and LongMemEval text, which
must not enter the repository.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pipeline.adapters.model_identity import canonical_name

if TYPE_CHECKING:
    from pipeline.core.config import Settings

VECTOR_CACHE = Path(__file__).resolve().parents[1] / ".hindsight" / "bench-cache" / "vectors"
Array = np.ndarray[Any, Any]


def embedder_name(settings: Settings) -> str:
    """The configured embedder as the cache names it: the model and the backend (ONNX int8 vectors are
    close to torch's, not equal)."""
    return f"{canonical_name(settings.embedding.model)}@{settings.embedding.backend}"


@dataclass(frozen=True)
class Cached:
    """The texts' vectors in order, and what this call embedded (the rest came from the cache)."""

    vectors: Array
    embedded: int
    seconds: float  # embedding them

    @property
    def texts_per_s(self) -> float:
        """The embedder's rate over what it embedded now; 0.0 when everything came from the cache."""
        return self.embedded / self.seconds if self.embedded and self.seconds > 0 else 0.0


def cached_vectors(
    texts: Sequence[str],
    embed: Callable[[list[str]], Any],
    model: str,
    *,
    cache_dir: Path | None = None,
) -> Cached:
    """`embed`'s vectors of `texts` (float32, one row per text, in order) under the name `model`
    (`embedder_name` for the configured embedder). Only the distinct texts the cache lacks for it are
    embedded, in one call, and stored as a new shard."""
    # A model may be named by a local path: one folder per name, whatever it holds.
    folder = (cache_dir or VECTOR_CACHE) / re.sub(r"[^\w.@+-]", "_", canonical_name(model))
    keys = [_key(t) for t in texts]
    found = _load(folder)
    missing: dict[str, str] = {}
    for k, t in zip(keys, texts, strict=True):
        if k not in found:
            missing.setdefault(k, t)
    seconds = 0.0
    if missing:
        t0 = time.perf_counter()
        made = np.asarray(embed(list(missing.values())), dtype=np.float32)
        seconds = time.perf_counter() - t0
        if made.shape[0] != len(missing):
            raise ValueError(f"the embedder returned {made.shape[0]} vectors for {len(missing)} texts")
        _store(folder, list(missing), made)
        found.update(zip(missing, made, strict=True))
    if not keys:
        return Cached(np.zeros((0, 0), dtype=np.float32), 0, 0.0)
    return Cached(np.stack([found[k] for k in keys]).astype(np.float32, copy=False), len(missing), seconds)


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _load(folder: Path) -> dict[str, Array]:
    found: dict[str, Array] = {}
    for shard in sorted(folder.glob("*.npz")):
        with np.load(shard) as saved:
            found.update(zip(saved["keys"].tolist(), saved["vectors"], strict=True))
    return found


def _store(folder: Path, keys: list[str], vectors: Array) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha256("".join(keys).encode()).hexdigest()[:16]
    partial = folder / f"{name}.partial.npz"
    np.savez(partial, keys=np.asarray(keys), vectors=vectors)
    partial.replace(folder / f"{name}.npz")
