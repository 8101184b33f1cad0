"""Changing the embedding model of a live store (`hindsight reindex --model`, POST /v1/reindex with `model`).

It runs inside the API process, which owns the index (in embedded mode no other process may open it):
1. every memory with a stored embedding (episodes, their long-turn passages, semantic memories) is embedded
   again by the new model into reindex_vectors, in id order, each batch committed with the cursor past it;
2. the points of every recallable memory are built from those vectors and written to a new collection
   beside the old one (its name carries the model's), again behind a cursor;
3. one transaction replaces the stored embeddings with the new ones and records the new model and
   collection (ModelStore.switch); then this process swaps its index and query embedder, drops the
   lexicon's vectors, drops the old collection and re-queues the store for the indexer, which brings in
   whatever changed in the meantime (statuses, turns reviewed during the change).
A review worker still on the old model cannot write after 3: each review write checks the store's model
under a share lock on its row (model_sql.check_vectors_by), so it lands before the switch (whose catch-up
re-embeds it) or is refused and retried by a worker restarted with the new model.
Until 3, recall reads the old collection with the old model. A killed run leaves its progress in
PostgreSQL: asking again continues from the cursors (upserts by point id and by row: nothing twice).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from pipeline.adapters.embedder import make_embedder
from pipeline.adapters.index_factory import drop_collection, new_collection, open_index
from pipeline.adapters.model_identity import ModelIdentity, identity_of
from pipeline.adapters.postgres.model_sql import PHASES, ModelStore, Staged, ToEmbed
from pipeline.adapters.switchable import SwitchableEmbedder, SwitchableIndex
from pipeline.api.deps import ApiDeps
from pipeline.core.config import MULTILINGUAL_MODELS, Settings, model_dimension
from pipeline.core.errors import ConfigError, InvalidValue
from pipeline.core.logging import get_logger
from pipeline.core.models import EPISODE, SEMANTIC
from pipeline.core.ports import VectorIndex, WarmEmbedder
from pipeline.core.vectors import to_blob
from pipeline.review import passages

log = get_logger(__name__)

EMBED_BATCH = 64  # memories per committed step: a kill redoes at most this many
POINT_BATCH = 256


def settings_for(settings: Settings, model: str) -> Settings:
    """The settings with `model` as the embedding model (reads_cjk following it, as when configured)."""
    embedding = settings.embedding.model_copy(
        update={
            "model": model,
            "reads_cjk": model in MULTILINGUAL_MODELS,
            "dimension": model_dimension(model),
        }
    )
    return settings.model_copy(update={"embedding": embedding})


class ModelChange:
    """At most one change at a time per process (and per store: the job row is one row)."""

    def __init__(self, deps: ApiDeps) -> None:
        if not isinstance(deps.index, SwitchableIndex) or not isinstance(deps.embedder, SwitchableEmbedder):
            raise ConfigError("this API process was not started by `hindsight api`: it cannot change models")
        self.deps = deps
        self.index: SwitchableIndex = deps.index
        self.embedder: SwitchableEmbedder = deps.embedder
        self.store = ModelStore(deps.repo.engine)
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._error: str | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def request(self, model: str, max_items: int | None = None) -> dict[str, Any]:
        """Start (or continue) the change to `model`; `max_items` stops after that many memories are
        embedded (a step of a long change; asking again continues)."""
        settings = self.deps.settings
        target = identity_of(settings, model)
        recorded = self.store.recorded()
        with self._lock:
            job = self.store.job()
            if self.running:
                if job is not None and job.target.same_vectors(target):
                    return self.status()
                raise InvalidValue("a change to another embedding model is running; wait for it to finish")
            if recorded is not None and recorded.identity.same_vectors(target):
                if job is not None:  # a change away from it was left unfinished: it is abandoned
                    self.store.cancel_job()
                    drop_collection(settings, job.collection)
                return {**self.status(), "state": "current"}
            if job is not None and not job.target.same_vectors(target):
                drop_collection(settings, job.collection)
            if job is None or not job.target.same_vectors(target):
                # A folder left by a change that never recorded a job row would be reopened as if resumed.
                drop_collection(settings, new_collection(settings, target))
            job = self.store.start_job(target, new_collection(settings, target))
            self._error = None
            self._thread = threading.Thread(
                target=self._run, args=(target, job.collection, max_items), name="model-change", daemon=True
            )
            self._thread.start()
        return self.status()

    def status(self) -> dict[str, Any]:
        recorded = self.store.recorded()
        job = self.store.job()
        totals = self.store.totals()
        out: dict[str, Any] = {
            "model": recorded.identity.name if recorded else None,
            "weights_hash": recorded.identity.weights_hash if recorded else None,
            "collection": recorded.collection if recorded else None,
            "state": "running" if self.running else ("paused" if job is not None else "idle"),
            "error": self._error,
        }
        if job is not None:
            out["change"] = {
                "model": job.target.name,
                "weights_hash": job.target.weights_hash,
                "collection": job.collection,
                "phase": job.phase,
                "done": totals["staged"],
                "total": totals["episodes"] + totals["semantic"],
                "started_at": job.started_at.isoformat(),
            }
        return out

    def _run(self, target: ModelIdentity, collection: str, max_items: int | None) -> None:
        settings = settings_for(self.deps.settings, target.name)
        new_index: VectorIndex | None = None
        try:
            embedder = make_embedder(settings)
            embedder.warm_up()
            new_index = open_index(settings, collection)
            if not self._build(embedder, new_index, max_items):
                log.info("model_change.paused", model=target.name)
                return
            self._switch(target, collection, embedder, new_index, reads_cjk=settings.embedding.reads_cjk)
            new_index = None  # it is the live index now
        except Exception as exc:  # the status shows it; asking again continues from the cursors
            self._error = f"{type(exc).__name__}: {exc}"
            log.exception("model_change.failed", model=target.name)
        finally:
            if new_index is not None:
                new_index.close()

    def _build(self, embedder: WarmEmbedder, index: VectorIndex, max_items: int | None) -> bool:
        """Phases 1 and 2 from where the job stands; False when it stopped at `max_items`."""
        left = max_items
        job = self.store.job()
        assert job is not None
        phase = job.phase if job.phase in PHASES else PHASES[0]
        cursors = {"embed_episodes": job.episode_cursor, "embed_semantic": job.semantic_cursor}
        for step, kind in (("embed_episodes", EPISODE), ("embed_semantic", SEMANTIC)):
            if phase != step:
                continue
            cursor = cursors[step]
            while True:
                if left is not None and left <= 0:
                    return False
                rows = self.store.to_embed(
                    kind, cursor, EMBED_BATCH if left is None else min(EMBED_BATCH, left)
                )
                if not rows:
                    break
                self.store.stage(_embedded(embedder, rows), phase=step, cursor=rows[-1][1])
                cursor = rows[-1][1]
                if left is not None:
                    left -= len(rows)
            phase = "embed_semantic" if step == "embed_episodes" else "index_episodes"
            self.store.advance(phase)
        for step, kind in (("index_episodes", EPISODE), ("index_semantic", SEMANTIC)):
            if phase != step:
                continue
            cursor = job.point_cursor if job.phase == step else 0
            while True:
                points, last = self.store.new_points(kind, cursor, POINT_BATCH)
                if last is None:
                    break
                index.upsert(points)  # before the cursor moves: a kill here rewrites the same points
                self.store.advance(step, last)
                cursor = last
            phase = "index_semantic" if step == "index_episodes" else "switch"
            self.store.advance(phase)
        return True

    def _switch(
        self,
        target: ModelIdentity,
        collection: str,
        embedder: WarmEmbedder,
        index: VectorIndex,
        *,
        reads_cjk: bool,
    ) -> None:
        # Reviews keep committing old-model vectors during phases 1-2: catch up outside the lock first,
        # so that the switch (which blocks writes) embeds only the last few.
        while rest := self.store.unstaged(EMBED_BATCH):
            staged = _embedded(embedder, rest)
            self.store.stage(staged, phase="catch_up", cursor=0)
        self.store.switch(target, collection, lambda rows: _embedded(embedder, rows))
        deps = self.deps
        old_collection = self.index.collection
        old = self.index.swap(index, collection)
        self.embedder.swap(embedder)
        deps.tuning = replace(deps.tuning, dense_reads_cjk=reads_cjk)
        if deps.lexicon is not None:
            deps.lexicon.invalidate()  # it holds the old model's vectors
        old.close()
        drop_collection(deps.settings, old_collection)
        # What changed while the new collection was built (statuses, turns reviewed meanwhile) is brought
        # in by the indexer, from the stored embeddings, which are the new model's now.
        orphans = sorted(index.ids() - deps.repo.indexable_point_ids())
        if orphans:
            index.delete(orphans)
        queued = deps.repo.enqueue_reindex()
        log.info(
            "model_change.switched",
            model=target.name,
            collection=collection,
            dropped=old_collection,
            queued=queued,
            orphans_deleted=len(orphans),
        )


def _embedded(embedder: WarmEmbedder, rows: Sequence[ToEmbed]) -> list[Staged]:
    """The new vectors of these memories: an episode's main vector and its passages (as review embeds
    them), a semantic memory's one vector."""
    if not rows:
        return []
    mains = embedder.embed([body for _, _, body in rows])
    windows = {ref: passages.passages(body) for kind, ref, body in rows if kind == EPISODE}
    flat = [t for ts in windows.values() for t in ts]
    matrix = embedder.embed(flat) if flat else None
    out: list[Staged] = []
    row = 0
    for (kind, ref, _), main in zip(rows, mains, strict=True):
        blob: bytes | None = None
        texts = windows.get(ref, []) if kind == EPISODE else []
        if texts and matrix is not None:
            blob = to_blob(matrix[row : row + len(texts)])
            row += len(texts)
        out.append((kind, ref, to_blob(main), blob))
    return out
