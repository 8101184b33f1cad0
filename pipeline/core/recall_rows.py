"""What recall reads back from the store: the rows a recall hydrates its candidates into (values, no I/O).

The store adapters (pipeline/adapters/postgres/) build them; the recall use case (pipeline/recall/) ranks
them. The ports that return them are in pipeline/core/ports.py (with ColdMemory, a cold row's shape).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

MemoryKey = tuple[str, int]  # (kind: EPISODE | SEMANTIC, ref id): a memory as the index and lexicon name it


@dataclass(frozen=True, slots=True)
class RecallEpisode:
    id: int
    turn_id: str
    merged_turn_ids: tuple[str, ...]
    session_id: str
    content: str
    ts: datetime
    source: str
    weight: float
    # Every fact this turn stated was closed before `as_of` or retracted: it asserts what is no longer true.
    superseded: bool
    # Members of the smallest open semantic memory this episode is folded into (0: none): recall undoes
    # the consolidation penalty when that memory is too big to stand in for it.
    folded_into: int = 0
    speaker: str | None = None  # metadata.speaker: who said it, when the agent service names people
    base_weight: float | None = None  # the weight decay starts from (None: as `weight`, no decay known)
    # False while it waits for its review (read your writes): recalled as the raw turn it is.
    reviewed: bool = True
    role: str | None = None  # user | assistant | tool | system: who spoke, when no name is given
    # Knowledge updates (issue 39): the newer statements that superseded this one by `as_of` (episode ids,
    # oldest link first) and since when; the older ones this one superseded. Demoted, never hidden.
    superseded_by: tuple[int, ...] = ()
    superseded_at: datetime | None = None
    supersedes: tuple[int, ...] = ()
    undone_with: tuple[int, ...] = ()  # the other side of each link an operator undid: never ordered again


@dataclass(frozen=True, slots=True)
class SemanticRow:
    id: int
    text: str
    weight: float
    valid_from: datetime
    valid_to: datetime | None
    turn_ids: tuple[str, ...]
    base_weight: float | None = None  # the weight decay starts from (None: as `weight`, no decay known)
    # The members whose words its text states (issue 27): all of them for a fact chain's template or an LLM
    # summary of them; for an extractive text, the members it was taken from. It stands in for these only.
    speaks_for: tuple[str, ...] = ()
    first_said: datetime | None = None  # when its members were said
    last_said: datetime | None = None
    # What its members ask of the assistant (restated requests, issue 40: "answer_length"), when review knew.
    subject: str | None = None
    method: str | None = None  # how review wrote its text: restated | template | extractive | llm | ...
