"""Which vector index this process talks to: a Qdrant server when HINDSIGHT_QDRANT_URL is set, else the
in-process Qdrant Edge shard under the data directory (one process at a time may open it).

Which collection: the one the store records (embedding_model.collection, model_sql). A model change builds
its vectors in a new collection beside the old one (`new_collection`) and the switch records its name; for
Qdrant Edge a collection is a folder under the data directory ("qdrant" before any change)."""

from __future__ import annotations

import re
import shutil

from pipeline.adapters.model_identity import ModelIdentity
from pipeline.core.config import Settings
from pipeline.core.ports import VectorIndex

EDGE_FOLDER = "qdrant"


def default_collection(settings: Settings) -> str:
    return settings.qdrant_collection if settings.qdrant_url else EDGE_FOLDER


def new_collection(settings: Settings, model: ModelIdentity) -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", model.name.rsplit("/", 1)[-1]).strip("-").lower()[:40]
    return f"{default_collection(settings)}-{slug}-{model.weights_hash[:8]}"


def open_index(settings: Settings, collection: str | None = None) -> VectorIndex:
    dimension = settings.embedding.dimension
    name = collection or default_collection(settings)
    if settings.qdrant_url:
        from pipeline.adapters.qdrant_server import ServerVectorIndex

        api_key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
        return ServerVectorIndex.from_url(settings.qdrant_url, api_key, name, dimension)
    from pipeline.adapters.qdrant_edge import EdgeVectorIndex

    path = settings.embedded_qdrant_path if name == EDGE_FOLDER else settings.data_dir / name
    return EdgeVectorIndex(path, dimension)


def drop_collection(settings: Settings, collection: str) -> None:
    """Remove a collection nobody reads any more (close its index in this process first)."""
    if settings.qdrant_url:
        from qdrant_client import QdrantClient

        api_key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
        client = QdrantClient(url=settings.qdrant_url, api_key=api_key, timeout=30)
        try:
            if client.collection_exists(collection):
                client.delete_collection(collection)
        finally:
            client.close()
        return
    path = settings.embedded_qdrant_path if collection == EDGE_FOLDER else settings.data_dir / collection
    shutil.rmtree(path, ignore_errors=True)
