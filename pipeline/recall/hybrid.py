"""Hybrid recall: dense (vector index) + lexical (BM25) candidates, fused, re-checked against PostgreSQL,
then weighted by memory weight, source trust and the semantic boost (DESIGN §2).

The index and the lexicon may lag the store or hold what has since gone cold, been forgotten or been
superseded, so every candidate is hydrated from PostgreSQL and anything no longer recallable at `as_of`
is dropped. What review knows is used on top: facts valid at `as_of` about an entity or attribute the
query names lift the turns that state them; a time expression in the query ("last May", "上周") lifts
what happened then; a semantic memory stands in for its members (they leave the list, and its
provenance lists the members most relevant to the query first).
"""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Literal

import numpy as np

from pipeline.adapters.lexicon_cache import Lexicon
from pipeline.adapters.postgres.recall_sql import RecallEpisode, RecallStore, SemanticRow
from pipeline.adapters.postgres.repository import Repository
from pipeline.adapters.postgres.tables import EPISODE, SEMANTIC
from pipeline.core.models import Hit
from pipeline.core.ports import Embedder, Vector, VectorIndex
from pipeline.ingest.validation import utcnow
from pipeline.recall import lexical, ranking
from pipeline.recall.temporal import Window, time_window

Key = tuple[str, int]  # (kind, ref id)


