"""A full review's consolidation step: the scope's kept episodes into semantic memories (DESIGN §2, issue 40).

Three ways a memory forms, tried in this order, each turn joining one at most:

1. a fact chain (`consolidation.fact_groups`): the turns stating one current value; its text is the chain's;
2. restated requests (`restatements.group`): the same user asking for one thing across sessions, linked by
   the subject their words name, the assistant's acknowledgement and the facts they state; a group on the
   subject of a fact chain joins that chain's memory;
3. cosine clusters (HDBSCAN with the cohesion trim), split where they join two fact attributes, and kept
   only when some term is in every member (`restatements.anchored`): cosine alone is no subject.

Whatever forms none stays an episode. Each memory is written coherent, with the members its text states
(`MemoryWrite.stated`): recall lets it stand in for those only.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

import numpy as np

from pipeline.core.models import FactCandidate
from pipeline.core.ports import ReviewLLM, Vector
from pipeline.core.review_records import (
    ChainState,
    EpisodeDecision,
    MemoryPlan,
    MemoryWrite,
    Point,
    ReviewInputs,
)
from pipeline.core.tool_calls import is_tool_call
from pipeline.review import clustering, consolidation, restatements, summarise


class ReviewConfig(Protocol):
    """What this step reads of review_batch.ReviewConfig (a Protocol: that module imports this one)."""

    @property
    def cluster(self) -> clustering.ClusterParams: ...
    @property
    def cluster_limit(self) -> int: ...
    @property
    def cluster_cjk(self) -> bool: ...
    @property
    def match_cosine(self) -> float: ...
    @property
    def restate(self) -> restatements.Signals | None: ...
    @property
    def anchored(self) -> bool: ...


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 1)


def consolidate(
    inputs: ReviewInputs,
    decisions: list[EpisodeDecision],
    candidates: list[FactCandidate],
    vectors: dict[int, Vector],
    config: ReviewConfig,
    llm: ReviewLLM | None,
    stats: dict[str, int],
    timings: dict[str, float],
    *,
    superseded: frozenset[int] = frozenset(),
) -> tuple[list[MemoryWrite], dict[str, int]]:
    """Cluster the scope's kept episodes (this batch's and earlier unconsolidated ones) into semantic memories.

    Embeddings come from PostgreSQL (or this review): nothing is embedded again.
    """
    t0 = time.perf_counter()
    episodes = inputs.episodes
    final = {d.id: d.status for d in decisions}
    batch_points = [
        Point(
            ep.id,
            (ep.turn_id,),
            ep.content,
            ep.ts,
            vectors[ep.id],
            _importance(decisions, ep.id),
            ep.role,
            ep.session_id,
            ep.id in superseded,
        )
        for ep in episodes
        if final.get(ep.id, ep.status) == "kept" and not is_tool_call(ep.role, ep.metadata)
    ]
    # The batch's own points count towards the limit, so a scope at the limit stays on the exact path.
    points = batch_points + inputs.points[: max(config.cluster_limit - len(batch_points), 0)]
    # What this review found superseded (issue 39's links) is flagged on the earlier turns too.
    points = [replace(p, superseded=True) if p.episode_id in superseded else p for p in points]
    counts = {"clustered": len(points), "clusters": 0, "noise": len(points)}
    if len(points) < config.cluster.min_cluster_size:
        timings["cluster"] = _ms(t0)
        return [], counts
    matrix = np.stack([p.vector for p in points])
    # Turns that state the same current fact are one memory whatever their wording: embeddings of
    # paraphrases like "keep it short" / "too wordy" sit far apart (cosine ~0.2-0.5 with MiniLM).
    chains = _fact_keys(inputs.fact_groups, candidates)
    groups = consolidation.fact_groups(points, chains)
    points = _stating_old_values(points, _about(points, inputs.fact_attributes, candidates), chains)
    about = _about(points, inputs.fact_attributes, candidates)
    by_fact = [_standing(points, state, list(g)) for state, g in groups]
    grouped = {i for g in by_fact for i in g}
    by_request, subjects = _restated(points, about, matrix, groups, by_fact, grouped, config, counts)
    rest = consolidation.clusterable(points, grouped, cjk=config.cluster_cjk)
    found = clustering.cluster(matrix[rest], config.cluster)[0] if len(rest) >= 2 else []
    # A fact group is about one attribute by construction; what cosine grouped is split where it is not.
    by_cosine = consolidation.coherent(
        [_central(matrix, [rest[i] for i in c.members]) for c in found],
        about,
        matrix,
        config.cluster.min_cluster_size,
    )
    if config.anchored:
        kept = [c for c in by_cosine if restatements.anchored([points[i].content for i in c])]
        counts["clusters_incoherent"] = len(by_cosine) - len(kept)
        by_cosine = kept
    # A fact group the standing-request filter left too small is no memory (its turns stay episodes).
    kept_facts = [
        (state, c)
        for (state, _), c in zip(groups, by_fact, strict=True)
        if consolidation.worth_a_memory(state, len(c))
    ]
    by_fact = [c for _, c in kept_facts]
    ordered = [_central(matrix, c) for c in by_fact] + by_request + by_cosine
    clustered = {i for c in ordered for i in c}
    noise = [i for i in range(len(points)) if i not in clustered]
    plan = consolidation.plan(
        points,
        ordered,
        inputs.open_memories,
        match_cosine=config.match_cosine,
        about={p.episode_id: a for p, a in zip(points, about, strict=True) if a},
        facts=[state for state, _ in kept_facts],
        # A fact chain on how to answer (language, length, ...) is said as requests are: its memory's text
        # is their latest wording, in their language, not the English template.
        subjects=[_request_subject(state) for state, _ in kept_facts] + subjects,
    )
    timings["cluster"] = _ms(t0)
    counts |= {
        "clusters": len(ordered),
        "fact_clusters": len(kept_facts),
        "restated_clusters": len(by_request),
        "noise": len(noise),
        "memories_unchanged": len(plan.unchanged),
    }

    t1 = time.perf_counter()
    by_id = {p.episode_id: p for p in points}
    about_of = {p.episode_id: a for p, a in zip(points, about, strict=True)}
    said_often = summarise.repeated_sentences([p.content for p in points])
    writes = []
    for memory in plan.memories:
        members = [by_id[i] for i in memory.members]
        if memory.subject is not None:
            writes.append(_restated_write(memory, members, about_of))
            continue
        if memory.fact is not None:
            # The chain's own value, not a summary that might state an old one (or an LLM's paraphrase of it).
            text = summarise.fact_statement(memory.fact)
            writes.append(MemoryWrite(memory, text, "template", stated=_stated(text, members)))
            continue
        texts = [m.content for m in members]
        central = list(range(len(texts)))
        stated = summarise.statement(texts, central, said_often=said_often)
        if stated is None and memory.replaces is None:
            # Nobody in it says anything ("omg", "ugh", "lmaooo"): no memory, the turns stay episodes.
            counts["memories_unstated"] = counts.get("memories_unstated", 0) + 1
            continue
        summary = llm.summarise(texts, stats) if llm is not None else None
        if summary is None:
            text = stated or summarise.extractive_summary(texts, central)
            writes.append(MemoryWrite(memory, text, "extractive", stated=_stated(text, members, taken=True)))
        else:
            writes.append(MemoryWrite(memory, summary, "llm"))
    timings["summarise"] = _ms(t1)
    return writes, counts


def _restated(
    points: Sequence[Point],
    about: Sequence[frozenset[str]],
    matrix: Vector,
    groups: Sequence[tuple[ChainState, tuple[int, ...]]],
    by_fact: list[list[int]],
    grouped: set[int],
    config: ReviewConfig,
    counts: dict[str, int],
) -> tuple[list[list[int]], list[str | None]]:
    """The groups of restated requests (indices into `points`) and their subjects. A group on the subject of
    a user fact chain joins that chain's group (`by_fact`, extended in place); a turn already in a fact
    group stays there. Every index taken is added to `grouped`."""
    if config.restate is None:
        return [], []
    said = [
        restatements.Said(p.role, p.session_id, p.ts, p.content, a, p.superseded)
        for p, a in zip(points, about, strict=True)
    ]
    # Every request with a subject, grouped: one that joins a fact chain's memory needs no second session
    # (the chain already holds the subject); a memory of its own needs MIN_REQUESTS in MIN_SESSIONS.
    found = restatements.group(said, matrix, signals=config.restate, min_requests=1, min_sessions=1)
    on_fact = {
        subject: k
        for k, (state, _) in enumerate(groups)
        if state.entity == "user" and (subject := restatements.fact_subject(state.attribute)) is not None
    }
    out: list[list[int]] = []
    subjects: list[str | None] = []
    for g in found:
        free = [i for i in g.members if i not in grouped]
        k = on_fact.get(g.subject)
        requests = [i for i in g.requests if i in free]
        if k is not None:
            by_fact[k].extend(free)
        elif (
            len(requests) >= restatements.MIN_REQUESTS
            and len({points[i].session_id for i in requests}) >= restatements.MIN_SESSIONS
        ):
            out.append(free)
            subjects.append(g.subject)
        else:
            continue
        grouped.update(free)
    counts["restated_joined_facts"] = sum(1 for g in found if g.subject in on_fact)
    return out, subjects


def _restated_write(
    memory: MemoryPlan, members: list[Point], about_of: dict[int, frozenset[str]]
) -> MemoryWrite:
    said = [
        restatements.Said(
            m.role, m.session_id, m.ts, m.content, about_of.get(m.episode_id, frozenset()), m.superseded
        )
        for m in members
    ]
    requests = tuple(i for i, s in enumerate(said) if restatements.is_request(s.role, s.content))
    others = tuple(i for i in range(len(said)) if i not in requests)
    stated = restatements.statement(said, restatements.Group(memory.subject or "", requests or (0,), others))
    return MemoryWrite(
        memory,
        stated.text,
        "restated",
        details={"subject": memory.subject},
        stated=frozenset(members[i].episode_id for i in stated.stated),
    )


def _standing(points: Sequence[Point], state: ChainState, members: list[int]) -> list[int]:
    """A fact chain about how to answer (restatement_lexicon.FACT_SUBJECTS) holds standing requests only: the
    fact rules also match "this article is too wordy, summarise it for me", a one-off task, not a wish."""
    if _request_subject(state) is None:
        return members
    return [
        i
        for i in members
        if restatements.is_request(points[i].role, points[i].content)
        or restatements.is_ack(points[i].role, points[i].content)
    ]


def _stating_old_values(
    points: list[Point], about: Sequence[frozenset[str]], chains: dict[str, tuple[ChainState, set[str]]]
) -> list[Point]:
    """Flag the points that state a value their chain no longer holds (this review's statements moved it):
    restated requests quote them as what was said before, never as what holds."""
    current: dict[str, set[str]] = {}
    for state, turn_ids in chains.values():
        current.setdefault(f"{state.entity}/{state.attribute}", set()).update(turn_ids)
    out = []
    for p, attributes in zip(points, about, strict=True):
        old = any(a in current and not current[a].intersection(p.turn_ids) for a in attributes)
        out.append(replace(p, superseded=True) if old and not p.superseded else p)
    return out


def _request_subject(state: ChainState) -> str | None:
    subject = restatements.fact_subject(state.attribute) if state.entity == "user" else None
    return None if subject is None or subject.startswith("fact:") else subject


def _stated(text: str, members: Sequence[Point], *, taken: bool = False) -> frozenset[int]:
    """The members whose words `text` states (restatements.covers): the only ones it stands in for. `taken`:
    an extractive text is one member's sentence, and states the members it was taken from (recall's rule
    since issue 27: a member whose content holds the text, filler trimmed)."""
    said = " ".join(text.split()).rstrip(".。!！…")
    return frozenset(
        m.episode_id
        for m in members
        if restatements.covers(text, m.content) or (taken and said and said in " ".join(m.content.split()))
    )


def _central(matrix: Vector, cluster: list[int]) -> list[int]:
    return [cluster[i] for i in clustering.central_order(matrix[cluster])]


def _fact_keys(
    stored: Sequence[tuple[ChainState, tuple[str, ...]]], candidates: list[FactCandidate]
) -> dict[str, tuple[ChainState, set[str]]]:
    """Chain key -> (what the chain says now, the turns stating it): stored facts plus this review's statements.

    A statement newer than the stored value moves the chain (its turns no longer state the current value);
    an older one is history and groups nothing; a correction replaces a value that never held, so the
    memory does not say "was" of it."""
    keys: dict[str, tuple[ChainState, set[str]]] = {}
    current: dict[tuple[str, str], str] = {}
    for state, turn_ids in stored:
        keys[state.key] = (state, set(turn_ids))
        current[(state.entity, state.attribute)] = state.key
    for c in sorted(candidates, key=lambda c: c.valid_from):
        state = ChainState(c.entity, c.attribute, c.value, c.valid_from)
        if state.key in keys:
            keys[state.key][1].update(c.turn_ids)
            continue
        held_key = current.get((c.entity, c.attribute))
        if held_key is not None:
            held = keys[held_key][0]
            if c.valid_from <= held.since:
                continue
            del keys[held_key]
            previous = (held.previous, held.until) if c.correction else (held.value, c.valid_from)
            state = ChainState(c.entity, c.attribute, c.value, c.valid_from, *previous)
        keys[state.key] = (state, set(c.turn_ids))
        current[(c.entity, c.attribute)] = state.key
    return keys


def _about(
    points: Sequence[Point],
    stored: Sequence[tuple[str, tuple[str, ...]]],
    candidates: list[FactCandidate],
) -> list[frozenset[str]]:
    """The fact attributes (entity/attribute) each point states: stored facts, current or closed, plus this
    review's statements."""
    by_turn: dict[str, set[str]] = {}
    for key, turn_ids in stored:
        for t in turn_ids:
            by_turn.setdefault(t, set()).add(key)
    for c in candidates:
        for t in c.turn_ids:
            by_turn.setdefault(t, set()).add(f"{c.entity}/{c.attribute}")
    return [frozenset(a for t in p.turn_ids for a in by_turn.get(t, ())) for p in points]


def _importance(decisions: list[EpisodeDecision], episode_id: int) -> float:
    for d in decisions:
        if d.id == episode_id and d.quality is not None:
            return float(d.quality.get("total", 0.5))
    return 0.5
