"""SQLAlchemy 2 table models: the system of record. Migrations live in infra/migrations."""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

import sqlalchemy
from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    SmallInteger,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


TS = DateTime(timezone=True)


class Batch(Base):
    """A set of episodes claimed for one review. The Celery task carries only its id."""

    __tablename__ = "batches"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    agent_id: Mapped[str] = mapped_column(Text)
    user_id: Mapped[str] = mapped_column(Text)
    session_id: Mapped[str | None] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(String(8))  # full | light
    trigger: Mapped[str] = mapped_column(String(16))  # batch_size | session_end | idle | manual
    status: Mapped[str] = mapped_column(String(12), server_default="pending")
    episode_count: Mapped[int] = mapped_column(Integer, server_default="0")
    attempts: Mapped[int] = mapped_column(Integer, server_default="0")
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(TS, server_default=func.now())
    dispatched_at: Mapped[datetime | None] = mapped_column(TS)
    started_at: Mapped[datetime | None] = mapped_column(TS)
    finished_at: Mapped[datetime | None] = mapped_column(TS)

    __table_args__ = (
        Index("ix_batches_open", "status", "dispatched_at", postgresql_where=text("status <> 'done'")),
    )


class Episode(Base):
    """One raw turn, kept forever (cold, forgotten and merged ones too) unless hard-forgotten."""

    __tablename__ = "episodes"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    turn_id: Mapped[str] = mapped_column(Text)  # unique within its scope: ux_episodes_scope_turn (0018)
    agent_id: Mapped[str] = mapped_column(Text)
    user_id: Mapped[str] = mapped_column(Text)
    session_id: Mapped[str] = mapped_column(Text)
    role: Mapped[str] = mapped_column(String(16))
    content: Mapped[str] = mapped_column(Text)
    ts: Mapped[datetime] = mapped_column(TS)  # event time, as the agent service stated it
    source: Mapped[str] = mapped_column(String(16))
    metadata_: Mapped[dict[str, Any]] = mapped_column("metadata", JSONB, server_default="{}")
    priority: Mapped[int] = mapped_column(SmallInteger, server_default="2")
    # pending (not yet reviewed) | kept | cold (scored as noise: kept, never recalled by default)
    # | merged (a near-duplicate folded into `merged_into`) | forgotten
    # | quarantined (read as an instruction to the agent: never recalled or folded until a person releases it)
    # | rejected (a person confirmed the quarantine)
    status: Mapped[str] = mapped_column(String(12), server_default="pending")
    core: Mapped[bool] = mapped_column(Boolean, server_default="false")  # identity, allergies...: always kept
    # The scheduler's injection screen found nothing in it on arrival: while pending it is recallable
    # (read your writes, 0016). False for what the screen held back and for turns stored without a screen.
    prescreened: Mapped[bool] = mapped_column(Boolean, server_default="false")
    merged_into: Mapped[int | None] = mapped_column(ForeignKey("episodes.id"))
    # Folded into an open semantic memory: its weight is lowered so it stops competing with the summary.
    consolidated: Mapped[bool] = mapped_column(Boolean, server_default="false")
    # Turn ids of near-duplicates merged into this episode (its provenance beyond its own turn_id).
    merged_turn_ids: Mapped[list[str]] = mapped_column(ARRAY(Text), server_default="{}")
    embedding: Mapped[bytes | None] = mapped_column(LargeBinary)  # float32, little-endian, normalised
    # A long turn's passage vectors (pipeline/review/passages.py), written with `embedding`: k rows of its
    # dimension, float32, row-major; NULL for a turn one window holds. Each is a point of its own (0013).
    passages: Mapped[bytes | None] = mapped_column(LargeBinary)
    weight: Mapped[float] = mapped_column(Float, server_default="1.0")
    # w0 of the decay curve: what `weight` decays from since the last access.
    base_weight: Mapped[float] = mapped_column(Float, server_default="1.0")
    # Why it is cold: "quality" (scored as noise) or "decay" (unused); None while hot.
    cold_reason: Mapped[str | None] = mapped_column(String(12))
    cold_since: Mapped[datetime | None] = mapped_column(TS)
    tags: Mapped[list[str]] = mapped_column(ARRAY(Text), server_default="{}")
    quality: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    # The injection detector's verdict for a quarantined turn, and who released or rejected it (0007).
    quarantine: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    last_accessed: Mapped[datetime | None] = mapped_column(TS)
    access_count: Mapped[int] = mapped_column(Integer, server_default="0")
    received_at: Mapped[datetime] = mapped_column(TS, server_default=func.now())
    reviewed_at: Mapped[datetime | None] = mapped_column(TS)
    # When it last came back from cold storage or a soft forget (re-heat, restore): the recall lexicon's
    # top-ups read it beside reviewed_at (0011).
    restored_at: Mapped[datetime | None] = mapped_column(TS)
    light_batch_id: Mapped[int | None] = mapped_column(ForeignKey("batches.id"))
    full_batch_id: Mapped[int | None] = mapped_column(ForeignKey("batches.id"))

    __table_args__ = (
        # A turn id is the client's idempotency key within its scope; another scope may use the same id.
        Index("ux_episodes_scope_turn", "agent_id", "user_id", "turn_id", unique=True),  # 0018
        Index("ix_episodes_session_order", "agent_id", "user_id", "session_id", "ts", "id"),  # 0014
        # The scheduler's backlog query only ever looks at episodes not yet through a full review.
        Index(
            "ix_episodes_pending_full",
            "agent_id",
            "user_id",
            "priority",
            "id",
            postgresql_where=text("full_batch_id IS NULL"),
        ),
        # Who was folded into an episode: forget's merge-chain walk and the self-referencing foreign key's
        # check on every DELETE (0015). Only merged rows are in it.
        Index("ix_episodes_merged_into", "merged_into", postgresql_where=text("merged_into IS NOT NULL")),
        Index("ix_episodes_light_batch", "light_batch_id"),
        Index("ix_episodes_full_batch", "full_batch_id"),
        # The recall lexicon's top-ups: what a scope had reviewed since (migration 0008).
        Index("ix_episodes_scope_reviewed", "agent_id", "user_id", "reviewed_at"),
        Index(
            "ix_episodes_scope_restored",
            "agent_id",
            "user_id",
            "restored_at",
            postgresql_where=text("restored_at IS NOT NULL"),
        ),
        # A framework adapter's read by key: the versions of one (metadata.entity, metadata.attribute) (0023).
        Index(
            "ix_episodes_keyed",
            "agent_id",
            "user_id",
            text("(metadata ->> 'entity')"),
            text("(metadata ->> 'attribute')"),
            "ts",
            "id",
            postgresql_where=text(
                "jsonb_typeof(metadata -> 'entity') = 'string' AND jsonb_typeof(metadata -> 'attribute') = 'string'"
            ),
        ),
        # An agent's tool calls across its users, newest first: agent-wide tool insights (0020).
        Index(
            "ix_episodes_agent_tool_calls",
            "agent_id",
            "ts",
            "id",
            postgresql_where=text("role = 'tool' AND (metadata ->> 'tool') IS NOT NULL"),
        ),
        # Room on every page, so the decay pass's rewrites of weight and status are HOT (no new index
        # entries). No index may name those columns, not even in a predicate: migrations 0005 and 0006,
        # figures in BENCHMARKS.md (`hindsight bench decay`).
        {"postgresql_with": {"fillfactor": 70}},
    )


