"""What a review reads and writes: the values the review use case and its store (the ReviewStore port)
exchange. Frozen where they can be, no I/O; the PostgreSQL adapter builds and applies them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pipeline.core.models import CorrectionHint, FactCandidate
from pipeline.core.tool_calls import ToolCall
from pipeline.core.vectors import Vector

# -- what a review reads -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BatchInfo:
    """A claimed batch, as a review starts it."""

    id: int
    agent_id: str
    user_id: str
    session_id: str | None
    kind: str
    trigger: str
    status: str
    attempts: int


@dataclass(frozen=True, slots=True)
class BatchEpisode:
    id: int
    turn_id: str
    session_id: str
    role: str
    source: str
    content: str
    ts: datetime
    metadata: dict[str, Any]
    status: str
    embedding: bytes | None
    quarantine: dict[str, Any] | None = None  # the detector's verdict, once quarantined (and released)
    # Its passage vectors are stored (NULL for a short turn, and for one the indexer embedded on arrival).
    has_passages: bool = False

    @property
    def core(self) -> bool:
        return self.metadata.get("core") is True

    @property
    def released(self) -> bool:
        """A person released it from quarantine: it is reviewed normally, without the detector."""
        return bool(self.quarantine and self.quarantine.get("released_at"))


@dataclass(frozen=True, slots=True)
class Memory:
    """A kept memory that de-duplication compares against."""

    id: int
    ts: datetime
    vector: Vector  # L2-normalised
    text: str = ""  # what it says (dedup merges only what says the same words)


@dataclass(frozen=True, slots=True)
class Point:
    """A kept episode offered to clustering."""

    episode_id: int
    turn_ids: tuple[str, ...]  # its own turn id first, then those merged into it
    content: str
    ts: datetime
    vector: Vector
    importance: float  # its quality total
    # Who said it and where (restatement linking, issue 40), and whether a newer statement superseded it.
    role: str = "user"
    session_id: str = ""
    superseded: bool = False


@dataclass(frozen=True, slots=True)
class Statement:
    """A turn as update detection sees it (pipeline/review/updates.py)."""

    id: int  # episode id
    ts: datetime
    role: str
    speaker: str | None  # metadata.speaker when the service names people, else None
    text: str
    # A live link already ends it: only the current value is superseded again (a chain, not a clique).
    superseded: bool = False


@dataclass(frozen=True, slots=True)
class SupersessionWrite:
    """A newer statement supersedes an older one: the older stops holding at `valid_from`."""

    old: int  # episode id
    new: int
    valid_from: datetime
    reason: dict[str, Any]
    detector: str = "rules"


@dataclass(frozen=True, slots=True)
class OpenMemory:
    id: int
    members: frozenset[int]  # episode ids
    centroid: Vector
    # False: written before review judged coherence (migration 0022); a cluster that matches it writes a new
    # version (with its text and stated members) instead of confirming it as it is.
    coherent: bool = True


@dataclass(frozen=True, slots=True)
class ChainState:
    """What one fact chain says now, for the text of the memory built on it (issue 27): its current value and,
    when it replaced another, that value and when it stopped holding."""

    entity: str
    attribute: str
    value: str  # as the user said it
    since: datetime
    previous: str | None = None
    until: datetime | None = None

    @property
    def key(self) -> str:
        """ "entity/attribute=value", the value in the form values compare in."""
        return f"{self.entity}/{self.attribute}={self.value.lower()}"


@dataclass(frozen=True, slots=True)
class ReviewInputs:
    episodes: list[BatchEpisode]
    memories: list[Memory]  # the scope's kept, embedded episodes outside the batch, most recent first
    # Full reviews only (empty otherwise):
    points: list[Point] = field(default_factory=list)  # what may be clustered, most recent first
    # The scope's current facts and the turns that state them.
    fact_groups: list[tuple[ChainState, tuple[str, ...]]] = field(default_factory=list)
    open_memories: list[OpenMemory] = field(default_factory=list)
    # Every (entity/attribute, turn ids) a believed fact names, current or closed: what each turn is about,
    # for the cohesion rule (consolidation.coherent): a memory never joins turns of two attributes.
    fact_attributes: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    # The scope's tool calls (most recent first, up to a limit) and its open tool insights (issue 30).
    tool_calls: list[ToolCall] = field(default_factory=list)
    open_insights: list[OpenToolInsight] = field(default_factory=list)
    # Update detection (issue 39): the scope's statements reviewed before, most recent first, and the
    # (old, new) episode pairs already linked or undone that involve this batch: never linked again.
    statements: list[Statement] = field(default_factory=list)
    linked: frozenset[tuple[int, int]] = frozenset()


@dataclass(frozen=True, slots=True)
class OpenToolInsight:
    """A tool insight's open version, as the next review compares against it."""

    id: int
    key: str
    calls_total: int
    last_ts: datetime | None


