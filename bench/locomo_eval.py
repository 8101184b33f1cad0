"""The question half of `hindsight bench locomo`: rankers over the ingested pipeline state.

The default ranking is asked through the HTTP API (`GET /v1/recall`, in-process via FastAPI's test
client: the same handler, deps and JSON as a served API). Dense-only and the `--variant`s call the
recall use case directly with other `RecallTuning`s, so that they can be compared in one run.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rich.console import Console

from bench.locomo_data import AGENT, K, Question, Ranker, Recalled, Table, score
from pipeline.adapters.lexicon_cache import CONTEXT_WEIGHT, NEXT_WEIGHT
from pipeline.core.config import Settings
from pipeline.recall.hybrid import DEFAULT_TUNING, RecallTuning
from pipeline.recall.tuning import rebased

# Ablations and alternatives, named for `--variant`; each is measured beside the default in one run.
VARIANTS: dict[str, RecallTuning] = {
    "lexical-only": replace(DEFAULT_TUNING, dense=False),
    "no-stand-in": replace(DEFAULT_TUNING, stand_in=False),
    "no-unfold": replace(DEFAULT_TUNING, unfold_big=False),
    "stand-in-all": replace(DEFAULT_TUNING, stand_in_max=1_000_000),
    "candidates-100": replace(DEFAULT_TUNING, candidates=100),
    "no-speaker": replace(DEFAULT_TUNING, speaker_boost=1.0),
    "no-rescore": replace(DEFAULT_TUNING, dense_rescore=False),
    "semantic": replace(DEFAULT_TUNING, semantic=True),
    "no-semantic": replace(DEFAULT_TUNING, semantic=False),
    "no-subject-first": replace(DEFAULT_TUNING, subject_first=False),
    "semantic-cosine-too": replace(DEFAULT_TUNING, semantic_methods=None),
    # The rules the ablation on three sets turned off, each put back on its own (RecallTuning's note).
    "rescore": replace(DEFAULT_TUNING, dense_rescore=True),
    "stand-in-8": replace(DEFAULT_TUNING, stand_in_max=8),
    "no-window": replace(DEFAULT_TUNING, window_boost=1.0),
    "dense-0.4": replace(DEFAULT_TUNING, dense_weight=0.4),
    "dense-2": replace(DEFAULT_TUNING, dense_weight=2.0),
    "no-passage-discount": replace(DEFAULT_TUNING, passage_discount=0.0),
    # A passage's cosine discounted below any turn's: long turns found by their first window only.
    "no-passages": replace(DEFAULT_TUNING, passage_discount=2.0),
    "dense-for-cjk-queries": replace(DEFAULT_TUNING, dense_reads_cjk=True),
    "no-updates": replace(DEFAULT_TUNING, updates=False),
    "no-value-order": replace(DEFAULT_TUNING, value_order=False),
    "no-value-lead": replace(DEFAULT_TUNING, value_lead=False),
    # The simple hybrid through the pipeline: every candidate its own cosine, min-max 50/50, and nothing
    # else that ranks (what review removed or superseded stays out): the floor each part must lift.
    "plain": replace(
        DEFAULT_TUNING,
        dense_rescore=True,
        window_boost=1.0,
        speaker_boost=1.0,
        semantic=False,
        subject_first=False,
        updates=False,
        value_order=False,
    ),
}
# Lexicon variants: (previous-turn weight, next-turn weight).
CONTEXT_VARIANTS = {
    "no-context": (0.0, 0.0),
    "no-next": (CONTEXT_WEIGHT, 0.0),
    "context-0.5": (0.5, NEXT_WEIGHT),
    "context-1.0": (1.0, NEXT_WEIGHT),
}


def check_variants(variants: Sequence[str]) -> None:
    """Before any work: an unknown `--variant` used to surface only after the ingest and the floors."""
    unknown = sorted(set(variants) - set(VARIANTS) - set(CONTEXT_VARIANTS))
    if unknown:
        from pipeline.core.errors import ConfigError

        choices = ", ".join([*VARIANTS, *CONTEXT_VARIANTS])
        raise ConfigError(f"unknown variant(s) {', '.join(unknown)}; choose from {choices}")


@dataclass
class Env:
    deps: Any
    settings: Settings


@dataclass
class RecallEnv:
    """The recall use case's parts over a bench database and its Qdrant folder, as the API holds them."""

    deps: Any
    repo: Any
    store: Any
    index: Any
    close: Any


