"""Domain values. Frozen, no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

Role = Literal["user", "assistant", "tool", "system"]
Source = Literal["user", "agent", "tool", "external"]
ROLES: tuple[str, ...] = ("user", "assistant", "tool", "system")
SOURCES: tuple[str, ...] = ("user", "agent", "tool", "external")
SPACES: tuple[str, ...] = ("private", "shared", "system")
# The longest agent_id, user_id, session_id or turn_id, through every door (validation, HTTP parameters,
# MCP tools, the actor of an audited change): an id one door takes must be usable at every other.
MAX_ID_CHARS = 256

# What a stored memory is: in index_outbox.kind, an index point's payload ("kind") and a memory id
# ("episode:12").
EPISODE = "episode"
SEMANTIC = "semantic"

# Default source for a role when the caller does not say.
DEFAULT_SOURCE: dict[str, str] = {"user": "user", "assistant": "agent", "tool": "tool", "system": "agent"}
# Lower is reviewed first under backlog (DESIGN §2): user turns, then agent, then tool output.
PRIORITY_BY_SOURCE: dict[str, int] = {"user": 1, "agent": 2, "external": 2, "tool": 3}


@dataclass(frozen=True, slots=True)
class Scope:
    agent_id: str
    user_id: str


@dataclass(frozen=True, slots=True)
class Turn:
    """One conversation turn as written by an agent service."""

    turn_id: str
    agent_id: str
    user_id: str
    session_id: str
    role: str
    content: str
    ts: datetime
    source: str
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def priority(self) -> int:
        explicit = self.metadata.get("priority")
        if isinstance(explicit, int) and not isinstance(explicit, bool):
            return explicit
        return PRIORITY_BY_SOURCE[self.source]


@dataclass(frozen=True, slots=True)
class SessionEnd:
    """The agent service says a session is over: review what it left pending."""

    agent_id: str
    user_id: str
    session_id: str
    ts: datetime


StreamEvent = Turn | SessionEnd


@dataclass(frozen=True, slots=True)
class Hit:
    """One recall result (the JSON shape of DESIGN §3)."""

    id: str
    kind: Literal["semantic", "episode"]
    text: str
    score: float
    weight: float
    valid_from: datetime | None
    valid_to: datetime | None
    source_turn_ids: tuple[str, ...]
    session_id: str | None
    cold: bool = False  # came from cold storage (only with include_cold); recalling it re-heats it
    event_time: datetime | None = None  # when it was said (episodes) / became valid (semantic memories)
    superseded: bool = False  # history mode: a newer fact replaced what this says
    explain: dict[str, Any] | None = None  # why it ranked there: the score's parts (recall.py)
    # False: a raw turn still waiting for its review (recallable at once: read your writes); its review may
    # yet send it cold, merge or quarantine it.
    reviewed: bool = True
    # A semantic memory's members whose words its text states: it stands in for these only (issue 27).
    speaks_for: tuple[str, ...] = ()
    # A semantic memory: how many turns it stands for and when they were said ({"turns", "first", "last"}).
    stands_for: dict[str, Any] | None = None
    # Knowledge updates (issue 39): the hits of newer statements that superseded this one, and of the older
    # ones this one superseded.
    superseded_by: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out = {
            "id": self.id,
            "kind": self.kind,
            "text": self.text,
            "score": round(self.score, 6),
            "weight": round(self.weight, 6),
            "valid_from": self.valid_from.isoformat() if self.valid_from else None,
            "valid_to": self.valid_to.isoformat() if self.valid_to else None,
            "source_turn_ids": list(self.source_turn_ids),
            "session_id": self.session_id,
            "cold": self.cold,
            "event_time": self.event_time.isoformat() if self.event_time else None,
            "superseded": self.superseded,
            "reviewed": self.reviewed,
        }
        if self.stands_for is not None:
            out["stands_for"] = self.stands_for
        if self.kind == "semantic":
            out["speaks_for"] = list(self.speaks_for)
        if self.superseded_by:
            out["superseded_by"] = list(self.superseded_by)
        if self.supersedes:
            out["supersedes"] = list(self.supersedes)
        if self.explain is not None:
            out["explain"] = self.explain
        return out


# -- review: quality -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QualityScore:
    """Why a turn was kept or sent cold. Every dimension is in [0, 1]."""

    density: float  # information per token: names, numbers, dates, content words vs filler
    timeliness: float  # how long it stays true: identity/preferences high, "right now" low
    uniqueness: float  # 1 - max cosine with the scope's kept memories
    actionability: float  # preferences, constraints, instructions, corrections
    rule_score: float  # weighted combination, before trust
    trust: float  # source trust (user 1.0, tool 0.9, agent 0.7, external 0.7)
    total: float  # rule_score x trust
    reasons: tuple[str, ...] = ()  # short tags a person can read ("greeting", "has_number", ...)

    def to_json(self) -> dict[str, Any]:
        return {
            "density": round(self.density, 4),
            "timeliness": round(self.timeliness, 4),
            "uniqueness": round(self.uniqueness, 4),
            "actionability": round(self.actionability, 4),
            "rule_score": round(self.rule_score, 4),
            "trust": self.trust,
            "total": round(self.total, 4),
            "reasons": list(self.reasons),
        }


# -- review: injection screening --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class InjectionVerdict:
    """How much a turn reads as an instruction to the assistant rather than a fact about the user."""

    score: float  # in [0, 1], after the source adjustment
    raw: float  # noisy-or of the features, before it
    features: tuple[str, ...]  # names of the features that fired, strongest first
    source: str

    def to_json(self) -> dict[str, Any]:
        return {
            "score": round(self.score, 4),
            "raw": round(self.raw, 4),
            "features": list(self.features),
            "source": self.source,
        }


# -- review: facts ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FactCandidate:
    """A fact stated by one turn, before it is reconciled with the chain of (scope, entity, attribute)."""

    entity: str
    attribute: str
    value: str
    valid_from: datetime  # the turn's event time
    source: str  # user | agent | tool | external
    confidence: float
    turn_ids: tuple[str, ...]
    # A correction ("actually it's X, not Y") says the current value was never true: it is retracted in
    # system time instead of closed in valid time.
    correction: bool = False


@dataclass(frozen=True, slots=True)
class CorrectionHint:
    """A correction that names values but not the attribute ("不对，是杭州不是苏州"): resolved against open facts."""

    new_value: str
    old_value: str | None
    valid_from: datetime
    source: str
    confidence: float
    turn_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FactVersion:
    """One stored version of a chain. Retracted versions are kept for history but are never current."""

    id: int
    entity: str
    attribute: str
    value: str
    valid_from: datetime
    valid_to: datetime | None
    source: str
    confidence: float
    turn_ids: tuple[str, ...]
    retracted: bool = False


@dataclass(frozen=True, slots=True)
class NewVersion:
    """A version to insert. `supersedes` names a version this one retracts (system-time replacement)."""

    candidate: FactCandidate
    valid_from: datetime
    valid_to: datetime | None
    supersedes: int | None = None
    retracted: bool = False  # lost a tie: stored for history, never current


@dataclass(frozen=True, slots=True)
class Resolution:
    """What to do to one chain; the repository applies it in one transaction."""

    close: tuple[tuple[int, datetime], ...] = ()  # (version id, valid_to)
    retract: tuple[int, ...] = ()  # version ids the first inserted version supersedes
    insert: tuple[NewVersion, ...] = ()
    add_provenance: tuple[tuple[int, tuple[str, ...]], ...] = ()  # (version id, turn ids)

    @property
    def empty(self) -> bool:
        return not (self.close or self.retract or self.insert or self.add_provenance)


# -- scheduling: what waits for review, and the reviews to start (scheduler.policy decides) ----------

ReviewKind = Literal["full", "light"]
Trigger = Literal["batch_size", "session_end", "idle", "manual"]


@dataclass(frozen=True, slots=True)
class SessionBacklog:
    session_id: str
    pending_light: int  # episodes no review has claimed yet
    last_received_at: datetime  # when the newest of them reached the store
    ended: bool
    top_priority: int = 2  # the most urgent (lowest) priority among its pending episodes
    first_pending_id: int = 0  # the oldest episode of that priority: ties go to whoever waited longest


@dataclass(frozen=True, slots=True)
class ScopeBacklog:
    scope: Scope
    pending_full: int  # episodes not yet claimed by a full review
    sessions: tuple[SessionBacklog, ...]

    @property
    def urgency(self) -> tuple[int, int]:
        """(most urgent priority waiting, id of its oldest episode): lower goes first."""
        return min(((s.top_priority, s.first_pending_id) for s in self.sessions), default=(2, 0))


@dataclass(frozen=True, slots=True)
class Dispatch:
    scope: Scope
    kind: ReviewKind
    trigger: Trigger
    session_id: str | None = None
