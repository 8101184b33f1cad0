"""Hybrid recall: dense (vector index) + lexical (BM25) candidates, fused, re-checked against PostgreSQL,
then weighted by memory weight, source trust and the semantic boost (DESIGN §2).

The index and the lexicon may lag the store or hold what has since gone cold, been forgotten or been
superseded, so every candidate is hydrated from PostgreSQL and anything no longer recallable at `as_of`
is dropped. What review knows is used on top: facts valid at `as_of` about an entity or attribute the
query names lift the turns that state them; a time expression in the query ("last May", "上周") lifts
what happened then; a semantic memory stands in for its members (they leave the list, and its
provenance lists the members most relevant to the query first).

This module gathers and scores the candidates; pipeline/recall/hits.py turns them into hits and applies
the list rules; pipeline/recall/tuning.py holds the knobs. The store, the lexicon and cold storage are
reached through ports (pipeline/core/ports.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime, timedelta

import numpy as np

from pipeline.core.models import EPISODE, SEMANTIC, Hit
from pipeline.core.ports import (
    ColdStorage,
    Embedder,
    IndexHit,
    LexicalSearch,
    RecallReader,
    Vector,
    VectorIndex,
    embed_queries,
)
from pipeline.core.recall_rows import MemoryKey, RecallEpisode
from pipeline.core.scripts import mostly_cjk
from pipeline.ingest.validation import utcnow
from pipeline.recall import lexical, ranking, updates_order, value_order
from pipeline.recall.hits import (
    Candidate,
    cold_hits,
    history_below_current,
    rank_key,
    stand_in,
    subject_first,
    to_hit,
)
from pipeline.recall.temporal import time_window
from pipeline.recall.tuning import DEFAULT_TUNING, RecallTuning
from pipeline.review.restatements import asked_subjects

__all__ = ["DEFAULT_TUNING", "RecallTuning", "named_role", "named_speaker", "recall"]

Key = MemoryKey  # (kind, ref id)

# Lexical search runs while the query is embedded (torch releases the GIL).
_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="recall")


def recall(
    query: str,
    *,
    agent_id: str,
    user_id: str,
    k: int,
    repo: ColdStorage,
    store: RecallReader,
    index: VectorIndex,
    embedder: Embedder,
    lexicon: LexicalSearch | None,
    as_of: datetime | None = None,
    history: bool = False,
    include_cold: bool = False,
    tuning: RecallTuning = DEFAULT_TUNING,
    now: datetime | None = None,
) -> list[Hit]:
    """The k best recallable memories of one scope; with `as_of`, only what was said and valid then."""
    use_lexical = tuning.lexical and lexicon is not None
    when = as_of or now or utcnow()
    window = time_window(query, when)
    if window is not None and tuning.window_lag_days:
        window = window.extended(timedelta(days=tuning.window_lag_days))
    lex_limit = (
        tuning.window_candidates if window is not None and tuning.window_candidates else tuning.candidates
    )
    # A question about the previous value, or about how it changed, asks for what a newer statement
    # replaced (issue 46): those statements come back flagged `superseded`, as in history mode, and are
    # not pushed below the current ones; `updates_order` then puts the older value first (or in time order).
    earlier = not history and tuning.updates and _asks_earlier(query)
    hydrate = _Hydrator(store, agent_id=agent_id, user_id=user_id, as_of=as_of, history=history or earlier)
    # BM25 and then the hydration of its episodes run while the query is embedded and searched (torch and
    # the database leave the GIL free): at 100k memories that takes ~5 ms of PostgreSQL off the critical path.
    lex_future = (
        _POOL.submit(_search_and_hydrate, lexicon, hydrate, agent_id, user_id, query, lex_limit)
        if use_lexical and lexicon is not None
        else None
    )
    vector = embed_queries(embedder, [query])[0]
    dense_hits = (
        _dense_search(index, vector, agent_id, user_id, tuning.candidates, tuning.passage_discount)
        if tuning.dense
        else []
    )
    lex_hits = lex_future.result() if lex_future is not None else []

    candidates: dict[Key, Candidate] = {}
    dense_list, passage_best = _dense_candidates(dense_hits, candidates)
    lex_list: list[tuple[Key, float]] = []
    for rank, (kind, ref, s) in enumerate(lex_hits, start=1):
        key = (kind, ref)
        c = candidates.setdefault(key, Candidate(key))
        c.lexical, c.lexical_rank = s, rank
        lex_list.append((key, s))
    if tuning.dense and tuning.dense_rescore:
        dense_list = _rescored_dense(
            store, lexicon, vector, candidates, agent_id, user_id, tuning, passage_best
        )
    lists = {"dense": dense_list, "lexical": lex_list}
    lexical_weight = tuning.lexical_weight
    dense_weight = tuning.dense_weight
    if lex_list and not tuning.dense_reads_cjk and mostly_cjk(query):
        dense_weight = 0.0  # the model cannot read the query (RecallTuning.dense_reads_cjk)
    weights = {"dense": dense_weight, "lexical": lexical_weight}
    # Dense alone (no lexicon): the relevance is the cosine itself, as before hybrid recall.
    fused = ranking.normalised(lists, weights=weights) if use_lexical else dict(dense_list)
    for key, value in fused.items():
        candidates[key].fused = value

    # Episodes and semantic memories are hydrated side by side (two connections, one round trip of wait).
    memory_ids = [ref for kind, ref in candidates if kind == SEMANTIC]
    memories_future = (
        _POOL.submit(store.semantic_by_id, memory_ids, agent_id=agent_id, user_id=user_id, as_of=as_of)
        if memory_ids
        else None
    )
    episodes = hydrate([ref for kind, ref in candidates if kind == EPISODE])
    episodes |= _successors(candidates, episodes, hydrate, tuning)
    memories = memories_future.result() if memories_future is not None else {}
    speaker, role = _named_party(query, episodes.values())
    asked = asked_subjects(query) if memories else frozenset()
    hit_tuning = replace(tuning, superseded_factor=1.0) if earlier else tuning
    hits = [
        hit
        for c in candidates.values()
        if (hit := to_hit(c, episodes, memories, window, hit_tuning, speaker, role, asked)) is not None
    ]
    if include_cold:
        # Cold memories are found by vector alone; in hybrid mode their cosine is put on the fused scale (the
        # cosine spans the fused range, whose top is the sum of the weights), so that they neither swamp nor
        # vanish under the hot ones.
        scale = tuning.dense_weight + tuning.lexical_weight if use_lexical else 1.0
        hits += cold_hits(repo, vector, agent_id=agent_id, user_id=user_id, k=k, scale=scale)
    if not earlier:
        hits = history_below_current(hits, tuning.superseded_factor)
    hits = updates_order.order(hits, episodes, tuning, query, k)
    hits.sort(key=rank_key, reverse=True)
    return _listed(hits, tuning, k)


def _asks_earlier(query: str) -> bool:
    asked = value_order.asks(query)
    return asked is not None and asked.ordering != value_order.CURRENT


def _listed(hits: list[Hit], tuning: RecallTuning, k: int) -> list[Hit]:
    """The first `k` of the sorted hits, after the list rules: review's memory of what a question asks about
    first, then each memory standing in for the members it states."""
    if tuning.subject_first:
        hits = subject_first(hits)
    if tuning.stand_in:
        hits = stand_in(hits, tuning.stand_in_max)
    return hits[:k]


class _Hydrator:
    """Episodes of one recall read from PostgreSQL at most once each, whichever step asks first."""

    def __init__(
        self, store: RecallReader, *, agent_id: str, user_id: str, as_of: datetime | None, history: bool
    ) -> None:
        self._store, self._scope, self._as_of, self._history = store, (agent_id, user_id), as_of, history
        self._asked: set[int] = set()
        self._found: dict[int, RecallEpisode] = {}

    def __call__(self, ids: Iterable[int]) -> dict[int, RecallEpisode]:
        """The recallable episodes among `ids` (those not asked for before are read now)."""
        wanted = set(ids)
        new = sorted(wanted - self._asked)
        if new:
            agent_id, user_id = self._scope
            self._found.update(
                self._store.episodes(
                    new, agent_id=agent_id, user_id=user_id, as_of=self._as_of, history=self._history
                )
            )
            self._asked.update(new)
        return {i: self._found[i] for i in wanted if i in self._found}


def _successors(
    candidates: dict[Key, Candidate],
    episodes: dict[int, RecallEpisode],
    hydrate: _Hydrator,
    tuning: RecallTuning,
) -> dict[int, RecallEpisode]:
    """The statements that superseded a candidate (review's links), made candidates when they are not: the
    question asked in the old value's words is answered by the new one. Each starts from the relevance of
    the best statement it superseded; pipeline/recall/updates_order.py then ranks it above them."""
    wanted = updates_order.successors(episodes.values()) if tuning.updates else set()
    if not wanted:
        return {}
    found = hydrate(wanted)
    for old in episodes.values():
        for new_id in old.superseded_by:
            if new_id in found:
                c = candidates.setdefault((EPISODE, new_id), Candidate((EPISODE, new_id)))
                c.fused = max(c.fused, candidates[(EPISODE, old.id)].fused)
    return found


def _search_and_hydrate(
    lexicon: LexicalSearch, hydrate: _Hydrator, agent_id: str, user_id: str, query: str, limit: int
) -> list[tuple[str, int, float]]:
    hits = lexicon.search(agent_id, user_id, lexical_query(query), limit)
    hydrate(ref for kind, ref, _ in hits if kind == EPISODE)
    return hits


# "the user" in an agent's question names the scope's user, the speaker of its turns, who never calls
# themself that: as a search term it only finds turns about software users ("user interviews", "user
# auth"). Off the lexical query, BM25 R@10 on assistant_help (258 of 369 questions say "the user") went
# 0.383 -> 0.396; friends_chat and LoCoMo ask by name and are unchanged; issue 27's concierge case ranked
# "...roadmaps and user interviews" above the move for "Where does the user live?". The dense query keeps it.
_THE_USER = re.compile(r"\bthe\s+user(?:'s)?(?=\W|$)", re.IGNORECASE)


def lexical_query(query: str) -> str:
    """The query as the lexical side searches it: without "the user" (see above), unless that is all it says."""
    stripped = _THE_USER.sub(" ", query)
    return stripped if stripped.strip(" ?.!,") else query


def _dense_search(
    index: VectorIndex, vector: Vector, agent_id: str, user_id: str, limit: int, discount: float
) -> list[tuple[Key, IndexHit]]:
    """Up to `limit` memories the vector search finds, best first, each once with its best point (its main
    vector or, for a long episode, one of its passages, whose cosine is discounted: it was the best of
    many windows, `ranking.passage_cosine`). When passages crowd the first `limit` points,
    the search is asked once more for four times as many, so that one long turn does not push the other
    memories out of the candidates."""
    hits = index.search(vector.tolist(), agent_id=agent_id, user_id=user_id, limit=limit)
    best = _best_per_memory(hits, discount)
    if len(hits) >= limit and len(best) < limit:
        best = _best_per_memory(
            index.search(vector.tolist(), agent_id=agent_id, user_id=user_id, limit=4 * limit), discount
        )
    return best[:limit]


def _dense_candidates(
    dense_hits: list[tuple[Key, IndexHit]], candidates: dict[Key, Candidate]
) -> tuple[list[tuple[Key, float]], dict[Key, float]]:
    """The dense list, each hit made a candidate; and the cosine of those found by a passage, so that
    re-scoring by the main vector alone cannot lose what the index found deep in a long turn."""
    dense_list: list[tuple[Key, float]] = []
    passage_best: dict[Key, float] = {}
    for rank, (key, h) in enumerate(dense_hits, start=1):
        if h.payload.get("passage"):
            passage_best[key] = h.score
        c = candidates.setdefault(key, Candidate(key))
        c.dense, c.dense_rank = h.score, rank
        dense_list.append((key, max(h.score, 0.0)))
    return dense_list, passage_best


def _best_per_memory(hits: list[IndexHit], discount: float) -> list[tuple[Key, IndexHit]]:
    out: dict[Key, IndexHit] = {}
    for h in hits:
        if h.payload.get("passage"):
            h = replace(h, score=ranking.passage_cosine(h.score, discount))
        key = (str(h.payload.get("kind")), int(h.payload.get("ref_id", -1)))
        if key not in out or h.score > out[key].score:
            out[key] = h
    return sorted(out.items(), key=lambda kv: kv[1].score, reverse=True)


def _rescored_dense(
    store: RecallReader,
    lexicon: LexicalSearch | None,
    vector: Vector,
    candidates: dict[Key, Candidate],
    agent_id: str,
    user_id: str,
    tuning: RecallTuning,
    passage_best: dict[Key, float] | None = None,
) -> list[tuple[Key, float]]:
    """The dense list re-scored: the dense hits and the lexical candidates up to `tuning.dense_lexical`, each
    episode by the cosine of its stored vector, best first; semantic memories keep the index's cosine. The
    vectors come from the lexicon when it holds them, else from PostgreSQL. A long episode the vector search
    found by a passage scores at least that passage's cosine (`passage_best`): its stored vector reads the
    start of the turn only."""
    keys = [
        k
        for k, c in candidates.items()
        if c.dense is not None or (c.lexical_rank or 1e9) <= tuning.dense_lexical
    ]
    vectors = _episode_vectors(store, lexicon, {key for key in keys if key[0] == EPISODE}, agent_id, user_id)
    scored: list[tuple[Key, float]] = []
    episodes: list[Key] = []
    rows: list[Vector] = []
    for key in keys:
        c = candidates[key]
        own = vectors.get(key) if key[0] == EPISODE else None
        if own is None:
            # A semantic memory, or an episode the lexicon holds no vector of yet (re-heated since the last
            # top-up): the vector search's own cosine stands, if it found it.
            if c.dense is not None:
                scored.append((key, max(c.dense, 0.0)))
            continue
        episodes.append(key)
        rows.append(own)
    if rows:
        # One matrix product for all of them (a Python loop of ~250 norms and dots cost ~2 ms a query).
        matrix = np.stack(rows)
        norms = np.linalg.norm(matrix, axis=1)
        cosines = (matrix @ vector) / np.where(norms > 0, norms, 1.0)
        for key, value in zip(episodes, cosines.tolist(), strict=True):
            c = candidates[key]
            value = max(value, (passage_best or {}).get(key, value))
            if c.dense is None:
                c.dense = value  # a lexical candidate's own cosine (no dense_rank: not a vector-search hit)
            scored.append((key, max(value, 0.0)))
    scored.sort(key=lambda kv: kv[1], reverse=True)
    return scored


def _episode_vectors(
    store: RecallReader, lexicon: LexicalSearch | None, keys: set[Key], agent_id: str, user_id: str
) -> dict[Key, Vector]:
    if lexicon is not None and lexicon.keep_vectors:
        return lexicon.vectors(agent_id, user_id, keys)
    stored = store.embeddings(sorted(ref for _, ref in keys), agent_id=agent_id, user_id=user_id)
    return {(EPISODE, ref): v for ref, v in stored.items()}


def named_speaker(query: str, speakers: Iterable[str | None]) -> str | None:
    """The one speaker among `speakers` whom the query names (any word of the name), else None: a query
    naming two people ("what did Melanie give Caroline") favours neither."""
    words = set(lexical.tokens(query))
    # Speakers repeat across a query's candidates: each name is tokenised once.
    named = {s for s in set(speakers) if s and words.intersection(lexical.tokens(s))}
    return named.pop() if len(named) == 1 else None


# An agent names the two sides of its conversation by their roles: "the user" spoke the `user` turns, "the
# assistant" (or "the agent") the `assistant` ones. Such a question is a question about what that side said,
# as "what did Caroline paint" is about Caroline's turns, and `RecallTuning.speaker_boost` favours them the
# same way. On assistant_help, 328 of the 339 evidence turns of questions saying "the user" are the user's
# own; the assistant's long replies on the same topic outranked them.
_ROLES_NAMED = {
    "user": re.compile(
        r"\b(?:the|this)\s+user\b(?!\s+(?:interface|experience|story|stories|base|agent)\b)", re.I
    ),
    "assistant": re.compile(r"\bthe\s+(?:assistant|agent)\b", re.I),
}


def _named_party(query: str, episodes: Iterable[RecallEpisode]) -> tuple[str | None, str | None]:
    """(the person, the role) the query names as the speaker it asks about; at most one of them."""
    speaker = named_speaker(query, (e.speaker for e in episodes))
    role = named_role(query)
    if speaker is not None and role is not None:
        return None, None  # two parties ("what did the assistant tell Greta"): neither is favoured
    return speaker, role


def named_role(query: str) -> str | None:
    """The one role ("user" or "assistant") the query names as a speaker ("what does the user prefer"),
    else None: a query naming both favours neither."""
    named = [role for role, pattern in _ROLES_NAMED.items() if pattern.search(query)]
    return named[0] if len(named) == 1 else None
