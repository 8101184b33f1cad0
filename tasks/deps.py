"""Per-process dependencies of the tasks, built once on first use (after the worker forked, if it does)."""

from __future__ import annotations

from functools import lru_cache

from pipeline.adapters.embedder import make_embedder
from pipeline.adapters.llm import make_client
from pipeline.adapters.llm_breaker import BreakerCompleter
from pipeline.adapters.llm_review import ClientReviewLLM
from pipeline.adapters.model_identity import ModelIdentity, identity_of, mismatch_message
from pipeline.adapters.postgres.engine import libpq_dsn, make_engine
from pipeline.adapters.postgres.model_sql import ModelStore
from pipeline.adapters.postgres.repository import Repository
from pipeline.adapters.redis_stream import connect
from pipeline.core.config import Settings, get_settings
from pipeline.core.errors import ConfigError
from pipeline.core.ports import ReviewLLM, WarmEmbedder
from pipeline.review import clustering, injection, quality, updates
from pipeline.review.review_batch import ReviewConfig


@lru_cache(maxsize=1)
def repository() -> Repository:
    # The worker's model goes with its writes: a model change that switches the store mid-review refuses them.
    return Repository(make_engine(get_settings().db_url, pool_size=2), vectors_by=model_identity())


@lru_cache(maxsize=1)
def lease_dsn() -> str:
    """libpq DSN of the connection each review holds its batch lease on (batch_lease.py)."""
    return libpq_dsn(get_settings().db_url)


@lru_cache(maxsize=1)
def embedder() -> WarmEmbedder:
    return make_embedder(get_settings())


@lru_cache(maxsize=1)
def model_identity() -> ModelIdentity:
    return identity_of(get_settings())


def check_model() -> None:
    """Refuse to review with a model that is no longer the store's (a model change switched it after this
    worker started): its vectors would mix with the new model's. The batch fails with this reason and is
    retried, by a worker restarted with the new model."""
    recorded = ModelStore(repository().engine).recorded()
    if recorded is not None and not recorded.identity.same_vectors(model_identity()):
        raise ConfigError(mismatch_message(recorded.identity, model_identity()))


@lru_cache(maxsize=1)
def review_llm() -> ReviewLLM | None:
    settings = get_settings()
    client = make_client(settings.llm, redis_client=connect(settings.broker_url))
    if client is None:
        return None
    # One breaker per worker process: a dead endpoint costs each worker one round of timeouts, not one per turn.
    breaker = BreakerCompleter(
        client, failures=settings.llm.breaker_failures, cooldown_s=settings.llm.breaker_cooldown_s
    )
    return ClientReviewLLM(breaker)


@lru_cache(maxsize=1)
def review_config() -> ReviewConfig:
    return review_config_for(get_settings())


def write_side_screen(settings: Settings) -> injection.InjectionThresholds | None:
    """The thresholds the scheduler screens each turn with as it stores it (the review's), or None when read
    your writes is off (every turn then waits for its review)."""
    return review_config_for(settings).screening if settings.recall.unreviewed else None


def review_config_for(settings: Settings) -> ReviewConfig:
    """The review use case's config from settings (also what `hindsight bench month` reviews with)."""
    r = settings.review
    return ReviewConfig(
        dedup_threshold=r.dedup_threshold,
        cold_below=r.cold_below,
        keep_above=r.keep_above,
        judge_keep_above=r.judge_keep_above,
        cluster=clustering.ClusterParams(min_cluster_size=r.min_cluster_size, min_cohesion=r.min_cohesion),
        cluster_limit=r.cluster_limit,
        match_cosine=r.match_cosine,
        cluster_cjk=settings.embedding.reads_cjk,
        member_weight=r.member_weight,
        update_rules=updates.UpdateParams(candidates=r.update_candidates) if r.updates else None,
        screening=injection.InjectionThresholds.of(r),
        weights=quality.QualityWeights(
            density=r.weight_density,
            timeliness=r.weight_timeliness,
            uniqueness=r.weight_uniqueness,
            actionability=r.weight_actionability,
        ),
    )
