"""What each accepted turn id carried, in Redis, while its turn may still be in the stream.

The door (POST /v1/turns) must tell a retry from a conflicting reuse of a turn id before the scheduler has
stored the first turn in PostgreSQL: seconds normally, longer in a PostgreSQL outage, when turns wait in
the stream. One key per (scope, turn id) holding the turn's fingerprint (pipeline/ingest/turn_ids.py),
checked and written by one script, so two requests racing with the same id cannot both be accepted.
After `ttl_s` (HINDSIGHT_TURN_ID_LEDGER_S, 6 h by default) the key is gone and PostgreSQL answers (the
scheduler stored the turn long before).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import redis

from pipeline.adapters.redis_stream import translate_errors
from pipeline.ingest.turn_ids import TurnKey

# All or nothing: either some id carries another fingerprint (nothing written; their positions returned)
# or each id new to the ledger is recorded (their positions returned, so a caller can take them back).
_CHECK_AND_RECORD = """
local conflicts = {}
for i, k in ipairs(KEYS) do
  local seen = redis.call('GET', k)
  if seen and seen ~= ARGV[i + 1] then table.insert(conflicts, i - 1) end
end
if #conflicts > 0 then return {conflicts, {}} end
local fresh = {}
for i, k in ipairs(KEYS) do
  if redis.call('SET', k, ARGV[i + 1], 'EX', ARGV[1], 'NX') then table.insert(fresh, i - 1) end
end
return {conflicts, fresh}
"""


@dataclass(frozen=True)
class Recorded:
    conflicts: list[int]  # positions whose id the ledger holds with another fingerprint (nothing recorded)
    fresh: list[int]  # positions recorded now (the ledger had no entry for them)


class TurnIdLedger:
    def __init__(self, client: redis.Redis, prefix: str, *, ttl_s: int) -> None:
        # Far longer than a turn waits in the stream unless PostgreSQL is down that long; the scheduler
        # dead-letters a conflict that comes through after that (or around the API, straight to Redis).
        self.client = client
        self.prefix = prefix
        self.ttl_s = ttl_s
        self._script: Any = client.register_script(_CHECK_AND_RECORD)

    def redis_key(self, key: TurnKey) -> str:
        # Hashed: ids may hold ':' and are up to MAX_ID_CHARS long; NUL cannot occur in an id.
        return f"{self.prefix}:{hashlib.sha256(chr(0).join(key).encode('utf-8')).hexdigest()[:40]}"

    def check_and_record(self, keys: Sequence[TurnKey], fingerprints: Sequence[str]) -> Recorded:
        if not keys:
            return Recorded([], [])
        with translate_errors():
            reply = self._script(
                keys=[self.redis_key(k) for k in keys], args=[self.ttl_s, *fingerprints], client=self.client
            )
        conflicts, fresh = reply
        return Recorded([int(i) for i in conflicts], [int(i) for i in fresh])

    def forget(self, keys: Sequence[TurnKey]) -> None:
        """Take back ids recorded for turns that were then not accepted after all."""
        if keys:
            with translate_errors():
                self.client.delete(*[self.redis_key(k) for k in keys])
