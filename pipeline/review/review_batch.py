"""The review use case: what a Celery worker does with one batch.

embed once (a long turn's passages too) -> screen for prompt injection -> score quality -> fold
near-duplicates -> extract facts -> (the repository) reconcile fact chains and write everything in one
transaction. A turn that reads as an
instruction to the agent is quarantined before anything else looks at it: it is never a dedup survivor,
a fact or a cluster member, and it is not indexed, until a person releases it. Only episodes no review
has seen yet are scored; a full review also sees light-reviewed ones (for clustering) without judging
them twice.
Idempotent on batch_id: a second delivery of a finished batch does nothing, and a delivery racing
another loses cleanly in `complete_review`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from pipeline.core.models import CorrectionHint, FactCandidate
from pipeline.core.ports import Embedder, ReviewLLM, ReviewStore, Vector
from pipeline.core.review_records import (
    BatchEpisode,
    EpisodeDecision,
    MemoryPlan,
    MemoryWrite,
    ReviewInputs,
    ReviewWrite,
    Statement,
    SupersessionWrite,
)
from pipeline.core.tool_calls import TOOL_INSIGHT_METHOD, is_tool_call, tool_call_of
from pipeline.core.vectors import from_blob, to_blob
from pipeline.review import (
    claims,
    clustering,
    consolidate_review,
    dedup,
    fact_extraction,
    injection,
    passages,
    quality,
    restatements,
    summarise,
    tool_insights,
    tool_scoring,
    updates,
)


@dataclass(frozen=True)
class ReviewConfig:
    dedup_threshold: float = 0.95
    cold_below: float = 0.3
    keep_above: float = 0.7
    judge_keep_above: float = 0.5
    weights: quality.QualityWeights = field(default_factory=quality.QualityWeights)
    scope_memory_limit: int = 20_000  # most recent kept memories a batch is compared against
    cluster: clustering.ClusterParams = field(default_factory=clustering.ClusterParams)
    cluster_limit: int = 10_000  # most recent kept episodes of a scope a full review clusters
    match_cosine: float = 0.85  # a cluster this close to an open semantic memory is its new version
    # False (the default model, all-MiniLM-L6-v2, reads English only): turns written mostly in CJK scripts
    # join no cosine cluster (fact groups still take them). Their vectors say little of what they mean and
    # sit close together, so HDBSCAN made one memory of a scope's unrelated Chinese turns (a cat, yoga, an
    # allergy, a trip: 26 members in `bench consolidation`). True with a model that reads those languages.
    cluster_cjk: bool = False
    member_weight: float = 1.0  # weight of an episode folded into a semantic memory
    screening: injection.InjectionThresholds = field(default_factory=injection.InjectionThresholds)
    passage_params: passages.PassageParams = field(default_factory=passages.PassageParams)
    tools: tool_insights.ToolInsightParams = field(default_factory=tool_insights.ToolInsightParams)
    # Knowledge updates for any attribute (issue 39); None turns the rules off (the fact chains still link).
    update_rules: updates.UpdateParams | None = field(default_factory=updates.UpdateParams)
    # Restated requests become one memory (issue 40); None turns the linking off.
    restate: restatements.Signals | None = field(default_factory=restatements.Signals)
    # A cosine cluster is a memory only when some term is in every member (restatements.anchored).
    anchored: bool = True


@dataclass(frozen=True, slots=True)
class ReviewReport:
    batch_id: int
    kind: str
    trigger: str
    applied: bool  # False when another delivery of the same batch finished first
    counts: dict[str, int] = field(default_factory=dict)
    timings_ms: dict[str, float] = field(default_factory=dict)


def review_batch(
    batch_id: int,
    *,
    repo: ReviewStore,
    embedder: Embedder,
    clock: Callable[[], datetime],
    config: ReviewConfig | None = None,
    llm: ReviewLLM | None = None,
    worker: str = "",
) -> ReviewReport | None:
    """Review one batch. Returns None when the batch is already done or unknown."""
    config = config or ReviewConfig()
    started_at = clock()
    batch = repo.start_batch(batch_id, started_at)
    if batch is None:
        return None
    timings: dict[str, float] = {}
    t_load = time.perf_counter()
    inputs = repo.review_inputs(
        batch,
        memory_limit=config.scope_memory_limit,
        # The batch's own points count towards the cluster limit (see _consolidate): read the most it may take.
        cluster_limit=config.cluster_limit,
        tool_call_limit=config.tools.call_limit,
        statement_limit=config.update_rules.candidates if config.update_rules is not None else 0,
    )
    episodes = inputs.episodes
    timings["load"] = _ms(t_load)  # what dedup and clustering compare against, read once up front

    t0 = time.perf_counter()
    to_embed = [ep for ep in episodes if ep.embedding is None]
    fresh = embedder.embed([ep.content for ep in to_embed])
    vectors: dict[int, Vector] = {ep.id: vec for ep, vec in zip(to_embed, fresh, strict=True)}
    vectors.update({ep.id: from_blob(ep.embedding) for ep in episodes if ep.embedding is not None})
    timings["embed"] = _ms(t0)
    t_passages = time.perf_counter()
    # A turn the indexer embedded on arrival (recallable before its review) has its main vector, not yet
    # its passages: a long one gets them now, like a turn embedded here.
    early = [
        ep for ep in episodes if ep.embedding is not None and ep.status == "pending" and not ep.has_passages
    ]
    passage_vectors = _embed_passages(to_embed + early, embedder, config.passage_params)
    timings["passages"] = _ms(t_passages)

    stats: dict[str, int] = {"llm_calls": 0, "llm_failures": 0, "llm_fallbacks": 0, "judged": 0}
    pending = [ep for ep in episodes if ep.status == "pending"]
    t_screen = time.perf_counter()
    quarantined = _screen(pending, config.screening, llm, stats)
    screened = [ep for ep in pending if ep.id not in quarantined]
    # A call record is scored on its own dimensions and never folded, extracted from or clustered: each
    # call is evidence of its own for the tool insights (issue 30).
    calls = [ep for ep in screened if is_tool_call(ep.role, ep.metadata)]
    new = [ep for ep in screened if not is_tool_call(ep.role, ep.metadata)]
    timings["screen"] = _ms(t_screen)
    t1 = time.perf_counter()
    plan = dedup.plan(
        [dedup.Memory(ep.id, ep.ts, vectors[ep.id], ep.content) for ep in new],
        inputs.memories,
        threshold=config.dedup_threshold,
    )
    merged_into = dedup.resolve_chains(plan.merges)
    timings["dedup"] = _ms(t1)

    t2 = time.perf_counter()
    decisions: list[EpisodeDecision] = list(quarantined.values()) + [_assess_call(ep) for ep in calls]
    candidates: list[FactCandidate] = []
    hints: list[CorrectionHint] = []
    survivors = set(merged_into.values())
    for ep in new:
        ruled = fact_extraction.extract(
            ep.content, role=ep.role, source=ep.source, ts=ep.ts, turn_id=ep.turn_id, metadata=ep.metadata
        )
        states_fact = bool(ruled.facts or ruled.corrections)
        if ruled.facts and _adds_a_value(ep.content):
            # "I speak Italian too": a second value beside the first. A chain holds one value at a time and
            # would close the first (a true statement); the turn stays an episode, recalled on its own.
            ruled = fact_extraction.Extraction(facts=(), corrections=ruled.corrections)
        if ep.id in survivors:
            # The newer wording of a memory: its similarity to what it replaces is no reason to drop it,
            # so it is judged on its own content.
            decision = _assess(ep, 0.0, None, config, llm, stats, states_fact=states_fact)
        else:
            decision = _assess(
                ep,
                plan.max_similarity.get(ep.id, 0.0),
                merged_into.get(ep.id),
                config,
                llm,
                stats,
                states_fact=states_fact,
            )
        decisions.append(decision)
        if decision.status != "cold":  # noise states no facts; a merged restatement still adds provenance
            extracted = _with_llm_facts(ep, ruled, llm, stats)
            candidates.extend(extracted.facts)
            hints.extend(extracted.corrections)
    timings["score"] = _ms(t2)

    new_ids = {ep.id for ep in pending}
    kept_ids = {d.id for d in decisions if d.status == "kept"}
    t_updates = time.perf_counter()
    links = _supersessions(new, kept_ids, inputs, config.update_rules)
    timings["updates"] = _ms(t_updates)
    counts = {
        "episodes": len(episodes),
        "new": len(pending),
        "quarantined": len(quarantined),
        "embedded": len(to_embed),
        "passages": sum(len(m) for m in passage_vectors.values()),
        "kept": sum(d.status == "kept" for d in decisions),
        "cold": sum(d.status == "cold" for d in decisions),
        "merged": sum(d.status == "merged" for d in decisions),
        "tool_calls": len(calls),
        "merged_existing": sum(
            1 for loser, s in merged_into.items() if loser not in new_ids and s in kept_ids
        ),
        "supersessions": len(links),
        **stats,
    }
    memories: list[MemoryWrite] = []
    if batch.kind == "full":
        memories, cluster_counts = consolidate_review.consolidate(
            inputs,
            decisions,
            candidates,
            vectors,
            config,
            llm,
            stats,
            timings,
            superseded=frozenset(link.old for link in links),
        )
        counts |= cluster_counts
        t_tools = time.perf_counter()
        insights = _tool_insights(inputs, set(quarantined), embedder, config)
        memories += insights
        counts["tool_insights"] = len(insights)
        timings["tool_insights"] = _ms(t_tools)
    t3 = time.perf_counter()
    write = ReviewWrite(
        embeddings={i: to_blob(v) for i, v in vectors.items() if i in {ep.id for ep in to_embed}},
        passages={i: to_blob(m) for i, m in passage_vectors.items()},
        decisions=decisions,
        # A kept memory is folded into a newer wording only if that wording was itself kept.
        outside_merges={
            loser: s for loser, s in merged_into.items() if loser not in new_ids and s in kept_ids
        },
        facts=sorted(candidates, key=lambda c: (c.valid_from, c.turn_ids)),
        hints=hints,
        memories=memories,
        member_weight=config.member_weight,
        min_members=config.cluster.min_cluster_size,
        summarise=summarise.extractive_summary,
        # The agent-wide insights are planned by the store under the agent's lock, on what it reads
        # there: this review's read of the agent's calls could be stale by the time it writes.
        agent_insights=tool_insights.agent_planner(config.tools) if batch.kind == "full" else None,
        agent_call_limit=config.tools.agent_call_limit,
        supersessions=links,
    )
    applied, fact_counts = repo.complete_review(
        batch, write, now=clock(), started_at=started_at, counts=counts, timings_ms=timings, worker=worker
    )
    timings["write"] = _ms(t3)
    return ReviewReport(
        batch_id=batch.id,
        kind=batch.kind,
        trigger=batch.trigger,
        applied=applied,
        counts={**counts, **fact_counts},
        timings_ms=timings,
    )


def _supersessions(
    new: list[BatchEpisode], kept: set[int], inputs: ReviewInputs, params: updates.UpdateParams | None
) -> list[SupersessionWrite]:
    """Which earlier statements this batch's kept turns supersede, or are superseded by (issue 39)."""
    if params is None:
        return []
    said = [
        Statement(ep.id, ep.ts, ep.role, _speaker(ep.metadata), ep.content)
        for ep in new
        if ep.id in kept and ep.role in ("user", "assistant")
    ]
    if not said:
        return []
    return updates.detect(said, inputs.statements, refused=inputs.linked, params=params)


