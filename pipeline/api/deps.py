"""What the routes share: the API process's dependencies (ApiDeps), how a route receives them (`Deps`),
and the memory id a path names (`memory_ref`). Routers import this module; app.py assembles them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, Request

from pipeline.adapters.indexer import Indexer
from pipeline.adapters.lexicon_cache import Lexicon
from pipeline.adapters.postgres.forgetting_sql import ForgettingStore
from pipeline.adapters.postgres.recall_sql import RecallStore
from pipeline.adapters.postgres.repository import Repository
from pipeline.adapters.redis_stream import TurnStream
from pipeline.api.metrics import ApiMetrics
from pipeline.core.config import Settings
from pipeline.core.errors import InvalidTurn
from pipeline.core.ports import Embedder, VectorIndex
from pipeline.recall.access import AccessRecorder
from pipeline.recall.tuning import DEFAULT_TUNING, RecallTuning


@dataclass
class ApiDeps:
    settings: Settings
    repo: Repository
    stream: TurnStream
    index: VectorIndex
    embedder: Embedder
    dispatch: Callable[[int], None]
    run_indexer: bool
    claim_limit: int
    forgetting: ForgettingStore
    indexer: Indexer | None = field(default=None)
    access: AccessRecorder | None = field(default=None)
    metrics: ApiMetrics = field(default_factory=ApiMetrics)
    recall_store: RecallStore | None = field(default=None)
    lexicon: Lexicon | None = field(default=None)
    tuning: RecallTuning = field(default=DEFAULT_TUNING)
    # Changing the embedding model (POST /v1/reindex with a model): a pipeline.api.model_change.ModelChange,
    # made on first use (typed Any: that module imports this one).
    model_change: Any = field(default=None)


def get_deps(request: Request) -> ApiDeps:
    deps: ApiDeps = request.app.state.deps
    return deps


Deps = Annotated[ApiDeps, Depends(get_deps)]


def memory_ref(memory_id: str) -> tuple[str, int]:
    kind, _, ref = memory_id.partition(":")
    if kind not in ("episode", "semantic") or not (ref.isascii() and ref.isdigit()) or len(ref) > 18:
        raise InvalidTurn(f"memory_id: expected 'episode:<n>' or 'semantic:<n>', got {memory_id[:64]!r}")
    return kind, int(ref)