# -- what a review writes ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EpisodeDecision:
    id: int
    status: str  # kept | cold | merged | quarantined
    quality: dict[str, Any] | None
    merged_into: int | None
    core: bool
    quarantine: dict[str, Any] | None = None  # the detector's verdict, for a quarantined turn


@dataclass(frozen=True, slots=True)
class MemoryPlan:
    """A semantic memory to write: new (replaces None) or a new version of `replaces`."""

    members: tuple[int, ...]  # episode ids, most central first
    centroid: Vector
    valid_from: datetime
    importance: float
    replaces: int | None
    fact: ChainState | None = None  # built on a fact chain: its text is the chain's current value
    # Other open memories whose every member this one holds now: closed with it (no turn left in two open
    # memories at once), not continued as its versions.
    absorbs: tuple[int, ...] = ()
    # Built on restated requests (issue 40): its subject; the text comes from restatements.statement.
    subject: str | None = None


@dataclass(frozen=True, slots=True)
class MemoryWrite:
    plan: MemoryPlan
    text: str
    method: str  # extractive | llm | template | tool_insight | restated
    details: dict[str, Any] | None = None  # kind-specific numbers (a tool insight's counts and rates)
    # Issue 40: recall returns only coherent memories; `stated` names the members (episode ids) whose words
    # the text states, the only ones it stands in for (None: the old rule, recall_sql._SEMANTIC).
    coherent: bool = True
    stated: frozenset[int] | None = None


@dataclass(frozen=True, slots=True)
class AgentInsightWrite:
    """An agent-wide tool insight to write (user_id NULL): new, or a new version of `replaces`.

    Its provenance keeps whose call each member was, so a reader serving one user can list that user's
    turn ids only (pipeline/adapters/postgres/tool_insights_sql.py)."""

    text: str
    details: dict[str, Any]
    members: tuple[tuple[int, str], ...]  # (episode id, user id) of the calls it counts, newest first
    valid_from: datetime
    importance: float
    replaces: int | None


# Plans an agent's tool insights from all its calls and its open agent-wide insights. Called by the
# store inside the review's transaction under a per-agent lock, on what it reads there: two users'
# reviews then never plan from the same stale open version (see agent_insights_sql.py).
AgentInsightPlanner = Callable[[Sequence[ToolCall], Sequence[OpenToolInsight]], list[AgentInsightWrite]]


@dataclass
class ReviewWrite:
    embeddings: dict[int, bytes] = field(default_factory=dict)
    # A long turn's passage vectors (pipeline/review/passages.py): k x dimension float32, row-major.
    passages: dict[int, bytes] = field(default_factory=dict)
    decisions: Sequence[EpisodeDecision] = ()
    # Kept memories outside the batch that a newer batch turn supersedes as a near-duplicate: loser -> survivor.
    outside_merges: dict[int, int] = field(default_factory=dict)
    facts: Sequence[FactCandidate] = ()
    hints: Sequence[CorrectionHint] = ()
    memories: Sequence[MemoryWrite] = ()
    member_weight: float = 1.0
    min_members: int = 3
    summarise: Callable[[list[str], list[int]], str] | None = None
    # Full reviews: re-plan the agent's agent-wide tool insights (issue 30), over its most recent
    # `agent_call_limit` calls across all its users.
    agent_insights: AgentInsightPlanner | None = None
    agent_call_limit: int = 50_000
    # Newer statements superseding older ones (issue 39), found by the rules; the fact chains add theirs.
    supersessions: Sequence[SupersessionWrite] = ()