def _adds_a_value(text: str) -> bool:
    said = claims.claim(text)
    return said.additive and not said.change


def _speaker(metadata: dict[str, object]) -> str | None:
    speaker = metadata.get("speaker")
    return speaker if isinstance(speaker, str) else None


def _embed_passages(
    to_embed: list[BatchEpisode], embedder: Embedder, params: passages.PassageParams
) -> dict[int, Vector]:
    """The passage vectors of the long turns among these (episode id -> k x dimension), all
    in one call to the embedder. Computed with the main vector, whatever the review then decides: a cold or
    quarantined turn that comes back (re-heat, release) is indexed with its passages."""
    texts = {ep.id: passages.passages(ep.content, params) for ep in to_embed}
    texts = {i: t for i, t in texts.items() if t}
    if not texts:
        return {}
    matrix = embedder.embed([t for ts in texts.values() for t in ts])
    out: dict[int, Vector] = {}
    row = 0
    for episode_id, ts in texts.items():
        out[episode_id] = matrix[row : row + len(ts)]
        row += len(ts)
    return out


def _screen(
    pending: list[BatchEpisode],
    thresholds: injection.InjectionThresholds,
    llm: ReviewLLM | None,
    stats: dict[str, int],
) -> dict[int, EpisodeDecision]:
    """Quarantine decisions for the turns that read as instructions to the agent (episode id -> decision).

    A turn a person released is not screened again. The uncertain band gets the LLM's second opinion when
    one is configured; without one (or when it fails) only a score at or above `quarantine_at` quarantines.
    `metadata.core` does not exempt a turn: marking an injection "core" is an obvious way to plant it.
    """
    out: dict[int, EpisodeDecision] = {}
    for ep in pending:
        if ep.released:
            continue
        verdict = injection.assess(ep.content, role=ep.role, source=ep.source)
        decision = injection.decide(verdict, thresholds)
        record: dict[str, object] = {"detector": "rules", **verdict.to_json()}
        if decision == "uncertain" and llm is not None:
            opinion = llm.injection(ep.content, ep.role, verdict, stats)
            if opinion is not None:
                record |= {"detector": "rules+llm", "llm_score": round(opinion, 4)}
                decision = "quarantine" if opinion >= thresholds.llm_quarantine_at else "clean"
        if decision == "quarantine":
            record["reason"] = "instruction to the agent: " + ", ".join(verdict.features[:4])
            out[ep.id] = EpisodeDecision(ep.id, "quarantined", None, None, ep.core, quarantine=record)
    return out


