"""Recall candidates and the hits they become: each candidate's relevance times its factors (memory weight,
source trust, the semantic boost, the time window, named facts, the speaker), with its explanation; then the
list rules: history below what is current, a semantic memory standing in for its members, cold storage.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np

from pipeline.core.models import EPISODE, SEMANTIC, Hit
from pipeline.core.ports import ColdStorage, Vector
from pipeline.core.recall_rows import MemoryKey, RecallEpisode, SemanticRow
from pipeline.recall import ranking
from pipeline.recall.temporal import Window
from pipeline.recall.tuning import RecallTuning


@dataclass
class Candidate:
    """One memory found by either retriever, with what each said of it."""

    key: MemoryKey
    dense: float | None = None  # cosine (from the vector search, or re-taken: RecallTuning.dense_rescore)
    dense_rank: int | None = None
    lexical: float | None = None  # BM25
    lexical_rank: int | None = None
    fused: float = 0.0


def to_hit(
    c: Candidate,
    episodes: dict[int, RecallEpisode],
    memories: dict[int, SemanticRow],
    window: Window | None,
    tuning: RecallTuning,
    speaker: str | None = None,
    role: str | None = None,
    asked: frozenset[str] = frozenset(),
) -> Hit | None:
    """The hit a candidate becomes, scored; None when hydration did not find it recallable. `speaker` is the
    person the query names (hybrid.named_speaker), `role` the side it names (hybrid.named_role): the turns
    that one spoke get `tuning.speaker_boost`. `asked`: the subjects the query asks about
    (restatements.asked_subjects): a memory of restated requests about one of them is marked for
    `subject_first`."""
    kind, ref = c.key
    if kind == SEMANTIC:
        memory = memories.get(ref)
        if memory is None or not tuning.semantic:
            return None
        if tuning.semantic_methods is not None and memory.method not in tuning.semantic_methods:
            return None
        in_window = window is not None and _overlaps(window, memory.valid_from, memory.valid_to)
        factors = ranking.Factors(
            weight=ranking.ranked_weight(memory.weight, memory.base_weight, tuning.decay_exponent),
            trust=1.0,
            semantic=ranking.SEMANTIC_BOOST,
            window=tuning.window_boost if in_window else 1.0,
        )
        explain = _explain(c, factors, window)
        if memory.subject is not None and memory.subject in asked:
            explain["answers_subject"] = memory.subject  # `subject_first` puts it first
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
            explain=explain,
            speaks_for=memory.speaks_for,
            stands_for={
                "turns": len(memory.turn_ids),
                "first": memory.first_said.isoformat() if memory.first_said else None,
                "last": memory.last_said.isoformat() if memory.last_said else None,
            },
        )
    row = episodes.get(ref)
    if row is None:
        return None
    turn_ids = (row.turn_id, *row.merged_turn_ids)
    unfolded = (
        (not tuning.semantic or (tuning.unfold_big and row.folded_into > tuning.stand_in_max))
        and row.folded_into > 0
        and tuning.member_weight > 0
    )
    weight, base = row.weight, row.weight if row.base_weight is None else row.base_weight
    if unfolded and base > 0:  # the member weight goes (up to 1), the decay stays
        lift = max(base, min(base / tuning.member_weight, 1.0)) / base
        weight, base = weight * lift, base * lift
    factors = ranking.Factors(
        weight=ranking.ranked_weight(weight, base, tuning.decay_exponent),
        trust=ranking.SOURCE_TRUST.get(row.source, ranking.UNKNOWN_TRUST),
        window=tuning.window_boost if window is not None and window.contains(row.ts) else 1.0,
        superseded=tuning.superseded_factor if row.superseded else 1.0,
        speaker=tuning.speaker_boost
        if (speaker is not None and row.speaker == speaker) or (role is not None and row.role == role)
        else 1.0,
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
        reviewed=row.reviewed,
    )


def rank_key(hit: Hit) -> tuple[float, bool]:
    # On equal scores (min-max fusion gives the last candidate of a list 0) what is current goes first.
    return hit.score, not hit.superseded


def history_below_current(hits: list[Hit], factor: float) -> list[Hit]:
    """History mode: a superseded statement never outranks a current one, however well it matches the
    query's words (it usually matches them best: the question is asked in the old value's terms)."""
    current = [h.score for h in hits if not h.superseded]
    if not current or len(current) == len(hits):
        return hits
    floor = min(current) * factor
    return [replace(h, score=min(h.score, floor)) if h.superseded else h for h in hits]


def _overlaps(window: Window, start: datetime, end: datetime | None) -> bool:
    return start < window.end and (end is None or end > window.start)


def _explain(c: Candidate, f: ranking.Factors, window: Window | None) -> dict[str, Any]:
    return {
        "dense": None if c.dense is None else round(c.dense, 6),
        "dense_rank": c.dense_rank,
        "lexical": None if c.lexical is None else round(c.lexical, 6),
        "lexical_rank": c.lexical_rank,
        "fused": round(c.fused, 6),
        "weight": round(f.weight, 6),
        "trust": f.trust,
        "semantic_boost": f.semantic,
        "window_boost": f.window,
        "window": None
        if window is None
        else [window.start.isoformat(), window.end.isoformat(), window.phrase],
        "superseded_factor": f.superseded,
        "speaker_boost": f.speaker,
    }


def subject_first(hits: list[Hit]) -> list[Hit]:
    """A question about what the user asked of the assistant ("How long should my answers be?") gets review's
    memory of those requests first: the coherent memory that states them, on the subject the question asks
    about (`to_hit`'s `answers_subject`), ranks above every other hit it was recalled with. Nothing leaves
    the list. `hits` come sorted by score; so does the result."""
    marked = [h for h in hits if h.explain and h.explain.get("answers_subject")]
    if not marked or not hits:
        return hits
    top = max(h.score for h in hits)
    lifted = [
        replace(h, score=max(h.score, top * 1.000001), explain={**(h.explain or {}), "subject_first": True})
        if h in marked
        else h
        for h in hits
    ]
    lifted.sort(key=rank_key, reverse=True)
    return lifted


def stand_in(hits: list[Hit], max_members: int) -> list[Hit]:
    """A semantic memory of at most `max_members` turns stands in for the members it speaks for
    (`Hit.speaks_for`: the members whose words its text states): it ranks at least as high as the best of
    them found (times the semantic boost) and they leave the list. A member it does not speak for keeps its
    own place, and lends the memory nothing: a budget memory must not rank on, or hide, a residence turn
    that cosine put beside it (issue 27). Every memory lists its most relevant members' turns first.
    `hits` come sorted by score; so does the result."""
    relevance: dict[str, float] = {}
    for h in hits:
        if h.kind == "episode":
            for t in h.source_turn_ids:
                relevance.setdefault(t, h.score)
    lifted = []
    for h in hits:
        stands_in = h.kind == "semantic" and len(h.source_turn_ids) <= max_members
        best = max((relevance.get(t, 0.0) for t in h.speaks_for), default=0.0) if stands_in else 0.0
        if best * ranking.SEMANTIC_BOOST > h.score:
            explain = {**(h.explain or {}), "stands_in_for_score": round(best, 6)}
            h = replace(h, score=best * ranking.SEMANTIC_BOOST, explain=explain)
        lifted.append(h)
    lifted.sort(key=rank_key, reverse=True)
    covered: set[str] = set()
    out: list[Hit] = []
    for h in lifted:
        if h.kind == "semantic":
            if len(h.source_turn_ids) <= max_members:
                covered.update(h.speaks_for)
            out.append(replace(h, source_turn_ids=ranking.order_turns(h.source_turn_ids, relevance)))
        elif not (h.source_turn_ids and covered.issuperset(h.source_turn_ids)):
            out.append(h)
    return out


COLD_SCAN_LIMIT = 50_000


def cold_hits(
    repo: ColdStorage,
    vector: Vector,
    *,
    agent_id: str,
    user_id: str,
    k: int,
    scale: float = 1.0,
) -> list[Hit]:
    """Cold storage is not in the vector index: scan the scope's cold vectors in PostgreSQL (rarely asked)."""
    rows = repo.cold_memories(agent_id, user_id, limit=COLD_SCAN_LIMIT)
    if not rows:
        return []
    sims = np.stack([r.vector for r in rows]) @ vector
    best = np.argsort(-sims)[:k]
    hits = []
    for i in best:
        r = rows[int(i)]
        relevance = max(float(sims[int(i)]), 0.0) * scale
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
