"""Per-process dependencies of the tasks, built once on first use."""

from __future__ import annotations

from functools import lru_cache

from pipeline.adapters.embedder import SentenceTransformerEmbedder
from pipeline.adapters.postgres.engine import make_engine
from pipeline.adapters.postgres.repository import Repository
from pipeline.config import get_settings


@lru_cache(maxsize=1)
def repository() -> Repository:
    return Repository(make_engine(get_settings().db_url, pool_size=2))


@lru_cache(maxsize=1)
def embedder() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(get_settings().embedding)
