"""Turning untrusted input into Turns. Pure: one set of rules for the client, HTTP, JSONL and the stream.

Every rejection raises `InvalidTurn` whose reason names the field and what is wrong with it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from pipeline.core.authz import space_name
from pipeline.core.errors import InvalidTurn, TurnIdConflict
from pipeline.core.models import (
    DEFAULT_SOURCE,
    MAX_ID_CHARS,
    ROLES,
    SOURCES,
    SPACES,
    SessionEnd,
    StreamEvent,
    Turn,
)
from pipeline.core.tool_calls import TOOL_KEYS, TOOL_ROLE, TOOL_STATUSES

# A turn's text: a long assistant reply with code runs to tens of KB. Review embeds what is past the
# model's first window as passages (pipeline/review/passages.py); BM25 reads all of it.
MAX_CONTENT_BYTES = 256 * 1024
MAX_METADATA_BYTES = 16 * 1024
MAX_METADATA_DEPTH = 8
MIN_YEAR, MAX_YEAR = 1900, 2200
KINDS = ("turn", "session_end")
MAX_TOOL_NAME_CHARS = 200
MAX_TASK_CHARS = 500
STREAM_VERSION = "1"


def _text(fields: Mapping[str, Any], name: str, *, required: bool = True) -> str | None:
    value = fields.get(name)
    if value is None or value == "":
        if required:
            raise InvalidTurn(f"{name}: missing")
        return None
    if not isinstance(value, str):
        raise InvalidTurn(f"{name}: must be a string, got {type(value).__name__}")
    return value


def _identifier(fields: Mapping[str, Any], name: str) -> str:
    value = _text(fields, name)
    assert value is not None
    if len(value) > MAX_ID_CHARS:
        raise InvalidTurn(f"{name}: longer than {MAX_ID_CHARS} characters")
    # One word of printable characters (str.split() splits on exactly the characters str.isspace() names).
    if not value.isprintable() or value.split() != [value]:
        raise InvalidTurn(f"{name}: must not contain whitespace or control characters")
    return value


def parse_ts(value: Any, *, field_name: str = "ts") -> datetime:
    """An ISO-8601 timestamp with a UTC offset, as an aware datetime."""
    if isinstance(value, datetime):
        ts = value
    elif isinstance(value, str):
        try:
            ts = datetime.fromisoformat(value.replace("Z", "+00:00") if value.endswith("Z") else value)
        except ValueError:
            raise InvalidTurn(f"{field_name}: not an ISO-8601 timestamp: {value[:64]!r}") from None
    else:
        raise InvalidTurn(f"{field_name}: must be an ISO-8601 string, got {type(value).__name__}")
    if ts.tzinfo is None or ts.utcoffset() is None:
        raise InvalidTurn(f"{field_name}: must include a UTC offset (e.g. 2024-05-01T10:00:00+00:00)")
    if not MIN_YEAR <= ts.year <= MAX_YEAR:
        raise InvalidTurn(f"{field_name}: year {ts.year} outside {MIN_YEAR}..{MAX_YEAR}")
    return ts


def _depth(value: Any, level: int = 0) -> int:
    if isinstance(value, dict):
        return max((_depth(v, level + 1) for v in value.values()), default=level + 1)
    if isinstance(value, list):
        return max((_depth(v, level + 1) for v in value), default=level + 1)
    return level


def parse_metadata(value: Any) -> dict[str, Any]:
    """The metadata object: a JSON object (or its JSON text) with typed known keys."""
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        if len(value.encode("utf-8", "surrogatepass")) > MAX_METADATA_BYTES:
            raise InvalidTurn(f"metadata: larger than {MAX_METADATA_BYTES} bytes")
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            raise InvalidTurn("metadata: not valid JSON") from None
    if not isinstance(value, dict):
        raise InvalidTurn(f"metadata: must be a JSON object, got {type(value).__name__}")
    try:
        if _depth(value) > MAX_METADATA_DEPTH:
            raise InvalidTurn(f"metadata: nested deeper than {MAX_METADATA_DEPTH} levels")
        # allow_nan=False: NaN and Infinity are not JSON, and PostgreSQL's jsonb refuses them.
        encoded = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (RecursionError, TypeError, ValueError):
        raise InvalidTurn("metadata: not serialisable as JSON") from None
    try:
        size = len(encoded.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidTurn("metadata: not valid UTF-8 (lone surrogate)") from None
    if size > MAX_METADATA_BYTES:
        raise InvalidTurn(f"metadata: larger than {MAX_METADATA_BYTES} bytes")
    if "\x00" in encoded or "\\u0000" in encoded:
        raise InvalidTurn("metadata: contains a NUL character")
    _check_known_metadata(value)
    return value


def _check_known_metadata(meta: dict[str, Any]) -> None:
    for key in ("entity", "attribute", "value", "memory_type"):
        if key in meta and not isinstance(meta[key], str):
            raise InvalidTurn(f"metadata.{key}: must be a string")
    if "core" in meta and not isinstance(meta["core"], bool):
        raise InvalidTurn("metadata.core: must be true or false")
    if "space" in meta and meta["space"] not in SPACES:
        raise InvalidTurn(f"metadata.space: must be one of {', '.join(SPACES)}")
    if "priority" in meta:
        p = meta["priority"]
        if not isinstance(p, int) or isinstance(p, bool) or not 1 <= p <= 9:
            raise InvalidTurn("metadata.priority: must be an integer 1..9")


def check_tool_metadata(meta: dict[str, Any], role: str) -> dict[str, Any]:
    """A tool turn's call record (issue 30): `tool`, `args`, `status`, `latency_ms`, `error`, `task`.

    Checked on `tool` turns only: other roles may use these keys for their own ends, as before. A tool
    turn with none of them is an ordinary turn; one with any of them names its tool and how the call ended,
    or the record would count nowhere."""
    if role != TOOL_ROLE or not any(k in meta for k in TOOL_KEYS):
        return meta
    _check_tool_name(meta.get("tool"))
    if "status" not in meta:
        raise InvalidTurn(f"metadata.status: missing (how the call ended: {', '.join(TOOL_STATUSES)})")
    if meta["status"] not in TOOL_STATUSES:
        raise InvalidTurn(f"metadata.status: must be one of {', '.join(TOOL_STATUSES)}")
    if "args" in meta and not isinstance(meta["args"], dict):
        raise InvalidTurn(f"metadata.args: must be an object, got {type(meta['args']).__name__}")
    latency = meta.get("latency_ms", 0)
    # NaN and infinities never get this far: they are not JSON (parse_metadata refuses them).
    if not isinstance(latency, int | float) or isinstance(latency, bool) or latency < 0:
        raise InvalidTurn("metadata.latency_ms: must be a number >= 0 (milliseconds)")
    if not isinstance(meta.get("error", ""), str):
        raise InvalidTurn("metadata.error: must be a string")
    task = meta.get("task", "")
    if not isinstance(task, str):
        raise InvalidTurn("metadata.task: must be a string")
    if len(task) > MAX_TASK_CHARS:
        raise InvalidTurn(f"metadata.task: longer than {MAX_TASK_CHARS} characters")
    return meta


def _check_tool_name(tool: Any) -> None:
    if tool is None:
        raise InvalidTurn(
            "metadata.tool: missing (args, status, latency_ms, error and task describe a named tool)"
        )
    if not isinstance(tool, str) or not tool.strip():
        raise InvalidTurn("metadata.tool: must be a non-empty string (the tool's name)")
    if len(tool) > MAX_TOOL_NAME_CHARS or not tool.isprintable():
        raise InvalidTurn(f"metadata.tool: must be printable and at most {MAX_TOOL_NAME_CHARS} characters")


def _check_space(meta: dict[str, Any], agent_id: str) -> dict[str, Any]:
    """`metadata.space` (DESIGN §3) states the space the writer means; the agent_id is what puts the turn
    there (README, Access control). A statement that disagrees is refused rather than silently ignored:
    the turn would land in a space its writer did not mean."""
    stated = meta.get("space")
    actual = space_name(agent_id)
    if stated is not None and stated != actual:
        where = (
            "agent_id 'shared'"
            if stated == "shared"
            else "agent_id 'system'"
            if stated == "system"
            else ("an agent's own agent_id")
        )
        raise InvalidTurn(
            f"metadata.space: {stated!r}, but agent_id {agent_id!r} is the {actual} space "
            f"(a turn goes to the {stated} space with {where})"
        )
    return meta


def _content(fields: Mapping[str, Any]) -> str:
    content = _text(fields, "content")
    assert content is not None
    if not content.strip():
        raise InvalidTurn("content: empty")
    try:
        size = len(content.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidTurn("content: not valid UTF-8 (lone surrogate)") from None
    if size > MAX_CONTENT_BYTES:
        limit = f"{MAX_CONTENT_BYTES} bytes ({MAX_CONTENT_BYTES // 1024} KiB)"
        raise InvalidTurn(f"content: {size} bytes, more than the limit of {limit}")
    if "\x00" in content:
        raise InvalidTurn("content: contains a NUL character")
    return content


def parse_event(fields: Mapping[str, Any], *, now: datetime, require_ts: bool = False) -> StreamEvent:
    """Validate one turn or session_end given as a mapping (stream fields, a JSONL object, an HTTP item).

    `now` fills in a missing `ts` unless `require_ts` (stream entries always carry one).
    """
    if not isinstance(fields, Mapping):
        raise InvalidTurn(f"entry: must be an object, got {type(fields).__name__}")
    version = fields.get("v")
    if version is not None and str(version) != STREAM_VERSION:
        raise InvalidTurn(f"v: unsupported version {str(version)[:16]!r} (expected {STREAM_VERSION!r})")
    kind = _text(fields, "kind", required=False) or "turn"
    if kind not in KINDS:
        raise InvalidTurn(f"kind: must be one of {', '.join(KINDS)}, got {kind[:32]!r}")
    agent_id = _identifier(fields, "agent_id")
    user_id = _identifier(fields, "user_id")
    session_id = _identifier(fields, "session_id")
    raw_ts = fields.get("ts")
    if raw_ts in (None, ""):
        if require_ts:
            raise InvalidTurn("ts: missing")
        ts = now
    else:
        ts = parse_ts(raw_ts)
    if kind == "session_end":
        return SessionEnd(agent_id=agent_id, user_id=user_id, session_id=session_id, ts=ts)

    turn_id = _identifier(fields, "turn_id")
    role = _text(fields, "role")
    if role not in ROLES:
        raise InvalidTurn(f"role: must be one of {', '.join(ROLES)}, got {str(role)[:32]!r}")
    source = _text(fields, "source", required=False) or DEFAULT_SOURCE[role]
    if source not in SOURCES:
        raise InvalidTurn(f"source: must be one of {', '.join(SOURCES)}, got {source[:32]!r}")
    return Turn(
        turn_id=turn_id,
        agent_id=agent_id,
        user_id=user_id,
        session_id=session_id,
        role=role,
        content=_content(fields),
        ts=ts,
        source=source,
        metadata=check_tool_metadata(_check_space(parse_metadata(fields.get("metadata")), agent_id), role),
    )


def encode_event(event: StreamEvent) -> dict[str, str]:
    """The stream entry for an event (DESIGN §3: every field a string)."""
    base = {
        "v": STREAM_VERSION,
        "agent_id": event.agent_id,
        "user_id": event.user_id,
        "session_id": event.session_id,
        "ts": event.ts.isoformat(),
    }
    if isinstance(event, SessionEnd):
        return {**base, "kind": "session_end"}
    return {
        **base,
        "kind": "turn",
        "turn_id": event.turn_id,
        "role": event.role,
        "content": event.content,
        "source": event.source,
        "metadata": json.dumps(event.metadata, ensure_ascii=False, separators=(",", ":")),
    }


class RepeatedTurnIds:
    """Refuses a turn id that its scope already used earlier in one request or file for another turn.

    A turn id is the idempotency key within its scope: the scheduler stores the first turn with an id and
    skips the rest, so two different turns under one id would silently lose one. The same id with the
    same turn again is a retry and passes.
    """

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str, str], tuple[str, str]] = {}  # key -> (where, fingerprint)

    def check(self, event: StreamEvent, where: str) -> None:
        """Raises TurnIdConflict naming the id and where it was first used; `where` names this one."""
        if not isinstance(event, Turn):
            return
        key = (event.agent_id, event.user_id, event.turn_id)
        fingerprint = json.dumps(encode_event(event), sort_keys=True, ensure_ascii=False)
        first = self._seen.setdefault(key, (where, fingerprint))
        if first[1] != fingerprint:
            raise TurnIdConflict(
                f"turn_id {event.turn_id!r}: already used by {first[0]} for a different turn of this scope "
                "(the same id with the same turn is a retry; another turn needs an id of its own)"
            )


def decode_stream_fields(raw: Mapping[bytes | str, bytes | str]) -> dict[str, str]:
    """Stream fields as text. Undecodable bytes are an error naming the field, not a crash."""
    out: dict[str, str] = {}
    for key, value in raw.items():
        try:
            k = key.decode("utf-8") if isinstance(key, bytes) else key
        except UnicodeDecodeError:
            raise InvalidTurn("entry: a field name is not valid UTF-8") from None
        try:
            out[k] = value.decode("utf-8") if isinstance(value, bytes) else value
        except UnicodeDecodeError:
            raise InvalidTurn(f"{k[:64]}: not valid UTF-8") from None
    return out


def utcnow() -> datetime:
    return datetime.now(UTC)
