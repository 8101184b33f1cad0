"""Turning clusters of episodes into semantic memories. Pure: points and open memories in, a plan out.

Re-clustering must not pile up duplicates: a cluster that shares members with an open semantic
memory (or whose centroid is close to its centroid) becomes a new *version* of that memory; a
cluster identical to one already stored changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pipeline.core.ports import Vector
from pipeline.core.review_records import ChainState, MemoryPlan, OpenMemory, Point
from pipeline.core.scripts import mostly_cjk


@dataclass(frozen=True, slots=True)
class ConsolidationPlan:
    memories: tuple[MemoryPlan, ...]
    unchanged: tuple[int, ...]  # open memories a cluster confirmed as they are


def centroid(vectors: Vector) -> Vector:
    mean = vectors.mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return (mean / norm if norm > 0 else mean).astype(np.float32)


def plan(
    points: Sequence[Point],
    clusters: Sequence[Sequence[int]],
    open_memories: Sequence[OpenMemory],
    *,
    match_cosine: float,
    about: dict[int, frozenset[str]] | None = None,
    facts: Sequence[ChainState | None] = (),
    subjects: Sequence[str | None] = (),
) -> ConsolidationPlan:
    """`clusters` hold indices into `points`, most central first. Each open memory matches one cluster at most.

    `facts[k]`: the fact chain cluster k was built on (`fact_groups`), if any; its memory says that value.
    `subjects[k]`: the subject of the restated requests cluster k holds (restatements.group), if it is one.

    `about`: episode id -> the fact attributes it states (see `coherent`); a member of the matched memory
    that the clustering did not revisit stays only if it is about none of the cluster's other facts."""
    about = about or {}
    by_id = {p.episode_id: p for p in points}
    # Every point some cluster of this plan holds: a sticky member (below) must not be one of them, or the
    # turn would sit in two open memories, the old one's successor and the cluster that took it now.
    clustered = {points[i].episode_id for cluster in clusters for i in cluster}
    taken: set[int] = set()
    out: list[MemoryPlan] = []
    unchanged: list[int] = []
    labelled = list(
        zip(
            clusters,
            [*facts, *[None] * (len(clusters) - len(facts))],
            [*subjects, *[None] * (len(clusters) - len(subjects))],
            strict=True,
        )
    )
    for cluster, fact, subject in sorted(labelled, key=lambda c: len(c[0]), reverse=True):
        ids = [points[i].episode_id for i in cluster]
        c = centroid(np.stack([points[i].vector for i in cluster]))
        match = _match(set(ids), c, [m for m in open_memories if m.id not in taken], match_cosine)
        replaces = None
        if match is not None:
            taken.add(match.id)
            # Members the clustering did not revisit this time stay members (still offered and kept).
            topics = frozenset().union(*(about.get(i, frozenset()) for i in ids))
            ids += [
                i
                for i in sorted(match.members - set(ids))
                if i in by_id
                and i not in clustered
                and not by_id[i].superseded
                and not (topics and about.get(i) and not about[i] & topics)
            ]
            replaces = match.id
        absorbs = _contained(ids, open_memories, taken)
        if match is not None and set(ids) == match.members and not absorbs and match.coherent:
            unchanged.append(match.id)
            continue
        taken.update(absorbs)
        c = centroid(np.stack([by_id[i].vector for i in ids]))
        members = [by_id[i] for i in ids]
        out.append(
            MemoryPlan(
                members=tuple(ids),
                centroid=c,
                valid_from=min(m.ts for m in members),
                importance=float(np.mean([m.importance for m in members])),
                replaces=replaces,
                fact=fact,
                absorbs=absorbs,
                subject=subject,
            )
        )
    return ConsolidationPlan(memories=tuple(out), unchanged=tuple(unchanged))


def _contained(ids: Sequence[int], candidates: Sequence[OpenMemory], taken: set[int]) -> tuple[int, ...]:
    """Open memories, not yet matched or absorbed, all of whose members are among `ids`: left open they would
    hold those turns a second time (a smaller memory the review built a batch ago, swallowed by this one)."""
    held = set(ids)
    return tuple(m.id for m in candidates if m.id not in taken and m.members and m.members <= held)


