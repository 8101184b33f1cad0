"""Per-scope in-memory BM25 indexes, fed from PostgreSQL (the system of record) and refreshed behind recall.

Like the vector index, this is derived state that may lag the store: a scope's index is built on its
first recall, then topped up in a background thread with what was reviewed, created or restored from
cold storage since, and with the turns that arrived since and may be recalled before their review (read
your writes), at most every `refresh_s` seconds. Documents are only ever appended; anything that
went cold, was forgotten or was superseded since is dropped when recall hydrates its hits from
PostgreSQL, as for vector hits. All scopes together stay within `max_bytes` (estimated): the least
recently used are dropped and rebuilt when next asked.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import cast

import numpy as np
import numpy.typing as npt

from pipeline.adapters.postgres.recall_sql import LexicalDoc, RecallStore
from pipeline.recall.lexical import BM25, tokens, weighted_terms

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# Rows committed slightly out of order in `reviewed_at` are caught by re-reading a short overlap.
OVERLAP = timedelta(seconds=5)


@dataclass
class _Scope:
    index: BM25 = field(default_factory=BM25)
    seen: set[tuple[str, int]] = field(default_factory=set)
    last_text: dict[str, str] = field(
        default_factory=dict
    )  # session -> its latest turn, the next one's context
    last_doc: dict[str, tuple[str, int]] = field(default_factory=dict)  # session -> its latest document
    speakers: set[str] = field(default_factory=set)  # name tokens of everyone who spoke in the scope
    # Embeddings of the recallable documents (Lexicon(vectors=True)): float16 rows, grown by doubling.
    vector_rows: dict[tuple[str, int], int] = field(default_factory=dict)
    vectors: npt.NDArray[np.float16] | None = None
    high_water: datetime = EPOCH
    # The newest arrival read among turns recallable before their review (received_at, the database's
    # clock): a mark of its own, since a turn arrives long before its review is read.
    arrived_water: datetime = EPOCH
    nbytes: int = 0  # estimated memory held (estimated_bytes), as of the last build or top-up
    refreshed: float = 0.0  # monotonic
    refreshing: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)


# LoCoMo 1-5: the previous turn at 0.75 beat 0.5 and 1.0; the next turn at 0.3 added +0.012 R@5 and
# +0.008 R@10 on top (0.2 and 0.5 measured within 0.005 of it).
CONTEXT_WEIGHT = 0.75
NEXT_WEIGHT = 0.3
# A neighbour that is not recallable itself (cold) is found only through these documents, yet counting its
# words more (1.0 previous, 0.75 next) measured within 0.002 of the same weights for all (LoCoMo 1-5).
# A participant's name in someone else's turn is mostly an address ("Thanks, Melanie!"), not what the turn
# is about: it counts this much, so that "what does Melanie do to destress" finds Melanie's own turns
# rather than every reply that thanks her.
ADDRESS_WEIGHT = 0.0  # LoCoMo 1-5: R@10 0.770 -> 0.777 (0.3: 0.774), R@5 unchanged


# Python memory of a scope (tests/unit/test_lexicon_cache.py checks the estimate against tracemalloc):
# 12 bytes per posting in the frozen search arrays (a row and a frequency; BM25.freeze folds the pending
# (row, tf) tuples into them at every build and top-up), ~400 per distinct term (its arrays' headers, its
# dict entry) and ~400 per document for the per-document maps (ids, sessions, neighbours); the float16
# vectors are counted exactly. Measured on LoCoMo texts: 27 bytes per posting all in, where the lists of
# (row, tf) tuples kept before took 94.
BYTES_PER_POSTING = 12
BYTES_PER_TERM = 400
BYTES_PER_DOCUMENT = 400


def estimated_bytes(scope: _Scope) -> int:
    vectors = 0 if scope.vectors is None else scope.vectors.nbytes
    index = scope.index
    return (
        BYTES_PER_POSTING * index.postings
        + BYTES_PER_TERM * index.vocabulary
        + BYTES_PER_DOCUMENT * len(scope.seen)
        + vectors
    )


class Lexicon:
    """BM25 search over a scope's memories. `context_weight` is how much of the previous turn of the same
    session counts in a turn's document (a reply often only makes sense with the question before it);
    `next_weight` how much of the next turn does (a question, or a photo, is often explained by the reply),
    added when that turn arrives."""

    def __init__(
        self,
        store: RecallStore,
        *,
        refresh_s: float = 1.0,
        context_weight: float = CONTEXT_WEIGHT,
        next_weight: float = NEXT_WEIGHT,
        address_weight: float = ADDRESS_WEIGHT,
        max_scopes: int = 256,
        max_bytes: int = 1 << 30,
        vectors: bool = True,
    ) -> None:
        self.store = store
        self.refresh_s = refresh_s
        self.context_weight = context_weight
        self.next_weight = next_weight
        self.address_weight = address_weight
        self.max_scopes = max_scopes
        # Beyond this (estimated) the least recently used scopes are dropped, to be rebuilt from PostgreSQL
        # on their next recall: the recall bench's 100,000-turn scope holds 191 MiB (tracemalloc; 3.4 M
        # postings, 73 MiB of it the float16 vectors; 459 MiB before the postings were folded into arrays).
        self.max_bytes = max_bytes
        # Also hold each recallable document's embedding (float16: 768 bytes a turn), so that recall can
        # take cosines of candidates the vector search did not return without reading PostgreSQL.
        self.keep_vectors = vectors
        self._scopes: OrderedDict[tuple[str, str], _Scope] = OrderedDict()
        self._lock = threading.Lock()

    def search(self, agent_id: str, user_id: str, query: str, limit: int) -> list[tuple[str, int, float]]:
        """(kind, id, share): the best matches, best first, each scored by its BM25 score over the most any
        document could score for this query (`BM25.ceiling`), in [0, 1]."""
        scope = self._scope(agent_id, user_id)
        out: list[tuple[str, int, float]] = []
        for doc, s in scope.index.search(query, limit, shares=True):
            kind, ref = cast(tuple[str, int], doc)  # the keys _refresh adds
            out.append((str(kind), int(ref), s))
        return out

    def vectors(
        self, agent_id: str, user_id: str, keys: Iterable[tuple[str, int]]
    ) -> dict[tuple[str, int], npt.NDArray[np.float32]]:
        """The held embeddings of these documents (float32), for those that have one."""
        scope = self._scope(agent_id, user_id)
        matrix = scope.vectors
        if matrix is None:
            return {}
        found = [(key, row) for key in keys if (row := scope.vector_rows.get(key)) is not None]
        if not found:
            return {}
        rows = matrix[[row for _, row in found]].astype(np.float32)
        return {key: rows[i] for i, (key, _) in enumerate(found)}

    def _scope(self, agent_id: str, user_id: str) -> _Scope:
        key = (agent_id, user_id)
        with self._lock:
            scope = self._scopes.get(key)
            if scope is None:
                scope = self._scopes[key] = _Scope()
                while len(self._scopes) > self.max_scopes:
                    self._scopes.popitem(last=False)
            self._scopes.move_to_end(key)
        if scope.refreshed == 0.0:
            with scope.lock:  # first use: build before answering
                if scope.refreshed == 0.0:
                    self._refresh(key, scope)
        elif time.monotonic() - scope.refreshed > self.refresh_s and not scope.refreshing:
            scope.refreshing = True
            threading.Thread(target=self._refresh_locked, args=(key, scope), daemon=True).start()
        return scope

    def _refresh_locked(self, key: tuple[str, str], scope: _Scope) -> None:
        try:
            with scope.lock:
                self._refresh(key, scope)
        finally:
            scope.refreshing = False

    def _evict(self, keep: tuple[str, str]) -> None:
        """Drop the least recently used scopes (never `keep`) while all together hold more than max_bytes."""
        with self._lock:
            total = sum(s.nbytes for s in self._scopes.values())
            for key in list(self._scopes):
                if total <= self.max_bytes:
                    return
                if key != keep:
                    total -= self._scopes.pop(key).nbytes

    def _refresh(self, key: tuple[str, str], scope: _Scope) -> None:
        docs = self.store.lexical_docs(
            key[0],
            key[1],
            since=scope.high_water - OVERLAP,
            arrived=scope.arrived_water - OVERLAP,
            vectors=self.keep_vectors,
        )
        # Streamed: the high-water marks move only once the whole read is indexed, so that a read that
        # fails half-way is read again from where it began (what was indexed is `seen`, not indexed twice).
        high_water, arrived_water, read = scope.high_water, scope.arrived_water, False
        for doc in docs:
            read = True
            ref = (doc.kind, doc.id)
            if doc.arrived:
                arrived_water = max(arrived_water, doc.changed_at)
            else:
                high_water = max(high_water, doc.changed_at)
            # Read on arrival, without a vector: its review brings one.
            if doc.embedding is not None and ref in scope.index and ref not in scope.vector_rows:
                _hold_vector(scope, ref, doc.embedding)
            if ref in scope.seen or doc.restored:
                if doc.recallable and ref not in scope.index:
                    # Back from cold storage (re-heated, restored) or out of quarantine: indexed late, on
                    # its own words; its session's turns were linked without it and stay so.
                    scope.seen.add(ref)
                    self._add(scope, ref, doc, context="", link=False)
                continue
            scope.seen.add(ref)
            context = ""
            if doc.session_id is not None:
                context = scope.last_text.get(doc.session_id, "")
                scope.last_text[doc.session_id] = doc.text
                before = scope.last_doc.pop(doc.session_id, None)
                if before is not None and self.next_weight > 0:
                    # The answer to a question is context of the question, too.
                    scope.index.extend(
                        before,
                        weighted_terms("", context=doc.text, context_weight=self.next_weight),
                    )
            if doc.recallable:
                self._add(scope, ref, doc, context)
        scope.high_water, scope.arrived_water = high_water, arrived_water
        if read:  # a top-up that read nothing changed neither the arrays nor the size
            scope.index.freeze()  # here, not on the query path of the next recalls
            scope.nbytes = estimated_bytes(scope)
            self._evict(keep=key)
        scope.refreshed = time.monotonic()

    def _add(
        self, scope: _Scope, ref: tuple[str, int], doc: LexicalDoc, context: str, *, link: bool = True
    ) -> None:
        """Index one recallable document (`context`: the previous turn of its session; `link`: it is its
        session's latest document, to be linked after the one before it)."""
        # The speaker's name is a field of the turn, so "what did Caroline say about..." finds
        # Caroline's turns; the previous turn is context without its speaker's name.
        own = f"{doc.speaker} {doc.text}" if doc.speaker else doc.text
        terms = weighted_terms(own, context=context, context_weight=self.context_weight)
        if doc.speaker:
            self_names = set(tokens(doc.speaker))
            scope.speakers.update(self_names)
            if self.address_weight != 1.0:
                for name in scope.speakers - self_names:
                    if name in terms:
                        terms[name] *= self.address_weight
        scope.index.add(ref, terms)
        if doc.embedding is not None:
            _hold_vector(scope, ref, doc.embedding)
        if doc.session_id is not None and link:
            scope.last_doc[doc.session_id] = ref

    def invalidate(self) -> None:
        with self._lock:
            self._scopes.clear()


def _hold_vector(scope: _Scope, ref: tuple[str, int], blob: bytes) -> None:
    vector = np.frombuffer(blob, dtype="<f4")
    matrix = scope.vectors
    row = len(scope.vector_rows)
    if matrix is None or row >= matrix.shape[0] or matrix.shape[1] != vector.shape[0]:
        if matrix is not None and matrix.shape[1] != vector.shape[0]:
            return  # another model's vector: recall falls back to the index's cosine
        grown = np.zeros((max(1024, 2 * row), vector.shape[0]), dtype=np.float16)
        if matrix is not None:
            grown[:row] = matrix[:row]
        scope.vectors = matrix = grown
    matrix[row] = vector
    scope.vector_rows[ref] = row