class Session(Base):
    """Sessions an agent service has ended: their pending turns get a light review."""

    __tablename__ = "sessions"
    agent_id: Mapped[str] = mapped_column(Text, primary_key=True)
    user_id: Mapped[str] = mapped_column(Text, primary_key=True)
    session_id: Mapped[str] = mapped_column(Text, primary_key=True)
    ended_at: Mapped[datetime | None] = mapped_column(TS)


class Review(Base):
    """The audit log: one row per review that ran to completion."""

    __tablename__ = "reviews"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    batch_id: Mapped[int] = mapped_column(ForeignKey("batches.id"), unique=True)
    agent_id: Mapped[str] = mapped_column(Text)
    user_id: Mapped[str] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(String(8))
    trigger: Mapped[str] = mapped_column(String(16))
    started_at: Mapped[datetime] = mapped_column(TS)
    finished_at: Mapped[datetime] = mapped_column(TS)
    counts: Mapped[dict[str, Any]] = mapped_column(JSONB)
    timings_ms: Mapped[dict[str, Any]] = mapped_column(JSONB)
    worker: Mapped[str | None] = mapped_column(Text)


class Fact(Base):
    """One version of (scope, entity, attribute): bi-temporal, closed by its successor, never deleted."""

    __tablename__ = "facts"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    agent_id: Mapped[str] = mapped_column(Text)
    user_id: Mapped[str] = mapped_column(Text)
    entity: Mapped[str] = mapped_column(Text)
    attribute: Mapped[str] = mapped_column(Text)
    value: Mapped[str] = mapped_column(Text)
    valid_from: Mapped[datetime] = mapped_column(TS)
    valid_to: Mapped[datetime | None] = mapped_column(TS)
    recorded_at: Mapped[datetime] = mapped_column(TS, server_default=func.now())
    # System time: when this version stopped being believed (a correction or a lost tie), and by what.
    retracted_at: Mapped[datetime | None] = mapped_column(TS)
    superseded_by: Mapped[int | None] = mapped_column(ForeignKey("facts.id"))
    source: Mapped[str] = mapped_column(String(16))
    confidence: Mapped[float] = mapped_column(Float, server_default="1.0")
    turn_ids: Mapped[list[str]] = mapped_column(ARRAY(Text), server_default="{}")

    __table_args__ = (
        Index("ix_facts_chain", "agent_id", "user_id", "entity", "attribute", "valid_from"),
        # At most one current version per chain, whatever the workers do concurrently.
        Index(
            "uq_facts_open_version",
            "agent_id",
            "user_id",
            "entity",
            "attribute",
            unique=True,
            postgresql_where=text("valid_to IS NULL AND retracted_at IS NULL"),
        ),
        Index("ix_facts_turn_ids", "turn_ids", postgresql_using="gin"),
        # Recall's lookup of the facts a query names (migration 0012).
        Index("ix_facts_scope_entity_lower", "agent_id", "user_id", text("lower(entity)")),
        Index("ix_facts_scope_attribute_lower", "agent_id", "user_id", text("lower(attribute)")),
    )