def _match(
    ids: set[int], c: Vector, candidates: Sequence[OpenMemory], match_cosine: float
) -> OpenMemory | None:
    shared = max(candidates, key=lambda m: len(m.members & ids), default=None)
    if shared is not None and shared.members & ids:
        return shared
    close = max(candidates, key=lambda m: float(m.centroid @ c), default=None)
    if close is not None and float(close.centroid @ c) >= match_cosine:
        return close
    return None


def clusterable(points: Sequence[Point], taken: set[int], *, cjk: bool) -> list[int]:
    """Indices of the points cosine clustering may group: not `taken` (by a fact group), and, unless the
    embedding model reads CJK scripts (`cjk`), not written mostly in them (`scripts.mostly_cjk`). An
    English-only model's vectors of Chinese turns say little of what they mean and sit close together:
    clustered, a scope's unrelated Chinese turns became one memory. Left out, they stay episodes. A superseded
    point (`Point.superseded`) would revive an outdated value: it joins restated requests only."""
    return [
        i
        for i, p in enumerate(points)
        if i not in taken and not p.superseded and (cjk or not mostly_cjk(p.content))
    ]


def coherent(
    clusters: Sequence[Sequence[int]],
    about: Sequence[frozenset[str]],
    vectors: Vector,
    min_size: int,
) -> list[list[int]]:
    """The clusters, split so that no memory joins turns about different facts (issue 27).

    `about[i]`: the fact attributes (entity/attribute) point i states, current or closed. A cluster whose
    fact-stating members name one attribute stays whole. Otherwise each such member goes to the attribute it
    shares with most of the cluster, each member that states no fact to the group whose centroid it is
    nearest, and a group smaller than `min_size` is no memory (its turns stay episodes, recalled as before):
    cosine alone put "the offsite budget is now 80,000" and "I moved to Shanghai" in one memory.
    Order within a cluster (most central first) is kept.
    """
    out: list[list[int]] = []
    for cluster in clusters:
        counts: dict[str, int] = {}
        for i in cluster:
            for a in about[i]:
                counts[a] = counts.get(a, 0) + 1
        main = {i: max(sorted(about[i]), key=lambda a: counts[a]) for i in cluster if about[i]}
        groups: dict[str, list[int]] = {}
        for i in cluster:
            if i in main:
                groups.setdefault(main[i], []).append(i)
        if len(groups) <= 1:
            out.append(list(cluster))
            continue
        names = sorted(groups)
        centroids = np.stack([centroid(vectors[groups[n]]) for n in names])
        for i in cluster:
            if i not in main:
                groups[names[int(np.argmax(centroids @ vectors[i]))]].append(i)
        order = {i: k for k, i in enumerate(cluster)}
        out.extend(sorted(groups[n], key=order.__getitem__) for n in names if len(groups[n]) >= min_size)
    return out


def fact_groups(
    points: Sequence[Point], facts: dict[str, tuple[ChainState, set[str]]]
) -> list[tuple[ChainState, tuple[int, ...]]]:
    """Per current fact, the indices of the points that state it: one memory per (entity, attribute), whose
    text is the chain's value (issue 27). Two turns saying one value are a memory; a value that replaced
    another is one even when said once, for the memory says what changed ("... (was 50,000 yuan until ...)").

    A point belongs to one group at most (the largest), so groups never overlap.
    """
    by_turn = {t: i for i, p in enumerate(points) for t in p.turn_ids}
    candidates = []
    for state, turn_ids in facts.values():
        members = tuple(sorted({by_turn[t] for t in turn_ids if t in by_turn}))
        if worth_a_memory(state, len(members)):
            candidates.append((state, members))
    taken: set[int] = set()
    groups = []
    for state, members in sorted(candidates, key=lambda c: (-len(c[1]), c[0].key)):
        free = tuple(i for i in members if i not in taken)
        if worth_a_memory(state, len(free)):
            groups.append((state, free))
            taken.update(free)
    return groups


def worth_a_memory(state: ChainState, members: int) -> bool:
    return members >= 2 or (members == 1 and state.previous is not None)
