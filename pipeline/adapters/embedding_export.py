"""`python -m pipeline.adapters.embedding_export`: export what the configured embedding backend needs, once.

For image builds (infra/Dockerfile), so that no container pays the export on its first turn. Its own module
because it needs the embedder factory, which itself imports the ONNX embedder and its exporter.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.adapters.embedder import make_embedder
from pipeline.adapters.onnx_embedder import OnnxEmbedder
from pipeline.adapters.pair_embedder import PairEmbedder
from pipeline.core.config import get_settings


def export_configured() -> Path | None:
    """Export what the configured backend needs into its cache (None for torch).

    For the MiniLM + USE pair that is MiniLM's graph: USE's numpy weights need no export."""
    embedder = make_embedder(get_settings())
    if isinstance(embedder, PairEmbedder):
        embedder = embedder.first
    return embedder.model_path if isinstance(embedder, OnnxEmbedder) else None


if __name__ == "__main__":
    print(export_configured() or "backend torch: nothing to export")
