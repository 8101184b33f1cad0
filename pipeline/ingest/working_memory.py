"""Session working memory: the structured state of a live session, and what becomes of it at session end.

The state (current task, confirmed slots, pending questions) lives in Redis with a TTL while the
session runs (pipeline/adapters/working_memory_redis.py). Pure here: validation of a change, and the
turns that hand confirmed slots to the light review when the session ends.

Why confirmed slots travel as turns: a turn with `metadata.entity/attribute/value` is the pipeline's
existing path for an explicit fact (fact_extraction._metadata_fact: source as given, confidence 1.0),
so the light review that the session end triggers reconciles the slot into its fact chain like any
other statement, with an episode as provenance. Its turn_id is derived from the slot, so ending a
session twice (or a retried request) adds nothing twice.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from pipeline.core.errors import InvalidTurn

SLOT_ENTITY = "user"  # fact_extraction.USER_ENTITY: a confirmed slot is a fact about the user
_SLOT_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,63}$")


@dataclass(frozen=True, slots=True)
class Limits:
    max_slots: int = 100
    max_questions: int = 50
    max_chars: int = 2000  # per task, slot value or question


@dataclass(frozen=True, slots=True)
class WorkingMemory:
    task: str | None = None
    slots: dict[str, str] = field(default_factory=dict)  # confirmed: slot name -> value
    pending_questions: tuple[str, ...] = ()
    updated_at: datetime | None = None
    expires_in_s: int | None = None  # None when nothing is stored

    @property
    def empty(self) -> bool:
        return self.task is None and not self.slots and not self.pending_questions

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "slots": dict(sorted(self.slots.items())),
            "pending_questions": list(self.pending_questions),
            "updated_at": self.updated_at.isoformat() if self.updated_at else None,
            "expires_in_s": self.expires_in_s,
        }


class WorkingMemoryStore(Protocol):
    """Where a session's working memory lives (RedisWorkingMemory): the port ending a session reads and
    clears it through. Here rather than in pipeline/core/ports.py because it speaks WorkingMemory."""

    def get(self, agent_id: str, user_id: str, session_id: str) -> WorkingMemory:
        """The session's state; an empty one when none is stored or it expired."""
        ...

    def delete(self, agent_id: str, user_id: str, session_id: str) -> bool:
        """Drop the session's state; whether there was one."""
        ...


@dataclass(frozen=True, slots=True)
class Change:
    """A validated change. `set_slots` / `drop_slots` merge into the stored slots unless `replace`."""

    task: str | None
    clear_task: bool
    set_slots: dict[str, str]
    drop_slots: tuple[str, ...]
    pending_questions: tuple[str, ...] | None
    replace: bool


def parse_change(
    *,
    task: str | None = None,
    slots: Mapping[str, str | None] | None = None,
    pending_questions: list[str] | None = None,
    replace: bool = False,
    limits: Limits = Limits(),
) -> Change:
    """Validate a change; raises InvalidTurn naming the bad field. An empty-string task or a null slot
    value removes it; `replace` starts from an empty state instead of merging."""
    if task is not None:
        _text("task", task, limits)
    set_slots: dict[str, str] = {}
    drop: list[str] = []
    for name, value in (slots or {}).items():
        if not isinstance(name, str) or not _SLOT_NAME.match(name):
            raise InvalidTurn(
                f"slots: name {str(name)[:64]!r} must be 1-64 characters of letters, digits, _ . - "
                "(not starting with . or -)"
            )
        if value is None:
            drop.append(name)
            continue
        if not isinstance(value, str) or not value.strip():
            raise InvalidTurn(f"slots.{name}: expected a non-empty string (null removes the slot)")
        set_slots[name] = _text(f"slots.{name}", value, limits)
    if len(set_slots) > limits.max_slots:
        raise InvalidTurn(f"slots: at most {limits.max_slots}, got {len(set_slots)}")
    questions: tuple[str, ...] | None = None
    if pending_questions is not None:
        if len(pending_questions) > limits.max_questions:
            raise InvalidTurn(
                f"pending_questions: at most {limits.max_questions}, got {len(pending_questions)}"
            )
        questions = tuple(
            _text(f"pending_questions[{i}]", q, limits) for i, q in enumerate(pending_questions)
        )
    return Change(
        task=task or None,
        clear_task=task == "",
        set_slots=set_slots,
        drop_slots=tuple(drop),
        pending_questions=questions,
        replace=replace,
    )


def _text(name: str, value: object, limits: Limits) -> str:
    if not isinstance(value, str):
        raise InvalidTurn(f"{name}: expected a string, got {type(value).__name__}")
    if len(value) > limits.max_chars:
        raise InvalidTurn(f"{name}: longer than {limits.max_chars} characters")
    if "\x00" in value:
        raise InvalidTurn(f"{name}: contains a NUL character")
    try:  # a lone surrogate ("\ud800" in JSON) is a Python str that Redis cannot store as UTF-8
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidTurn(f"{name}: not valid UTF-8 (lone surrogate)") from None
    return value


def slot_turn_id(agent_id: str, user_id: str, session_id: str, name: str, value: str) -> str:
    digest = hashlib.sha256(json.dumps([agent_id, user_id, session_id, name, value]).encode()).hexdigest()
    return f"wm-{digest[:32]}"


def slot_turns(
    state: WorkingMemory, *, agent_id: str, user_id: str, session_id: str, now: datetime
) -> list[dict[str, Any]]:
    """Stream-entry fields (DESIGN §3) for each confirmed slot: an explicit fact stated by the user.

    Role "system" because the service, not the user, wrote the sentence; source "user" because the
    user confirmed the value, which is what the trust and conflict rules weigh.
    """
    return [
        {
            "kind": "turn",
            "turn_id": slot_turn_id(agent_id, user_id, session_id, name, value),
            "agent_id": agent_id,
            "user_id": user_id,
            "session_id": session_id,
            "role": "system",
            "content": f"The user confirmed {name.replace('_', ' ')}: {value}",
            "ts": now.isoformat(),
            "source": "user",
            "metadata": {
                "entity": SLOT_ENTITY,
                "attribute": name,
                "value": value,
                "working_memory": True,
            },
        }
        for name, value in sorted(state.slots.items())
    ]