def recall_env(settings: Settings, qdrant_path: Path) -> RecallEnv:
    from pipeline.adapters.embedder import make_embedder
    from pipeline.adapters.postgres.engine import make_engine
    from pipeline.adapters.postgres.forgetting_sql import ForgettingStore
    from pipeline.adapters.postgres.recall_sql import RecallStore
    from pipeline.adapters.postgres.repository import Repository
    from pipeline.adapters.qdrant_edge import EdgeVectorIndex
    from pipeline.adapters.redis_stream import TurnStream, connect
    from pipeline.api.app import ApiDeps, configured_lexicon

    engine = make_engine(settings.db_url, pool_size=4)
    repo = Repository(engine)
    store = RecallStore(engine)
    index = EdgeVectorIndex(qdrant_path, settings.embedding.dimension)
    # One torch thread: on a shared 2-core machine two threads spin against other processes (measured
    # here: 766 ms per query embedding with the default, 48 ms with one).
    # The configured backend (HINDSIGHT_EMBEDDING__BACKEND), as the API would embed queries.
    one_thread = settings.embedding.model_copy(update={"torch_threads": 1})
    embedder = make_embedder(settings.model_copy(update={"embedding": one_thread}))
    embedder.warm_up()
    redis = connect(settings.broker_url)
    deps = ApiDeps(
        settings=settings,
        repo=repo,
        stream=TurnStream(redis, settings.stream_turns, settings.stream_dead),
        index=index,
        embedder=embedder,
        dispatch=lambda batch_id: None,  # nothing is reviewed from here
        run_indexer=False,
        claim_limit=settings.policy.max_batch,
        forgetting=ForgettingStore(engine),
        recall_store=store,
        # As the API builds it: without one, recall ranks by the vectors alone.
        lexicon=configured_lexicon(settings, store),
    )

    def close() -> None:
        index.close()
        redis.close()
        engine.dispose()

    return RecallEnv(deps, repo, store, index, close)


def evaluate(
    settings: Settings,
    qdrant_path: Path,
    questions: Sequence[Question],
    half_of: dict[str, str],
    variants: Sequence[str],
    console: Console,
    text_of: Mapping[str, str] | None = None,
) -> list[Table]:
    """`text_of` (turn id -> text): also score evidence recall within context budgets."""
    from fastapi.testclient import TestClient

    from pipeline.adapters.lexicon_cache import Lexicon
    from pipeline.api.app import create_app
    from pipeline.recall.hybrid import recall

    check_variants(variants)
    env = recall_env(settings, qdrant_path)
    deps, repo, store, index = env.deps, env.repo, env.store, env.index
    embedder = deps.embedder
    # Each question's vector once: every ranker below embeds the same query text.
    cache: dict[str, Any] = {}
    real_embed = embedder.embed

    def embed(texts: Sequence[str]) -> Any:
        if len(texts) == 1 and texts[0] in cache:
            return cache[texts[0]]
        out = real_embed(texts)
        if len(texts) == 1:
            cache[texts[0]] = out
        return out

    embedder.embed = embed
    texts = list(dict.fromkeys(q.text for q in questions))
    for text, vector in zip(texts, real_embed(texts), strict=True):
        cache[text] = vector[None, :]

    def use_case(tuning: RecallTuning, lexicon: Lexicon | None) -> Ranker:
        def rank(q: Question) -> list[tuple[str, ...]]:
            hits = recall(
                q.text,
                agent_id=AGENT,
                user_id=q.conversation,
                k=K,
                repo=repo,
                store=store,
                index=index,
                embedder=deps.embedder,
                lexicon=lexicon,
                tuning=tuning,
            )
            return [
                Recalled(
                    h.source_turn_ids,
                    h.text,
                    h.speaks_for if h.kind == "semantic" else h.source_turn_ids,
                    h.kind == "semantic",
                )
                for h in hits
            ]

        return rank

    tables: list[Table] = []
    try:
        with TestClient(create_app(deps)) as api:

            def via_api(q: Question) -> list[tuple[str, ...]]:
                r = api.get(
                    "/v1/recall", params={"q": q.text, "agent_id": AGENT, "user_id": q.conversation, "k": K}
                )
                r.raise_for_status()
                return [
                    Recalled(
                        h["source_turn_ids"],
                        h["text"],
                        h.get("speaks_for", []) if h["kind"] == "semantic" else h["source_turn_ids"],
                        h["kind"] == "semantic",
                    )
                    for h in r.json()["results"]
                ]

            # Over the tuning the API ranks with (create_app set it from the settings), not DEFAULT_TUNING.
            dense = replace(deps.tuning, lexical=False)
            t0 = time.perf_counter()
            tables.append(
                score("dense only (pipeline index)", questions, use_case(dense, None), half_of, text_of)
            )
            console.print(f"  dense only: {time.perf_counter() - t0:.0f} s", highlight=False)
            for name in variants:
                t0 = time.perf_counter()
                if name in CONTEXT_VARIANTS:
                    previous, following = CONTEXT_VARIANTS[name]
                    lexicon = Lexicon(store, refresh_s=3600.0, context_weight=previous, next_weight=following)
                    ranker = use_case(deps.tuning, lexicon)
                else:
                    ranker = use_case(rebased(VARIANTS[name], deps.tuning), deps.lexicon)
                tables.append(score(f"hybrid, {name}", questions, ranker, half_of, text_of))
                console.print(f"  {name}: {time.perf_counter() - t0:.0f} s", highlight=False)
            t0 = time.perf_counter()
            tables.append(score("**hybrid recall (API)**", questions, via_api, half_of, text_of))
            console.print(f"  hybrid via the API: {time.perf_counter() - t0:.0f} s", highlight=False)
    finally:
        env.close()
    return tables