def _assess(
    ep: BatchEpisode,
    max_similarity: float,
    merged_into: int | None,
    config: ReviewConfig,
    llm: ReviewLLM | None,
    stats: dict[str, int],
    *,
    states_fact: bool = False,
) -> EpisodeDecision:
    """Keep, cold or merged. A turn the rules found a fact in is kept whatever its score: a terse
    "just get to the point" is a standing instruction even if it reads like filler."""
    score = quality.score_turn(
        ep.content, role=ep.role, source=ep.source, max_similarity=max_similarity, weights=config.weights
    )
    if merged_into is not None:
        return EpisodeDecision(ep.id, "merged", score.to_json() | {"why": "duplicate"}, merged_into, ep.core)
    decision, why = quality.decide_keep(
        score,
        core=ep.core,
        cold_below=config.cold_below,
        keep_above=config.keep_above,
    )
    if decision != "keep" and states_fact:
        decision, why = "keep", "states_fact"
    if decision == "judge":
        verdict = llm.judge(ep.content, ep.role, score, stats) if llm is not None else None
        if verdict is None:  # no LLM, or it failed: kept (the adapter counted the fallback), see decide_keep
            decision, why = "keep", "rule_band"
        else:
            stats["judged"] += 1
            decision, why = (
                ("keep" if verdict > config.judge_keep_above else "cold"),
                f"llm_judge:{verdict:.2f}",
            )
    status = "kept" if decision == "keep" else "cold"
    return EpisodeDecision(ep.id, status, score.to_json() | {"why": why}, None, ep.core)