@dataclass(frozen=True, slots=True)
class RecallTuning:
    """Knobs of the ranking; the defaults are what measured best on LoCoMo conversations 1-5."""

    dense: bool = True
    lexical: bool = True
    # LoCoMo 1-5 (BENCHMARKS.md): min-max fusion beat RRF by ~0.05 R@5, and MiniLM's cosine is the weaker
    # signal on conversational turns (dense alone 0.27 R@5 vs BM25 with context 0.63), hence 0.3 : 1 at
    # first; since every candidate has a cosine (dense_rescore) and with the session prior, 0.4 : 1: R@5 /
    # R@10 0.723 / 0.804 -> 0.726 / 0.805 (held out 0.706 / 0.788 -> 0.708 / 0.787).
    fusion: Literal["rrf", "normalised"] = "normalised"
    rrf_k: float = 60.0
    dense_weight: float = 0.4
    lexical_weight: float = 1.0
    candidates: int = 50  # from each retriever
    # LoCoMo 1-5, the 124 questions naming a time: boost 2.0 with a 3-day lag and 200 candidates took
    # R@5 / R@10 from 0.706 / 0.746 to 0.730 / 0.794 (1.5 / no lag / 50: the previous defaults).
    window_boost: float = 2.0
    # What happened in a window is often told later ("yesterday I went bowling"): a turn counts as in the
    # window up to this many days after its end (0, 3, 7, 14 measured; 3 best).
    window_lag_days: float = 3.0
    # With a time window, this many lexical candidates (0: `candidates`), so that the turns of that time
    # which share few of the query's words still reach the window boost (100: R@10 -0.024, 400: same).
    window_candidates: int = 200
    # Measured and not kept (LoCoMo 1-5, R@5 / R@10 from 0.723 / 0.796): window_boost 3.0, 0.724 / 0.796;
    # the words naming the window left out of the lexical query ("on March 16, 2022": a turn that says
    # "March" is not therefore from March), 0.723 / 0.797, held out 0.699 / 0.776 -> 0.696 / 0.775.
    fact_boost: float = 1.2
    superseded_factor: float = 0.5  # history mode only; superseded ones are dropped otherwise
    stand_in: bool = True  # a semantic memory hides its members from the list
    # A memory folded from more turns than this is a topic rather than a statement: it keeps its own rank
    # and its members keep theirs (on LoCoMo, rules-only review builds some 300-turn clusters). 12 -> 8,
    # LoCoMo 1-5 with speaker_boost 1.3: R@5 / R@10 0.735 / 0.811 -> 0.738 / 0.813 (held out 0.723 /
    # 0.796 -> 0.724 / 0.796; 20: 0.720 / 0.799 all conversations at speaker_boost 1.2).
    stand_in_max: int = 8
    # Review folds a member at this weight (ReviewSettings.member_weight) because its memory ranks for it;
    # a memory too big to stand in does not, so its members get their own weight back (LoCoMo: 2,150 turns
    # sit in memories of more than 12 members).
    member_weight: float = 0.5
    unfold_big: bool = True
    # A turn ranks at least this share of the relevance of the turn before it in its session (the reply to
    # a match), and `before_match` of the turn after it (the question a matching answer answered).
    # LoCoMo 1-5, on the fused relevance before any factor: 0.7 / 0.5 took R@5 / R@10 from 0.692 / 0.780 to
    # 0.722 / 0.795 (0.5 / 0.5: 0.707 / 0.795; 0.6 / 0.4: 0.712 / 0.797; 0.8 / 0.6: 0.723 / 0.794). The
    # previous/next-turn context of the BM25 documents stays: without it this measured 0.03 lower.
    after_match: float = 0.7
    before_match: float = 0.5
    # Only the best candidates spread: their neighbours must be hydrated too (LoCoMo 1-5: the same recall
    # from the best 10 as from all, at 47 instead of 76 ms a question).
    spread_from: int = 10
    # A candidate gains this share of the best relevance among the other candidates of its session (the
    # cluster hypothesis, session-wide: what a conversation is about lifts its other matching turns over
    # equally matching turns of conversations about something else). LoCoMo 1-5, with dense_rescore, at
    # dense_weight 0.3:
    # R@5 / R@10 0.727 / 0.799 -> 0.723 / 0.804 (0.1: 0.728 / 0.802; 0.15: 0.729 / 0.802; 0.4: 0.722 /
    # 0.802), held out 0.698 / 0.778 -> 0.706 / 0.788; R@10 is the target this is short of, hence 0.25.
    # The opposite, a factor 0.8 per better hit already taken from the same session (diversity for
    # multi-evidence questions), lost 0.024 / 0.019 (held out 0.032 / 0.037); spreading two turns away
    # (the same speaker's previous / next turn) at 0.35 / 0.35 was within 0.002 of none (0.5 / 0.5 and
    # 0.6 / 0.4 lower).
    # With the final defaults (`hindsight bench locomo --variant no-session-prior`): 0.728 / 0.798 without
    # it, 0.726 / 0.805 with it (held out 0.689 / 0.780 -> 0.708 / 0.787).
    session_prior: float = 0.25
    # Every candidate gets a cosine: the vector search's 50 hits have theirs, and the lexical candidates
    # (up to `dense_lexical`) get one from the embeddings the lexicon holds (Lexicon(vectors=True); else
    # one SELECT of them). Before, a lexical candidate outside the vector search's 50 counted 0 on the dense
    # side, however close it was. Fusion then min-max-normalises the dense list over all of them
    # (`dense_keep` 0). LoCoMo 1-5: R@5 / R@10 0.723 / 0.796 -> 0.727 / 0.799, held out 0.699 / 0.776 ->
    # 0.698 / 0.778 (at dense_weight 0.3, before the session prior; 0.5: 0.729 / 0.799 but held-out R@5
    # 0.690; 0.2: 0.720 / 0.797).
    # With the final defaults (`--variant no-rescore`): 0.726 / 0.798 without it, 0.726 / 0.805 with it
    # (held out 0.698 / 0.785 -> 0.708 / 0.787).
    dense_rescore: bool = True
    dense_lexical: int = 200
    dense_keep: int = 0  # the re-scored dense list keeps this many, best first (0: all)
    # Off by default: a turn's dense relevance as the cosine of the query with its vector plus these shares
    # of the vectors of the turns before and after it in its session (normalised): a reply alone ("Yes,
    # twice!") says little to MiniLM. LoCoMo 1-5 with 1.0 / 0.5 over the dense hits and the best 50 lexical
    # candidates: R@5 / R@10 0.723 / 0.796 -> 0.725 / 0.797 (held out 0.699 / 0.776 -> 0.711 / 0.780);
    # over all candidates: 0.729 / 0.797 (held out 0.699 / 0.780): below dense_rescore's R@10 alone.
    # (When the vectors were read with a SELECT it also took `bench recall`'s p95 ratio to ~1.7.)
    dense_previous: float = 0.0
    dense_next: float = 0.0
    # A query naming exactly one of the people who spoke in its candidates favours what that person said
    # over what others said to or about them (LoCoMo: 83% of the evidence of such questions). LoCoMo 1-5,
    # with the spread above: R@5 / R@10 0.715 / 0.791 -> 0.722 / 0.795 (1.1: 0.722 / 0.794; 1.3: 0.725 /
    # 0.798, but adversarial questions, which name the wrong person on purpose, lose more). Re-measured
    # with the final pipeline (novelty knee 0.1, dense_rescore, session prior), 1.2 -> 1.3: 0.731 / 0.807
    # -> 0.735 / 0.811 (adversarial 0.821 / 0.911 -> 0.806 / 0.907), held out 0.716 / 0.793 -> 0.723 /
    # 0.796; 1.4: 0.731 / 0.810; 1.5: 0.729 / 0.810.
    speaker_boost: float = 1.3
    # How much decay counts in the ranking: a memory's weight is base_weight x decay (decay = weight /
    # base_weight, DESIGN §2) and ranks as base_weight x decay ** this. The base (what a person set,
    # review's member weight) always counts whole. 1 is DESIGN §2's relevance x weight. 0: decay decides
    # what goes to cold storage, not the order of what is still hot. `hindsight bench month` (30 days of
    # 1,000 turns, LoCoMo recall@10 review / raw): 1: 0.654 / 0.774 (ratio 0.845); 0.5: 0.924; 0.25:
    # 0.942; 0: 0.738, ratio 0.954. At 1, a relevant fact left untouched for three weeks (weight 0.35)
    # ranked below a fresh turn a third as relevant; what is current is what the fact chains say, not
    # what is recent. Settings: `recall.decay_exponent`.
    decay_exponent: float = 0.0


