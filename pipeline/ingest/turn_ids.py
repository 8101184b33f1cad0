"""A turn id across requests: the same id with the same turn is a retry, with another turn a conflict.

Pure. The API checks this at the door (pipeline/adapters/turn_id_ledger.py remembers what each id carried
while its turn may still be in the stream; PostgreSQL knows the stored ones), and the scheduler again for
whatever reached the stream anyway (the Python client writes to Redis directly): there a conflicting
duplicate goes to the dead-letter stream with this reason, never silently nowhere.

What makes two turns "the same" is what the user said: its role and its text. A retry may carry a new
`ts` (a client stamps each attempt) or send none (the API stamps it), so the timestamp is not part of it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

from pipeline.core.models import Turn

TurnKey = tuple[str, str, str]  # (agent_id, user_id, turn_id): an id is unique within its scope only


def key(turn: Turn) -> TurnKey:
    return (turn.agent_id, turn.user_id, turn.turn_id)


def fingerprint(role: str, content: str) -> str:
    digest = hashlib.sha256()
    digest.update(role.encode("utf-8"))
    digest.update(b"\x00")
    digest.update(content.encode("utf-8"))
    return digest.hexdigest()


def turn_fingerprint(turn: Turn) -> str:
    return fingerprint(turn.role, turn.content)


def conflict_reason(turn_id: str, where: str) -> str:
    return (
        f"turn_id {turn_id!r}: already used {where} for a different turn of this scope "
        "(the same id with the same turn is a retry; another turn needs an id of its own)"
    )


def conflicts(turns: Iterable[Turn], known: Mapping[TurnKey, str], where: str) -> dict[int, str]:
    """Index -> reason for each of `turns` whose id `known` holds with another fingerprint."""
    out: dict[int, str] = {}
    for i, turn in enumerate(turns):
        seen = known.get(key(turn))
        if seen is not None and seen != turn_fingerprint(turn):
            out[i] = conflict_reason(turn.turn_id, where)
    return out