def _assess_call(ep: BatchEpisode) -> EpisodeDecision:
    """A call record is kept, scored on outcome, latency and error information (tool_scoring)."""
    call = tool_call_of(ep.id, ep.turn_id, ep.ts, ep.metadata)
    trust = quality.SOURCE_TRUST.get(ep.source, quality.UNKNOWN_TRUST)
    return EpisodeDecision(ep.id, "kept", tool_scoring.score_call(call, trust=trust), None, ep.core)


def _tool_insights(
    inputs: ReviewInputs, quarantined: set[int], embedder: Embedder, config: ReviewConfig
) -> list[MemoryWrite]:
    """New insights and new versions for the tool groups with calls their open insight has not counted.

    Each insight is embedded by its own sentence (recall finds it by what it says); the calls it counts
    are its members, so its provenance is their turn ids."""
    calls = [c for c in inputs.tool_calls if c.episode_id not in quarantined]
    plans = tool_insights.plan(calls, inputs.open_insights, config.tools)
    if not plans:
        return []
    vectors = embedder.embed([p.text for p in plans])
    return [
        MemoryWrite(
            MemoryPlan(
                members=p.members,
                centroid=vec,
                valid_from=p.estimate.last_ts,
                importance=INSIGHT_IMPORTANCE,
                replaces=p.replaces,
            ),
            p.text,
            TOOL_INSIGHT_METHOD,
            details=p.details(),
        )
        for p, vec in zip(plans, vectors, strict=True)
    ]


INSIGHT_IMPORTANCE = tool_insights.INSIGHT_IMPORTANCE


def _with_llm_facts(
    ep: BatchEpisode, ruled: fact_extraction.Extraction, llm: ReviewLLM | None, stats: dict[str, int]
) -> fact_extraction.Extraction:
    if llm is None or ep.role != "user":
        return ruled
    from_llm = llm.facts(ep, stats)
    if from_llm is None:
        return ruled
    # Rules and metadata are authoritative for the attributes they found; the LLM fills in the rest.
    known = {(f.entity, f.attribute) for f in ruled.facts}
    extra = tuple(f for f in from_llm if (f.entity, f.attribute) not in known)
    return fact_extraction.Extraction(facts=ruled.facts + extra, corrections=ruled.corrections)


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 2)