class Supersession(Base):
    """A newer statement superseded an older one (issue 39): the old episode's validity ends at `valid_from`.
    Undone links stay (undone_at set): the audit trail, and what keeps a review from linking them again."""

    __tablename__ = "supersessions"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    agent_id: Mapped[str] = mapped_column(Text)
    user_id: Mapped[str] = mapped_column(Text)
    old_episode_id: Mapped[int] = mapped_column(ForeignKey("episodes.id", ondelete="CASCADE"))
    new_episode_id: Mapped[int] = mapped_column(ForeignKey("episodes.id", ondelete="CASCADE"))
    valid_from: Mapped[datetime] = mapped_column(TS)
    detector: Mapped[str] = mapped_column(String(16))  # rules | fact_chain
    reason: Mapped[dict[str, Any]] = mapped_column(JSONB, server_default="{}")
    batch_id: Mapped[int | None] = mapped_column(ForeignKey("batches.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(TS, server_default=func.now())
    undone_at: Mapped[datetime | None] = mapped_column(TS)
    undone_by: Mapped[str | None] = mapped_column(Text)
    undo_reason: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (
        UniqueConstraint("old_episode_id", "new_episode_id", name="uq_supersessions_pair"),
        Index("ix_supersessions_old_live", "old_episode_id", postgresql_where=text("undone_at IS NULL")),
        Index("ix_supersessions_new", "new_episode_id"),
        Index("ix_supersessions_scope", "agent_id", "user_id", "created_at"),
    )


class SemanticMemory(Base):
    """A durable statement folded from a cluster of episodes; versions chain through previous_id."""

    __tablename__ = "semantic_memories"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    agent_id: Mapped[str] = mapped_column(Text)
    # NULL only for an agent-wide tool insight: no user's scope (0020, agent_insights_sql.py says why).
    user_id: Mapped[str | None] = mapped_column(Text)
    text: Mapped[str] = mapped_column(Text)
    embedding: Mapped[bytes | None] = mapped_column(LargeBinary)
    importance: Mapped[float] = mapped_column(Float, server_default="0.5")
    weight: Mapped[float] = mapped_column(Float, server_default="1.0")
    base_weight: Mapped[float] = mapped_column(Float, server_default="1.0")
    core: Mapped[bool] = mapped_column(Boolean, server_default="false")
    status: Mapped[str] = mapped_column(String(12), server_default="kept")  # kept | cold | forgotten
    cold_since: Mapped[datetime | None] = mapped_column(TS)
    valid_from: Mapped[datetime] = mapped_column(TS)
    valid_to: Mapped[datetime | None] = mapped_column(TS)
    version: Mapped[int] = mapped_column(Integer, server_default="1")
    previous_id: Mapped[int | None] = mapped_column(ForeignKey("semantic_memories.id"))
    method: Mapped[str] = mapped_column(String(16), server_default="extractive")  # extractive | llm | ...
    # Kind-specific numbers beside the text: a tool insight's counts, rates and window (0019).
    details: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    # Its members are about one subject (issue 40, 0022): recall returns coherent memories only.
    coherent: Mapped[bool] = mapped_column(Boolean, server_default="false")
    created_at: Mapped[datetime] = mapped_column(TS, server_default=func.now())
    restored_at: Mapped[datetime | None] = mapped_column(TS)  # as Episode.restored_at
    last_accessed: Mapped[datetime | None] = mapped_column(TS)
    access_count: Mapped[int] = mapped_column(Integer, server_default="0")

    __table_args__ = (
        Index("ix_semantic_scope", "agent_id", "user_id"),
        Index(
            "ix_semantic_memories_scope_restored",
            "agent_id",
            "user_id",
            "restored_at",
            postgresql_where=sqlalchemy.text("restored_at IS NOT NULL"),
        ),
        # `text` is a column of this class, hence the qualified name.
        Index(
            "ix_semantic_open", "agent_id", "user_id", postgresql_where=sqlalchemy.text("valid_to IS NULL")
        ),
        Index(
            "ix_semantic_tool_insights_open",
            "agent_id",
            "user_id",
            postgresql_where=sqlalchemy.text("method = 'tool_insight' AND valid_to IS NULL"),
        ),  # 0019
        # One current version per agent-wide insight group, whatever the writers do (0020).
        Index(
            "ux_semantic_agent_insight_open",
            "agent_id",
            sqlalchemy.text("(details ->> 'key')"),
            unique=True,
            postgresql_where=sqlalchemy.text(
                "user_id IS NULL AND method = 'tool_insight' AND valid_to IS NULL"
            ),
        ),
        CheckConstraint("user_id IS NOT NULL OR method = 'tool_insight'", name="ck_semantic_user_scope"),
    )


class SemanticMember(Base):
    """Provenance: which episodes a semantic memory was folded from."""

    __tablename__ = "semantic_members"
    memory_id: Mapped[int] = mapped_column(
        ForeignKey("semantic_memories.id", ondelete="CASCADE"), primary_key=True
    )
    episode_id: Mapped[int] = mapped_column(ForeignKey("episodes.id", ondelete="CASCADE"), primary_key=True)
    # The memory's text states this member's words (0022); NULL: recall's older rule (recall_sql._SEMANTIC).
    stated: Mapped[bool | None] = mapped_column(Boolean)

    # Recall asks which memories an episode is folded into (migration 0009).
    __table_args__ = (Index("ix_semantic_members_episode", "episode_id"),)


class AgentInsightMember(Base):
    """Provenance of an agent-wide tool insight: the calls it counts and whose each was (0020). Apart from
    semantic_members so that per-scope code joining an episode to its memories never meets a row built
    from other users' calls; the user column lets a reader list one user's turn ids only."""

    __tablename__ = "agent_insight_members"
    memory_id: Mapped[int] = mapped_column(
        ForeignKey("semantic_memories.id", ondelete="CASCADE"), primary_key=True
    )
    episode_id: Mapped[int] = mapped_column(ForeignKey("episodes.id", ondelete="CASCADE"), primary_key=True)
    user_id: Mapped[str] = mapped_column(Text)

    __table_args__ = (
        Index("ix_agent_insight_members_user", "memory_id", "user_id"),
        Index("ix_agent_insight_members_episode", "episode_id"),
    )


class MemoryAudit(Base):
    """Who forgot or changed what, when and why. Keeps ids and changed fields, never the erased content."""

    __tablename__ = "memory_audit"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    at: Mapped[datetime] = mapped_column(TS, server_default=func.now())
    actor: Mapped[str] = mapped_column(Text)  # as the caller wrote it: a claim, not an identity
    # The API key the change was made with (its prefix; "keyless" with auth off; NULL for the system's own
    # changes and rows before 0024): what the server knows, beside what the caller says (issue 44).
    key_prefix: Mapped[str | None] = mapped_column(Text)
    reason: Mapped[str] = mapped_column(Text)
    action: Mapped[str] = mapped_column(String(16))  # soft_forget | hard_forget | update | reheat | purge
    kind: Mapped[str] = mapped_column(String(12))  # episode | semantic
    ref_id: Mapped[int] = mapped_column(BigInteger)
    agent_id: Mapped[str] = mapped_column(Text)
    user_id: Mapped[str] = mapped_column(Text)
    changes: Mapped[dict[str, Any]] = mapped_column(JSONB, server_default="{}")

    __table_args__ = (Index("ix_audit_scope", "agent_id", "user_id", "at"),)


class IndexOutbox(Base):
    """Transactional outbox: 'bring point (kind, ref_id) in the vector index up to date with this database'.

    Rows carry no payload: the indexer reads the current row, so replays and reorderings are harmless.
    """

    __tablename__ = "index_outbox"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    kind: Mapped[str] = mapped_column(String(12))  # episode | semantic
    ref_id: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(TS, server_default=func.now())
    attempts: Mapped[int] = mapped_column(Integer, server_default="0")
    last_error: Mapped[str | None] = mapped_column(Text)
    # A turn just stored, recallable before its review (read your writes): drained before the rest (0017).
    early: Mapped[bool] = mapped_column(Boolean, server_default="false")

    __table_args__ = (Index("ix_outbox_ref", "kind", "ref_id"),)


class ApiKey(Base):
    """An API key: the agent it speaks for and its permissions. Only a SHA-256 of the secret is kept;
    `prefix` (shown in lists, used to revoke) is the lookup key."""

    __tablename__ = "api_keys"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    prefix: Mapped[str] = mapped_column(String(16), unique=True)
    secret_sha256: Mapped[str] = mapped_column(String(64))
    agent_id: Mapped[str] = mapped_column(Text)
    can_write_shared: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    is_admin: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    note: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(TS, server_default=func.now())
    revoked_at: Mapped[datetime | None] = mapped_column(TS)
    last_used_at: Mapped[datetime | None] = mapped_column(TS)


class EmbeddingModel(Base):
    """The one model whose vectors the index and the stored embeddings hold (issue 45; migration 0025)."""

    __tablename__ = "embedding_model"
    __table_args__ = (CheckConstraint("id = 1"),)
    id: Mapped[int] = mapped_column(SmallInteger, primary_key=True, server_default=text("1"))
    name: Mapped[str] = mapped_column(Text)
    weights_hash: Mapped[str] = mapped_column(Text)
    dimension: Mapped[int] = mapped_column(Integer)
    collection: Mapped[str] = mapped_column(Text)
    recorded_at: Mapped[datetime] = mapped_column(TS, server_default=func.now())


class ReindexJob(Base):
    """A model change in progress: its target model and how far the re-embedding got (one row at most)."""

    __tablename__ = "reindex_job"
    __table_args__ = (CheckConstraint("id = 1"),)
    id: Mapped[int] = mapped_column(SmallInteger, primary_key=True, server_default=text("1"))
    name: Mapped[str] = mapped_column(Text)
    weights_hash: Mapped[str] = mapped_column(Text)
    dimension: Mapped[int] = mapped_column(Integer)
    collection: Mapped[str] = mapped_column(Text)
    phase: Mapped[str] = mapped_column(Text, server_default=text("'embed_episodes'"))
    episode_cursor: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    semantic_cursor: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    point_cursor: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    done: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    started_at: Mapped[datetime] = mapped_column(TS, server_default=func.now())
    updated_at: Mapped[datetime] = mapped_column(TS, server_default=func.now())


class ReindexVector(Base):
    """A memory's vectors under the new model, beside the old ones until the switch copies them over."""

    __tablename__ = "reindex_vectors"
    kind: Mapped[str] = mapped_column(Text, primary_key=True)
    ref_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    embedding: Mapped[bytes] = mapped_column(LargeBinary)
    passages: Mapped[bytes | None] = mapped_column(LargeBinary)


# Core handles for set-based SQL in the repository (typed as Table, which __table__ is at run time).
batches = cast(Table, Batch.__table__)
episodes = cast(Table, Episode.__table__)
sessions = cast(Table, Session.__table__)
reviews = cast(Table, Review.__table__)
facts = cast(Table, Fact.__table__)
semantic_memories = cast(Table, SemanticMemory.__table__)
semantic_members = cast(Table, SemanticMember.__table__)
agent_insight_members = cast(Table, AgentInsightMember.__table__)
index_outbox = cast(Table, IndexOutbox.__table__)
memory_audit = cast(Table, MemoryAudit.__table__)
supersessions = cast(Table, Supersession.__table__)
api_keys = cast(Table, ApiKey.__table__)
