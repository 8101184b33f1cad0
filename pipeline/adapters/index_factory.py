"""Which vector index this process talks to: a Qdrant server when HINDSIGHT_QDRANT_URL is set, else the
in-process Qdrant Edge shard under the data directory (one process at a time may open it)."""

from __future__ import annotations

from pipeline.core.config import Settings
from pipeline.core.ports import VectorIndex


def open_index(settings: Settings) -> VectorIndex:
    dimension = settings.embedding.dimension
    if settings.qdrant_url:
        from pipeline.adapters.qdrant_server import ServerVectorIndex

        api_key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
        return ServerVectorIndex.from_url(settings.qdrant_url, api_key, settings.qdrant_collection, dimension)
    from pipeline.adapters.qdrant_edge import EdgeVectorIndex

    return EdgeVectorIndex(settings.embedded_qdrant_path, dimension)
