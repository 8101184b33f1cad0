"""pipeline.ingest.validation: one set of rules for every way a turn comes in.

A table of good and bad inputs (each rejection names its field), the defaults, and two hypothesis
properties: a valid turn survives encode -> stream -> decode -> parse unchanged, and no input at all makes
`parse_event` raise anything but `InvalidTurn`.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.core.authz import space_name
from pipeline.core.errors import InvalidTurn
from pipeline.core.models import DEFAULT_SOURCE, PRIORITY_BY_SOURCE, ROLES, SOURCES, SPACES, SessionEnd, Turn
from pipeline.ingest.validation import (
    MAX_CONTENT_BYTES,
    MAX_ID_CHARS,
    MAX_METADATA_BYTES,
    MAX_METADATA_DEPTH,
    decode_stream_fields,
    encode_event,
    parse_event,
)

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
DROP = object()  # an override that removes the field


def turn_fields(**overrides: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "agent_id": "agent-1",
        "user_id": "user-1",
        "session_id": "sess-1",
        "turn_id": "turn-1",
        "role": "user",
        "content": "I moved to Lisbon last spring.",
        "ts": "2024-05-01T10:00:00+00:00",
    }
    fields.update(overrides)
    return {k: v for k, v in fields.items() if v is not DROP}


def end_fields(**overrides: Any) -> dict[str, Any]:
    return turn_fields(**{"kind": "session_end", "turn_id": DROP, "role": DROP, "content": DROP, **overrides})


def nested(depth: int) -> dict[str, Any]:
    """A metadata object `depth` levels deep, counting the object itself."""
    value: dict[str, Any] = {"leaf": 1}
    for _ in range(depth - 1):
        value = {"k": value}
    return value


def parse_turn(fields: dict[str, Any]) -> Turn:
    turn = parse_event(fields, now=NOW)
    assert isinstance(turn, Turn)
    return turn


def reason_of(fields: Any, *, require_ts: bool = False) -> str:
    with pytest.raises(InvalidTurn) as info:
        parse_event(fields, now=NOW, require_ts=require_ts)
    assert str(info.value) == info.value.reason
    return info.value.reason


# -- rejections --------------------------------------------------------------------------------------

BAD: list[tuple[str, Any, str]] = [
    # content
    ("blank content", turn_fields(content=" \n\t "), "content: empty"),
    ("empty content", turn_fields(content=""), "content: missing"),
    ("no content", turn_fields(content=DROP), "content: missing"),
    (
        "content one byte too long",
        turn_fields(content="x" * (MAX_CONTENT_BYTES + 1)),
        f"content: {MAX_CONTENT_BYTES + 1} bytes, more than the limit of {MAX_CONTENT_BYTES} bytes (256 KiB)",
    ),
    (
        "content too long in UTF-8 bytes, not characters",
        turn_fields(content="é" * (MAX_CONTENT_BYTES // 2 + 1)),
        f"content: {MAX_CONTENT_BYTES + 2} bytes, more than the limit of {MAX_CONTENT_BYTES} bytes (256 KiB)",
    ),
    ("NUL in content", turn_fields(content="before\x00after"), "content: contains a NUL character"),
    (
        "lone surrogate in content",
        turn_fields(content="a\ud800b"),
        "content: not valid UTF-8 (lone surrogate)",
    ),
    ("int content", turn_fields(content=42), "content: must be a string, got int"),
    ("list content", turn_fields(content=["hi"]), "content: must be a string, got list"),
    # ts
    ("naive ts", turn_fields(ts="2024-05-01T10:00:00"), "ts: must include a UTC offset"),
    ("garbage ts", turn_fields(ts="yesterday"), "ts: not an ISO-8601 timestamp: 'yesterday'"),
    ("hour 24", turn_fields(ts="2024-05-01T24:00:00+00:00"), "ts: not an ISO-8601 timestamp"),
    ("year before 1900", turn_fields(ts="1899-12-31T23:59:59+00:00"), "ts: year 1899 outside 1900..2200"),
    ("year after 2200", turn_fields(ts="2201-01-01T00:00:00+00:00"), "ts: year 2201 outside 1900..2200"),
    ("int ts", turn_fields(ts=1714557600), "ts: must be an ISO-8601 string, got int"),
    ("list ts", turn_fields(ts=["2024-05-01T10:00:00+00:00"]), "ts: must be an ISO-8601 string, got list"),
    # role and source
    (
        "unknown role",
        turn_fields(role="admin"),
        "role: must be one of user, assistant, tool, system, got 'admin'",
    ),
    ("no role", turn_fields(role=DROP), "role: missing"),
    ("role None", turn_fields(role=None), "role: missing"),
    ("int role", turn_fields(role=1), "role: must be a string, got int"),
    ("unknown source", turn_fields(source="robot"), "source: must be one of user, agent, tool, external"),
    # identifiers
    ("space in turn_id", turn_fields(turn_id="turn 1"), "turn_id: must not contain whitespace"),
    ("leading space in turn_id", turn_fields(turn_id=" turn-1"), "turn_id: must not contain whitespace"),
    ("newline in session_id", turn_fields(session_id="s\n1"), "session_id: must not contain whitespace"),
    ("control char in user_id", turn_fields(user_id="u\x07"), "user_id: must not contain whitespace"),
    ("no-break space in agent_id", turn_fields(agent_id="a\u00a0b"), "agent_id: must not contain whitespace"),
    ("long agent_id", turn_fields(agent_id="a" * (MAX_ID_CHARS + 1)), "agent_id: longer than 256 characters"),
    ("no turn_id", turn_fields(turn_id=DROP), "turn_id: missing"),
    ("empty turn_id", turn_fields(turn_id=""), "turn_id: missing"),
    ("no agent_id", turn_fields(agent_id=DROP), "agent_id: missing"),
    ("session_id None", turn_fields(session_id=None), "session_id: missing"),
    ("int agent_id", turn_fields(agent_id=7), "agent_id: must be a string, got int"),
    ("list user_id", turn_fields(user_id=["u"]), "user_id: must be a string, got list"),
    # version and kind
    ("version 2", turn_fields(v="2"), "v: unsupported version '2' (expected '1')"),
    ("version 1.0", turn_fields(v="1.0"), "v: unsupported version '1.0'"),
    ("unknown kind", turn_fields(kind="delete"), "kind: must be one of turn, session_end, got 'delete'"),
    ("int kind", turn_fields(kind=3), "kind: must be a string, got int"),
    # metadata: known keys
    ("core not bool", turn_fields(metadata={"core": "yes"}), "metadata.core: must be true or false"),
    ("core as 1", turn_fields(metadata={"core": 1}), "metadata.core: must be true or false"),
    ("entity not str", turn_fields(metadata={"entity": 3}), "metadata.entity: must be a string"),
    (
        "memory_type not str",
        turn_fields(metadata={"memory_type": None}),
        "metadata.memory_type: must be a string",
    ),
    ("unknown space", turn_fields(metadata={"space": "public"}), "metadata.space: must be one of private"),
    ("priority 0", turn_fields(metadata={"priority": 0}), "metadata.priority: must be an integer 1..9"),
    ("priority 10", turn_fields(metadata={"priority": 10}), "metadata.priority: must be an integer 1..9"),
    ("priority bool", turn_fields(metadata={"priority": True}), "metadata.priority: must be an integer 1..9"),
    ("priority str", turn_fields(metadata={"priority": "1"}), "metadata.priority: must be an integer 1..9"),
    ("priority float", turn_fields(metadata={"priority": 2.0}), "metadata.priority: must be an integer 1..9"),
    # metadata: shape
    ("metadata not JSON", turn_fields(metadata="{not json"), "metadata: not valid JSON"),
    ("metadata JSON array", turn_fields(metadata="[1, 2]"), "metadata: must be a JSON object, got list"),
    ("metadata list", turn_fields(metadata=[1, 2]), "metadata: must be a JSON object, got list"),
    ("metadata int", turn_fields(metadata=5), "metadata: must be a JSON object, got int"),
    (
        "metadata 9 levels deep",
        turn_fields(metadata=nested(MAX_METADATA_DEPTH + 1)),
        "metadata: nested deeper than 8 levels",
    ),
    (
        "metadata 9 levels deep through lists",
        turn_fields(metadata={"a": [[[[[[[[1]]]]]]]]}),
        "metadata: nested deeper than 8 levels",
    ),
    (
        "metadata JSON text nested far too deep",
        turn_fields(metadata='{"a":' + "[" * 100_000 + "]" * 100_000 + "}"),
        "metadata: larger than 16384 bytes",
    ),
    (
        "metadata JSON text nested deeply",
        turn_fields(metadata='{"a":' + "[" * 5_000 + "]" * 5_000 + "}"),
        "metadata: not valid JSON",  # too deep for the JSON parser
    ),
    (
        "metadata dict too large",
        turn_fields(metadata={"blob": "x" * MAX_METADATA_BYTES}),
        "metadata: larger than 16384 bytes",
    ),
    (
        "metadata text too large",
        turn_fields(metadata=json.dumps({"blob": "x" * MAX_METADATA_BYTES})),
        "metadata: larger than 16384 bytes",
    ),
    ("NUL in metadata", turn_fields(metadata={"note": "a\x00b"}), "metadata: contains a NUL character"),
    (
        "escaped NUL in metadata text",
        turn_fields(metadata='{"note": "a\\u0000b"}'),
        "metadata: contains a NUL",
    ),
    ("metadata not serialisable", turn_fields(metadata={"when": NOW}), "metadata: not serialisable as JSON"),
    # JSON text that PostgreSQL's jsonb refuses must not get past validation (the scheduler would crash on it)
    ("NaN in metadata text", turn_fields(metadata='{"x": NaN}'), "metadata: not serialisable as JSON"),
    ("Infinity in metadata", turn_fields(metadata={"x": float("inf")}), "metadata: not serialisable as JSON"),
    ("1e400 in metadata text", turn_fields(metadata='{"x": 1e400}'), "metadata: not serialisable as JSON"),
    ("lone surrogate in metadata", turn_fields(metadata={"x": "\udc80"}), "metadata: not valid UTF-8"),
    ("escaped lone surrogate", turn_fields(metadata='{"x": "\\ud800"}'), "metadata: not valid UTF-8"),
    # session_end
    ("session_end without session_id", end_fields(session_id=DROP), "session_id: missing"),
    ("session_end with naive ts", end_fields(ts="2024-05-01T10:00:00"), "ts: must include a UTC offset"),
    # not an object at all
    ("a list", ["agent-1"], "entry: must be an object, got list"),
    ("a string", "agent-1", "entry: must be an object, got str"),
    ("None", None, "entry: must be an object, got NoneType"),
]


@pytest.mark.parametrize(("fields", "expected"), [(f, e) for _, f, e in BAD], ids=[n for n, _, _ in BAD])
def test_bad_input_names_the_field(fields: Any, expected: str) -> None:
    assert reason_of(fields).startswith(expected)


def test_require_ts_rejects_a_missing_ts() -> None:
    assert reason_of(turn_fields(ts=DROP), require_ts=True) == "ts: missing"
    assert reason_of(end_fields(ts=""), require_ts=True) == "ts: missing"


def test_a_long_garbage_ts_is_cut_in_the_reason() -> None:
    reason = reason_of(turn_fields(ts="x" * 1000))
    assert reason == f"ts: not an ISO-8601 timestamp: {'x' * 64!r}"


# -- acceptances -------------------------------------------------------------------------------------

GOOD: list[tuple[str, dict[str, Any]]] = [
    ("plain", turn_fields()),
    ("version 1", turn_fields(v="1")),
    ("empty kind is a turn", turn_fields(kind="")),
    ("explicit kind turn", turn_fields(kind="turn")),
    ("Z suffix", turn_fields(ts="2024-05-01T10:00:00Z")),
    ("non-UTC offset", turn_fields(ts="2024-05-01T10:00:00+05:30")),
    ("first second of 1900", turn_fields(ts="1900-01-01T00:00:00+00:00")),
    ("last second of 2200", turn_fields(ts="2200-12-31T23:59:59+00:00")),
    ("content at the limit", turn_fields(content="x" * MAX_CONTENT_BYTES)),
    ("multibyte content at the limit", turn_fields(content="é" * (MAX_CONTENT_BYTES // 2))),
    ("content with surrounding space", turn_fields(content="  hi  ")),
    ("turn_id at the limit", turn_fields(turn_id="t" * MAX_ID_CHARS)),
    ("unicode ids", turn_fields(agent_id="agent-é", user_id="用户", session_id="sess-🙂")),
    ("every source", turn_fields(role="tool", source="external")),
    ("metadata as a dict", turn_fields(metadata={"entity": "user", "core": True, "priority": 9})),
    ("metadata as JSON text", turn_fields(metadata='{"space": "private", "priority": 1}')),
    ("metadata empty text", turn_fields(metadata="")),
    ("metadata None", turn_fields(metadata=None)),
    ("metadata 8 levels deep", turn_fields(metadata=nested(MAX_METADATA_DEPTH))),
    ("metadata with null and nesting", turn_fields(metadata={"a": None, "b": [1, {"c": "d"}], "e": 1.5})),
    ("session_end", end_fields()),
    ("session_end with a turn_id", end_fields(turn_id="turn-9")),
    ("session_end ignores turn fields", end_fields(role="admin", content="")),
]


@pytest.mark.parametrize("fields", [f for _, f in GOOD], ids=[n for n, _ in GOOD])
def test_good_input_is_accepted(fields: dict[str, Any]) -> None:
    event = parse_event(fields, now=NOW)
    if fields.get("kind") == "session_end":
        assert isinstance(event, SessionEnd)
        assert not hasattr(event, "turn_id")
    else:
        assert isinstance(event, Turn)
        assert event.turn_id == fields["turn_id"]
        assert event.content == fields["content"]
    assert (event.agent_id, event.user_id, event.session_id) == (
        fields["agent_id"],
        fields["user_id"],
        fields["session_id"],
    )


def test_turn_values() -> None:
    turn = parse_event(
        turn_fields(ts="2024-05-01T10:00:00+05:30", metadata='{"entity": "user", "core": true}'), now=NOW
    )
    assert turn == Turn(
        turn_id="turn-1",
        agent_id="agent-1",
        user_id="user-1",
        session_id="sess-1",
        role="user",
        content="I moved to Lisbon last spring.",
        ts=datetime(2024, 5, 1, 10, 0, tzinfo=timezone(timedelta(hours=5, minutes=30))),
        source="user",
        metadata={"entity": "user", "core": True},
    )
    assert turn.ts.utcoffset() == timedelta(hours=5, minutes=30)


def test_z_suffix_means_utc() -> None:
    turn = parse_event(turn_fields(ts="2024-05-01T10:00:00Z"), now=NOW)
    assert turn.ts == datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
    assert turn.ts.utcoffset() == timedelta(0)


def test_session_end_values() -> None:
    assert parse_event(end_fields(turn_id="ignored"), now=NOW) == SessionEnd(
        agent_id="agent-1", user_id="user-1", session_id="sess-1", ts=datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
    )


# -- defaults ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("role", "source"), sorted(DEFAULT_SOURCE.items()))
def test_source_defaults_from_role(role: str, source: str) -> None:
    assert parse_turn(turn_fields(role=role)).source == source
    assert parse_turn(turn_fields(role=role, source="")).source == source


def test_every_role_has_a_default_source() -> None:
    assert set(DEFAULT_SOURCE) == set(ROLES)
    assert set(DEFAULT_SOURCE.values()) <= set(SOURCES)


def test_explicit_source_wins_over_the_role() -> None:
    assert parse_turn(turn_fields(role="user", source="external")).source == "external"


@pytest.mark.parametrize("missing", [DROP, None, ""])
def test_ts_is_filled_from_now(missing: Any) -> None:
    assert parse_event(turn_fields(ts=missing), now=NOW).ts == NOW
    assert parse_event(end_fields(ts=missing), now=NOW).ts == NOW


@pytest.mark.parametrize(("source", "priority"), sorted(PRIORITY_BY_SOURCE.items()))
def test_priority_from_source(source: str, priority: int) -> None:
    assert parse_turn(turn_fields(source=source)).priority == priority


@pytest.mark.parametrize("priority", [1, 5, 9])
def test_metadata_priority_overrides_the_source(priority: int) -> None:
    turn = parse_turn(turn_fields(source="tool", metadata={"priority": priority}))
    assert turn.priority == priority


def test_metadata_defaults_to_empty() -> None:
    assert parse_turn(turn_fields()).metadata == {}


# -- the stream encoding -----------------------------------------------------------------------------


def test_encode_event_writes_only_strings() -> None:
    turn = parse_event(turn_fields(metadata={"core": True, "priority": 2}), now=NOW)
    encoded = encode_event(turn)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in encoded.items())
    assert encoded["v"] == "1"
    assert encoded["kind"] == "turn"
    assert json.loads(encoded["metadata"]) == {"core": True, "priority": 2}
    assert encode_event(parse_event(end_fields(), now=NOW)) == {
        "v": "1",
        "kind": "session_end",
        "agent_id": "agent-1",
        "user_id": "user-1",
        "session_id": "sess-1",
        "ts": "2024-05-01T10:00:00+00:00",
    }


def test_decode_stream_fields_decodes_bytes() -> None:
    raw: dict[bytes | str, bytes | str] = {b"agent_id": b"agent-\xc3\xa9", "role": "user", b"content": "hi"}
    assert decode_stream_fields(raw) == {"agent_id": "agent-é", "role": "user", "content": "hi"}


def test_undecodable_value_names_its_field() -> None:
    with pytest.raises(InvalidTurn) as info:
        decode_stream_fields({b"content": b"\xff\xfe"})
    assert info.value.reason == "content: not valid UTF-8"


def test_undecodable_field_name() -> None:
    with pytest.raises(InvalidTurn) as info:
        decode_stream_fields({b"\xff": b"x"})
    assert info.value.reason == "entry: a field name is not valid UTF-8"


def _stream_round_trip(event: Turn | SessionEnd) -> Turn | SessionEnd:
    """What the scheduler reads back after a writer added `event` to the Redis stream."""
    raw: dict[bytes | str, bytes | str] = {
        k.encode("utf-8"): v.encode("utf-8") for k, v in encode_event(event).items()
    }
    return parse_event(decode_stream_fields(raw), now=NOW, require_ts=True)


# Text that validation accepts: no lone surrogates, no NUL.
_valid_chars = st.characters(exclude_categories=["Cs"], exclude_characters="\x00")
_content = st.text(_valid_chars, min_size=1, max_size=300).filter(lambda s: s.strip() != "")
# Identifiers: printable, no whitespace.
_id_chars = st.characters(exclude_categories=("Cs", "Cc", "Cf", "Co", "Cn", "Zs", "Zl", "Zp"))
_ids = st.text(_id_chars, min_size=1, max_size=40).filter(
    lambda s: s.isprintable() and not any(ch.isspace() for ch in s)
)
_offsets = st.integers(min_value=-(24 * 60 - 1), max_value=24 * 60 - 1).map(
    lambda m: timezone(timedelta(minutes=m))
)
_aware = st.datetimes(
    min_value=datetime(1900, 1, 1),
    max_value=datetime(2200, 12, 31, 23, 59, 59, 999_999),
    timezones=st.one_of(st.just(UTC), _offsets),
)
_json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(_valid_chars, max_size=40),
)
_KNOWN_KEYS = {"entity", "attribute", "value", "memory_type", "core", "space", "priority"}
_free_metadata = st.dictionaries(
    st.text(_valid_chars, max_size=20).filter(lambda k: k not in _KNOWN_KEYS), _json_scalars, max_size=8
)
_known_metadata = st.fixed_dictionaries(
    {},
    optional={
        "entity": st.text(_valid_chars, max_size=20),
        "attribute": st.text(_valid_chars, max_size=20),
        "value": st.text(_valid_chars, max_size=20),
        "memory_type": st.text(_valid_chars, max_size=20),
        "core": st.booleans(),
        "space": st.sampled_from(SPACES),
        "priority": st.integers(min_value=1, max_value=9),
    },
)
_metadata = st.builds(lambda free, known: {**free, **known}, _free_metadata, _known_metadata)

_turns = st.builds(
    Turn,
    turn_id=_ids,
    agent_id=_ids,
    user_id=_ids,
    session_id=_ids,
    role=st.sampled_from(ROLES),
    content=_content,
    ts=_aware,
    source=st.sampled_from(SOURCES),
    metadata=_metadata,
).map(
    # A valid turn's metadata.space names the space its agent_id is.
    lambda t: (
        replace(t, metadata={**t.metadata, "space": space_name(t.agent_id)}) if "space" in t.metadata else t
    )
)
_ends = st.builds(SessionEnd, agent_id=_ids, user_id=_ids, session_id=_ids, ts=_aware)


@settings(max_examples=200, deadline=None, database=None)
@given(_turns)
def test_a_turn_survives_the_stream(turn: Turn) -> None:
    back = _stream_round_trip(turn)
    assert back == turn
    assert back.ts.utcoffset() == turn.ts.utcoffset()


@settings(max_examples=100, deadline=None, database=None)
@given(_ends)
def test_a_session_end_survives_the_stream(end: SessionEnd) -> None:
    assert _stream_round_trip(end) == end


# -- fuzz: nothing but InvalidTurn ever comes out ----------------------------------------------------

_FIELD_NAMES = (
    "v",
    "kind",
    "agent_id",
    "user_id",
    "session_id",
    "turn_id",
    "role",
    "content",
    "ts",
    "source",
)
_ALL_FIELDS = (
    "metadata",
    "ts",
    "content",
    "role",
    "source",
    "kind",
    "turn_id",
    "agent_id",
    "user_id",
    "session_id",
    "v",
)


def _valid_entries() -> list[dict[str, str]]:
    """Valid entries to start from, so that mutations reach every rule rather than only the first one."""
    ids = [("agent-1", "user-1", "sess-1", "turn-1"), ("é", "用户", "s:1/2", "t" * MAX_ID_CHARS)]
    contents = ["hi", " x ", "é" * (MAX_CONTENT_BYTES // 2)]
    stamps = ["2024-05-01T10:00:00+00:00", "1900-01-01T00:00:00Z", "2200-12-31T23:59:59-23:59"]
    metadata = [None, "{}", '{"core":true,"priority":3,"space":"shared","entity":"e"}']
    entries = []
    for i, (role, kind, meta, explicit) in enumerate(
        itertools.product(ROLES, [None, "turn", "session_end"], metadata, [False, True])
    ):
        agent_id, user_id, session_id, turn_id = ids[i % len(ids)]
        entry = {
            "agent_id": agent_id,
            "user_id": user_id,
            "session_id": session_id,
            "turn_id": turn_id,
            "role": role,
            "content": contents[i % len(contents)],
            "ts": stamps[i % len(stamps)],
            "v": "1" if explicit else None,
            "kind": kind,
            "metadata": meta,
            "source": DEFAULT_SOURCE[role] if explicit else None,
        }
        entries.append({k: v for k, v in entry.items() if v is not None})
    return entries


_valid_entry = st.sampled_from(_valid_entries())
# Replacement values for any field: wrong types, near misses, and text that trips the deeper rules.
_json_scalar_junk = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=6))
# Flat on purpose (nesting is in the table and in _TRICKY): st.recursive would double the file's run time.
_json_values = st.one_of(
    _json_scalar_junk,
    st.lists(_json_scalar_junk, max_size=2),
    st.dictionaries(st.sampled_from(sorted(_KNOWN_KEYS)), _json_scalar_junk, max_size=2),
)
_TRICKY = [
    "",
    " ",
    "1",
    "2",
    "turn",
    "session_end",
    "user",
    "a b",
    "a\x00b",
    "a\ud800b",
    "\x85",
    "\u2028",
    "2024-05-01T10:00:00",
    "2024-05-01T10:00:00+24:00",
    "1899-12-31T23:59:59+00:00",
    "2201-01-01T00:00:00Z",
    "2024-05-01T10:00:00+00:00:30.5",
    "ZZ",
    '{"x": NaN}',
    '{"x": -Infinity}',
    '{"x": 1e400}',
    '{"x": "\\ud800"}',
    '{"x": "\\u0000"}',
    '{"priority": 1.0}',
    '{"core": 1}',
    "[" * 2000,
    '{"a":' + "[" * 2000 + "]" * 2000 + "}",
    "x" * (MAX_CONTENT_BYTES + 1),
]
_junk = st.one_of(
    st.sampled_from(_TRICKY),
    st.text(max_size=12),
    st.integers(),
    st.none(),
    st.lists(st.one_of(st.integers(), st.text(max_size=4)), max_size=2),
    _json_values.map(json.dumps),
)
_fuzz_dicts = st.builds(
    lambda base, changes: {**base, **changes},
    _valid_entry,
    st.dictionaries(
        st.one_of(st.sampled_from(_ALL_FIELDS), st.text(max_size=4)), _junk, min_size=1, max_size=3
    ),
)
_junk_bytes = st.one_of(
    st.binary(max_size=12),
    st.sampled_from(_TRICKY).map(lambda t: t.encode("utf-8", "surrogatepass")),
    _json_values.map(lambda v: json.dumps(v, ensure_ascii=False).encode("utf-8", "surrogatepass")),
)
_fuzz_bytes = st.builds(
    lambda base, changes: {**{k.encode(): v.encode() for k, v in base.items()}, **changes},
    _valid_entry,
    st.dictionaries(
        st.sampled_from([*(f.encode() for f in _ALL_FIELDS), b"other", b"", b"\xff\xfe"]),
        _junk_bytes,
        min_size=1,
        max_size=3,
    ),
)


def _outcome(raw: Mapping[Any, Any]) -> Turn | SessionEnd | str:
    """The event parsed from stream fields, or the reason they were rejected."""
    try:
        return parse_event(decode_stream_fields(raw), now=NOW)
    except InvalidTurn as exc:
        return exc.reason


def _check_total(raw: Mapping[Any, Any]) -> None:
    """parse_event either accepts or raises InvalidTurn; what it accepts can go to the stream and back."""
    outcome = _outcome(raw)  # any other exception fails the test
    if isinstance(outcome, str):
        # The reason starts with the field it is about: a known one, or any field whose bytes do not decode.
        names = {*_ALL_FIELDS, "entry", *(f"metadata.{k}" for k in _KNOWN_KEYS)}
        names |= {k[:64] for k in raw if isinstance(k, str)}
        names |= {k.decode("utf-8")[:64] for k in raw if isinstance(k, bytes) and _decodes(k)}
        assert any(outcome.startswith(f"{name}: ") for name in names), outcome
        return
    encoded = encode_event(outcome)
    for value in encoded.values():
        value.encode("utf-8")  # Redis and PostgreSQL need valid UTF-8
    if isinstance(outcome, Turn):
        json.loads(encoded["metadata"], parse_constant=_no_constants)  # strict JSON, as jsonb wants
    assert _stream_round_trip(outcome) == outcome


def _decodes(key: bytes) -> bool:
    try:
        key.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _no_constants(name: str) -> Any:
    raise AssertionError(f"metadata encoded with {name}, which is not JSON")


_FUZZ = settings(
    max_examples=2000, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)


@_FUZZ
@given(_fuzz_dicts)
def test_fuzz_mixed_values(raw: dict[str, Any]) -> None:
    _check_total(raw)


@_FUZZ
@given(_fuzz_bytes)
def test_fuzz_stream_bytes(raw: dict[bytes, bytes]) -> None:
    _check_total(raw)
