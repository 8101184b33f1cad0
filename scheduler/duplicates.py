"""A turn id reused for another turn that reached the stream anyway: kept in the dead-letter stream.

The API refuses such a turn at the door (409), but the Python client writes to Redis directly and the
door's ledger expires. The store keeps the first turn under an id (ON CONFLICT DO NOTHING); without this the
other would vanish with no trace. A retry of the same turn (same role and text) is not a conflict.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Engine

from pipeline.adapters.postgres.turn_fingerprints_sql import stored_fingerprints
from pipeline.adapters.redis_stream import Entry, TurnStream
from pipeline.core.logging import get_logger
from pipeline.core.models import Turn
from pipeline.ingest import turn_ids

log = get_logger(__name__)


def dead_letter_reused_ids(
    engine: Engine,
    stream: TurnStream,
    entries: Sequence[Entry],
    turns: Sequence[Turn],
    entry_ids: Sequence[str],
) -> int:
    """After an insert that skipped some turns: dead-letter each of `turns` (entry `entry_ids[i]`) whose id
    its scope stores with another turn (one stored by this very insert included). Returns how many."""
    stored = stored_fingerprints(engine, list(dict.fromkeys(turn_ids.key(t) for t in turns)))
    raw = dict(entries)
    found = turn_ids.conflicts(turns, stored, "by a stored turn")
    for i, reason in found.items():
        reason = f"{reason}; this one was not stored"
        stream.dead_letter(entry_ids[i], raw[entry_ids[i]], reason)
        log.warning("scheduler.dead_letter", entry_id=entry_ids[i], turn_id=turns[i].turn_id, reason=reason)
    return len(found)