DEFAULT_TUNING = RecallTuning()
# Lexical search runs while the query is embedded (torch releases the GIL).
_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="recall")


@dataclass
class _Candidate:
    key: Key
    dense: float | None = None  # cosine (from the vector search, or re-taken: RecallTuning.dense_rescore)
    dense_rank: int | None = None
    lexical: float | None = None  # BM25
    lexical_rank: int | None = None
    fused: float = 0.0
    neighbour: float = 0.0  # relevance shared by an adjacent turn (ranking.spread), when it raised `fused`
    # Cosine with the turn and its neighbours mixed in (RecallTuning.dense_previous), when measured.
    dense_context: float | None = None


def recall(
    query: str,
    *,
    agent_id: str,
    user_id: str,
    k: int,
    repo: Repository,
    store: RecallStore,
    index: VectorIndex,
    embedder: Embedder,
    lexicon: Lexicon | None,
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
    hydrate = _Hydrator(store, agent_id=agent_id, user_id=user_id, as_of=as_of, history=history)
    # BM25 and then the hydration of its episodes run while the query is embedded and searched (torch and
    # the database leave the GIL free): at 100k memories that takes ~5 ms of PostgreSQL off the critical path.
    lex_future = (
        _POOL.submit(_search_and_hydrate, lexicon, hydrate, agent_id, user_id, query, lex_limit)
        if use_lexical and lexicon is not None
        else None
    )
    # The facts the query names depend on the query alone: their round trip overlaps the embedding.
    facts_future = _POOL.submit(_fact_turns, store, query, agent_id, user_id, as_of, tuning)
    vector = embedder.embed([query])[0]
    dense_hits = (
        index.search(vector.tolist(), agent_id=agent_id, user_id=user_id, limit=tuning.candidates)
        if tuning.dense
        else []
    )
    lex_hits = lex_future.result() if lex_future is not None else []

    candidates: dict[Key, _Candidate] = {}
    dense_list: list[tuple[Key, float]] = []
    for rank, h in enumerate(dense_hits, start=1):
        key = (str(h.payload.get("kind")), int(h.payload.get("ref_id", -1)))
        c = candidates.setdefault(key, _Candidate(key))
        c.dense, c.dense_rank = h.score, rank
        dense_list.append((key, max(h.score, 0.0)))
    lex_list: list[tuple[Key, float]] = []
    for rank, (kind, ref, s) in enumerate(lex_hits, start=1):
        key = (kind, ref)
        c = candidates.setdefault(key, _Candidate(key))
        c.lexical, c.lexical_rank = s, rank
        lex_list.append((key, s))
    adjacent = lexicon.adjacent(agent_id, user_id, candidates) if use_lexical and lexicon is not None else {}
    if tuning.dense and (tuning.dense_rescore or tuning.dense_previous > 0 or tuning.dense_next > 0):
        dense_list = _dense_in_context(
            store, lexicon, vector, candidates, adjacent, agent_id, user_id, tuning
        )
    lists = {"dense": dense_list, "lexical": lex_list}
    weights = {"dense": tuning.dense_weight, "lexical": tuning.lexical_weight}
    if not use_lexical:
        # Dense alone: the relevance is the cosine itself, as before hybrid recall.
        fused = dict(dense_list)
    elif tuning.fusion == "rrf":
        fused = ranking.rrf(lists, k=tuning.rrf_k, weights=weights)
    else:
        fused = ranking.normalised(lists, weights=weights)
    for key, value in fused.items():
        candidates[key].fused = value
    if adjacent and (tuning.after_match > 0 or tuning.before_match > 0):
        _spread_to_neighbours(candidates, adjacent, tuning)
    if lexicon is not None and tuning.session_prior > 0:
        _session_prior(candidates, lexicon, agent_id, user_id, tuning.session_prior)

    # Episodes and semantic memories are hydrated side by side (two connections, one round trip of wait).
    memory_ids = [ref for kind, ref in candidates if kind == SEMANTIC]
    memories_future = (
        _POOL.submit(store.semantic_by_id, memory_ids, agent_id=agent_id, user_id=user_id, as_of=as_of)
        if memory_ids
        else None
    )
    episodes = hydrate([ref for kind, ref in candidates if kind == EPISODE])
    memories = memories_future.result() if memories_future is not None else {}
    fact_turns = facts_future.result()
    speaker = named_speaker(query, (e.speaker for e in episodes.values()))
    hits = [
        hit
        for c in candidates.values()
        if (hit := _hit(c, episodes, memories, window, fact_turns, tuning, speaker)) is not None
    ]
    if include_cold:
        # Cold memories are found by vector alone; in hybrid mode their cosine rank is put on the fused
        # scale (a reciprocal rank), so that they neither swamp nor vanish under the hot ones.
        rrf_k = tuning.rrf_k if use_lexical and tuning.fusion == "rrf" else None
        hits += _cold_hits(repo, vector, agent_id=agent_id, user_id=user_id, k=k, rrf_k=rrf_k)
    hits = _history_below_current(hits, tuning.superseded_factor)
    hits.sort(key=_rank_key, reverse=True)
    if tuning.stand_in:
        hits = _stand_in(hits, tuning.stand_in_max)
    return hits[:k]


class _Hydrator:
    """Episodes of one recall read from PostgreSQL at most once each, whichever step asks first."""

    def __init__(
        self, store: RecallStore, *, agent_id: str, user_id: str, as_of: datetime | None, history: bool
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


def _search_and_hydrate(
    lexicon: Lexicon, hydrate: _Hydrator, agent_id: str, user_id: str, query: str, limit: int
) -> list[tuple[str, int, float]]:
    hits = lexicon.search(agent_id, user_id, query, limit)
    hydrate(ref for kind, ref, _ in hits if kind == EPISODE)
    return hits


def _dense_in_context(
    store: RecallStore,
    lexicon: Lexicon | None,
    vector: Vector,
    candidates: dict[Key, _Candidate],
    adjacent: dict[Key, tuple[Key | None, Key | None]],
    agent_id: str,
    user_id: str,
    tuning: RecallTuning,
) -> list[tuple[Key, float]]:
    """The dense list re-scored: the dense hits and the lexical candidates up to `tuning.dense_lexical`, each
    episode by the cosine of its vector (with `dense_previous` / `dense_next` of its session neighbours'
    mixed in), best first (`tuning.dense_keep` of them, 0: all); semantic memories keep the index's cosine.
    The vectors come from the lexicon when it holds them, else from PostgreSQL."""
    keys = [
        k
        for k, c in candidates.items()
        if c.dense is not None or (c.lexical_rank or 1e9) <= tuning.dense_lexical
    ]
    wanted = {key for key in keys if key[0] == EPISODE}
    if tuning.dense_previous > 0 or tuning.dense_next > 0:
        wanted.update(n for key in keys for n in adjacent.get(key, (None, None)) if n is not None)
    vectors = _episode_vectors(store, lexicon, wanted, agent_id, user_id)
    mixing = tuning.dense_previous > 0 or tuning.dense_next > 0
    scored: list[tuple[Key, float]] = []
    episodes: list[Key] = []
    rows: list[Vector] = []
    for key in keys:
        c = candidates[key]
        if key[0] != EPISODE:
            if c.dense is not None:
                scored.append((key, max(c.dense, 0.0)))
            continue
        own = vectors.get(key)
        if own is None:
            # The lexicon may not hold it yet (a memory re-heated since the last top-up, or a vector of
            # another model): the vector search's own cosine stands, if it found it.
            if c.dense is not None:
                scored.append((key, max(c.dense, 0.0)))
            continue
        episodes.append(key)
        rows.append(_mixed(own, adjacent.get(key, (None, None)), vectors, tuning) if mixing else own)
    if rows:
        # One matrix product for all of them (a Python loop of ~250 norms and dots cost ~2 ms a query).
        matrix = np.stack(rows)
        norms = np.linalg.norm(matrix, axis=1)
        cosines = (matrix @ vector) / np.where(norms > 0, norms, 1.0)
        for key, value in zip(episodes, cosines.tolist(), strict=True):
            c = candidates[key]
            if mixing:
                c.dense_context = value
            elif c.dense is None:
                c.dense = value  # a lexical candidate's own cosine (no dense_rank: not a vector-search hit)
            scored.append((key, max(value, 0.0)))
    scored.sort(key=lambda kv: kv[1], reverse=True)
    return scored[: tuning.dense_keep or None]


def _mixed(
    own: Vector, neighbours: tuple[Key | None, Key | None], vectors: dict[Key, Vector], tuning: RecallTuning
) -> Vector:
    mixed = own.astype(np.float32, copy=True)
    for neighbour, share in zip(neighbours, (tuning.dense_previous, tuning.dense_next), strict=True):
        if neighbour is not None and share > 0 and (v := vectors.get(neighbour)) is not None:
            mixed += share * v
    return mixed


def _episode_vectors(
    store: RecallStore, lexicon: Lexicon | None, keys: set[Key], agent_id: str, user_id: str
) -> dict[Key, Vector]:
    if lexicon is not None and lexicon.keep_vectors:
        return lexicon.vectors(agent_id, user_id, keys)
    stored = store.embeddings(sorted(ref for _, ref in keys), agent_id=agent_id, user_id=user_id)
    return {(EPISODE, ref): v for ref, v in stored.items()}


def _spread_to_neighbours(
    candidates: dict[Key, _Candidate],
    adjacent: dict[Key, tuple[Key | None, Key | None]],
    tuning: RecallTuning,
) -> None:
    """Raise each candidate to the share of its neighbours' relevance (ranking.spread); a neighbour that
    was not a candidate becomes one (hydration then drops it if it is not recallable)."""
    best = sorted((c for c in candidates.values() if c.fused > 0), key=lambda c: c.fused, reverse=True)
    fused = {c.key: c.fused for c in best[: tuning.spread_from]}
    spread = ranking.spread(fused, adjacent, after=tuning.after_match, before=tuning.before_match)
    for key, value in spread.items():
        c = candidates.setdefault(key, _Candidate(key))
        if value > c.fused:
            c.fused = c.neighbour = value


def _session_prior(
    candidates: dict[Key, _Candidate], lexicon: Lexicon, agent_id: str, user_id: str, share: float
) -> None:
    """Each candidate gains `share` of the best relevance among the other candidates of its session."""
    sessions = lexicon.sessions(agent_id, user_id, candidates)
    best: dict[str, list[float]] = {}
    for key, session in sessions.items():
        top = best.setdefault(session, [0.0, 0.0])
        value = candidates[key].fused
        if value > top[0]:
            top[0], top[1] = value, top[0]
        elif value > top[1]:
            top[1] = value
    for key, session in sessions.items():
        c = candidates[key]
        first, second = best[session]
        c.fused += share * (second if c.fused == first else first)


def named_speaker(query: str, speakers: Iterable[str | None]) -> str | None:
    """The one speaker among `speakers` whom the query names (any word of the name), else None: a query
    naming two people ("what did Melanie give Caroline") favours neither."""
    words = set(lexical.tokens(query))
    # Speakers repeat across a query's candidates: each name is tokenised once.
    named = {s for s in set(speakers) if s and words.intersection(lexical.tokens(s))}
    return named.pop() if len(named) == 1 else None


def _fact_turns(
    store: RecallStore, query: str, agent_id: str, user_id: str, as_of: datetime | None, tuning: RecallTuning
) -> set[str]:
    if tuning.fact_boost == 1.0:
        return set()
    words = sorted({w.lower() for w in lexical.words(query)})
    facts = store.facts_named(agent_id, user_id, words, as_of=as_of)
    return {t for f in facts for t in f.turn_ids}


def _hit(
    c: _Candidate,
    episodes: dict[int, RecallEpisode],
    memories: dict[int, SemanticRow],
    window: Window | None,
    fact_turns: set[str],
    tuning: RecallTuning,
    speaker: str | None = None,
) -> Hit | None:
    kind, ref = c.key
    if kind == SEMANTIC:
        memory = memories.get(ref)
        if memory is None:
            return None
        in_window = window is not None and _overlaps(window, memory.valid_from, memory.valid_to)
        factors = ranking.Factors(
            weight=ranking.ranked_weight(memory.weight, memory.base_weight, tuning.decay_exponent),
            trust=1.0,
            semantic=ranking.SEMANTIC_BOOST,
            window=tuning.window_boost if in_window else 1.0,
            fact=tuning.fact_boost if fact_turns.intersection(memory.turn_ids) else 1.0,
        )
        return Hit(
            id=f"{SEMANTIC}:{memory.id}",
            kind="semantic",
            text=memory.text,
            score=c.fused * factors.product(),
            weight=memory.weight,
            valid_from=memory.valid_from,
            valid_to=memory.valid_to,
            source_turn_ids=memory.turn_ids,
            session_id=None,
            event_time=memory.valid_from,
            explain=_explain(c, factors, window),
        )
    row = episodes.get(ref)
    if row is None:
        return None
    turn_ids = (row.turn_id, *row.merged_turn_ids)
    unfolded = tuning.unfold_big and row.folded_into > tuning.stand_in_max and tuning.member_weight > 0
    weight, base = row.weight, row.weight if row.base_weight is None else row.base_weight
    if unfolded and base > 0:  # the member weight goes (up to 1), the decay stays
        lift = max(base, min(base / tuning.member_weight, 1.0)) / base
        weight, base = weight * lift, base * lift
    factors = ranking.Factors(
        weight=ranking.ranked_weight(weight, base, tuning.decay_exponent),
        trust=ranking.SOURCE_TRUST.get(row.source, ranking.UNKNOWN_TRUST),
        window=tuning.window_boost if window is not None and window.contains(row.ts) else 1.0,
        fact=tuning.fact_boost if fact_turns.intersection(turn_ids) else 1.0,
        superseded=tuning.superseded_factor if row.superseded else 1.0,
        speaker=tuning.speaker_boost if speaker is not None and row.speaker == speaker else 1.0,
    )
    return Hit(
        id=f"{EPISODE}:{row.id}",
        kind="episode",
        text=row.content,
        score=c.fused * factors.product(),
        weight=row.weight,
        valid_from=row.ts,
        valid_to=None,
        source_turn_ids=turn_ids,
        session_id=row.session_id,
        event_time=row.ts,
        superseded=row.superseded,
        explain=_explain(c, factors, window),
    )


def _rank_key(hit: Hit) -> tuple[float, bool]:
    # On equal scores (min-max fusion gives the last candidate of a list 0) what is current goes first.
    return hit.score, not hit.superseded


def _history_below_current(hits: list[Hit], factor: float) -> list[Hit]:
    """History mode: a superseded statement never outranks a current one, however well it matches the
    query's words (it usually matches them best: the question is asked in the old value's terms)."""
    current = [h.score for h in hits if not h.superseded]
    if not current or len(current) == len(hits):
        return hits
    floor = min(current) * factor
    return [replace(h, score=min(h.score, floor)) if h.superseded else h for h in hits]


def _overlaps(window: Window, start: datetime, end: datetime | None) -> bool:
    return start < window.end and (end is None or end > window.start)


def _explain(c: _Candidate, f: ranking.Factors, window: Window | None) -> dict[str, Any]:
    return {
        "dense": None if c.dense is None else round(c.dense, 6),
        "dense_rank": c.dense_rank,
        "dense_in_context": None if c.dense_context is None else round(c.dense_context, 6),
        "lexical": None if c.lexical is None else round(c.lexical, 6),
        "lexical_rank": c.lexical_rank,
        "fused": round(c.fused, 6),
        "from_neighbour": c.neighbour > 0,
        "weight": round(f.weight, 6),
        "trust": f.trust,
        "semantic_boost": f.semantic,
        "window_boost": f.window,
        "window": None
        if window is None
        else [window.start.isoformat(), window.end.isoformat(), window.phrase],
        "fact_boost": f.fact,
        "superseded_factor": f.superseded,
        "speaker_boost": f.speaker,
    }


def _stand_in(hits: list[Hit], max_members: int) -> list[Hit]:
    """A semantic memory of at most `max_members` turns stands in for its members: it ranks at least as
    high as its best member found (times the semantic boost) and the members leave the list. Every
    memory lists its most relevant members' turns first. `hits` come sorted by score; so does the result."""
    relevance: dict[str, float] = {}
    for h in hits:
        if h.kind == "episode":
            for t in h.source_turn_ids:
                relevance.setdefault(t, h.score)
    lifted = []
    for h in hits:
        stands_in = h.kind == "semantic" and len(h.source_turn_ids) <= max_members
        best = max((relevance.get(t, 0.0) for t in h.source_turn_ids), default=0.0) if stands_in else 0.0
        if best * ranking.SEMANTIC_BOOST > h.score:
            explain = {**(h.explain or {}), "stands_in_for_score": round(best, 6)}
            h = replace(h, score=best * ranking.SEMANTIC_BOOST, explain=explain)
        lifted.append(h)
    lifted.sort(key=_rank_key, reverse=True)
    covered: set[str] = set()
    out: list[Hit] = []
    for h in lifted:
        if h.kind == "semantic":
            if len(h.source_turn_ids) <= max_members:
                covered.update(h.source_turn_ids)
            out.append(replace(h, source_turn_ids=ranking.order_turns(h.source_turn_ids, relevance)))
        elif not (h.source_turn_ids and covered.issuperset(h.source_turn_ids)):
            out.append(h)
    return out


COLD_SCAN_LIMIT = 50_000


def _cold_hits(
    repo: Repository, vector: Vector, *, agent_id: str, user_id: str, k: int, rrf_k: float | None
) -> list[Hit]:
    """Cold storage is not in the vector index: scan the scope's cold vectors in PostgreSQL (rarely asked)."""
    rows = repo.cold_memories(agent_id, user_id, limit=COLD_SCAN_LIMIT)
    if not rows:
        return []
    sims = np.stack([r.vector for r in rows]) @ vector
    best = np.argsort(-sims)[:k]
    hits = []
    for rank, i in enumerate(best, start=1):
        r = rows[int(i)]
        cosine = max(float(sims[int(i)]), 0.0)
        relevance = cosine if rrf_k is None else 1.0 / (rrf_k + rank)
        boost = (
            ranking.SEMANTIC_BOOST
            if r.kind == SEMANTIC
            else ranking.SOURCE_TRUST.get(r.source, ranking.UNKNOWN_TRUST)
        )
        hits.append(
            Hit(
                id=f"{r.kind}:{r.id}",
                kind="semantic" if r.kind == SEMANTIC else "episode",
                text=r.text,
                score=relevance * r.base_weight * boost,
                weight=r.base_weight,
                valid_from=r.valid_from,
                valid_to=r.valid_to,
                source_turn_ids=r.turn_ids,
                session_id=r.session_id,
                cold=True,
                event_time=r.valid_from,
            )
        )
    return hits
