"""The access rule, exhaustively: every kind of key × every space × every action."""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from pipeline.adapters.postgres.api_keys_sql import KeyRow
from pipeline.api.auth import KeyResolver
from pipeline.core.authz import (
    LOCAL_OPERATOR,
    Principal,
    auth_required,
    authorize,
    check_agent_id,
    hash_secret,
    is_loopback,
    new_key,
    parse_key,
    secret_matches,
)
from pipeline.core.errors import ConfigError, Forbidden, InvalidValue, Unauthenticated
from pipeline.core.models import MAX_ID_CHARS

AGENT = Principal(agent_id="a", key_prefix="aaaaaaaa")
WRITER = Principal(agent_id="a", can_write_shared=True, key_prefix="bbbbbbbb")
ADMIN = Principal(agent_id="ops", is_admin=True, key_prefix="cccccccc")
SPACES = ("a", "b", "shared", "system", None)  # own, another agent's, shared, system, every scope
ACTIONS = ("read", "write", "admin")

# (principal, agent_id) -> the actions allowed; anything not listed is forbidden.
ALLOWED = {
    ("agent", "a"): {"read", "write"},
    ("agent", "shared"): {"read"},
    ("agent", "system"): {"read"},
    ("writer", "a"): {"read", "write"},
    ("writer", "shared"): {"read", "write"},
    ("writer", "system"): {"read"},
}
PRINCIPALS = {"agent": AGENT, "writer": WRITER}


@pytest.mark.parametrize(("who", "agent_id", "action"), list(itertools.product(PRINCIPALS, SPACES, ACTIONS)))
def test_agent_keys_get_exactly_their_spaces(who: str, agent_id: str | None, action: str) -> None:
    allowed = action in ALLOWED.get((who, str(agent_id)), set())
    if allowed:
        authorize(PRINCIPALS[who], agent_id, "u1", action)  # type: ignore[arg-type]
    else:
        with pytest.raises(Forbidden):
            authorize(PRINCIPALS[who], agent_id, "u1", action)  # type: ignore[arg-type]


@pytest.mark.parametrize(("agent_id", "action"), list(itertools.product(SPACES, ACTIONS)))
def test_admin_and_the_local_operator_may_do_everything(agent_id: str | None, action: str) -> None:
    authorize(ADMIN, agent_id, "u1", action)  # type: ignore[arg-type]
    authorize(LOCAL_OPERATOR, agent_id, "u1", action)  # type: ignore[arg-type]


def test_a_key_for_agent_b_cannot_pass_for_shared_or_another_agent_by_prefix_tricks() -> None:
    for foreign in ("a ", "A", "a/", "shared ", "", "b"):
        with pytest.raises(Forbidden):
            authorize(AGENT, foreign, "u1", "write")


def test_forbidden_messages_say_what_would_allow_it() -> None:
    with pytest.raises(Forbidden, match="--write-shared"):
        authorize(AGENT, "shared", "u1", "write")
    with pytest.raises(Forbidden, match="admin key"):
        authorize(WRITER, "system", "u1", "write")
    with pytest.raises(Forbidden, match="agent 'b'"):
        authorize(AGENT, "b", "u1", "read")


def test_keys_round_trip_and_only_the_hash_is_comparable() -> None:
    key = new_key()
    prefix, secret = parse_key(key.token)
    assert prefix == key.prefix
    assert len(prefix) == 8
    assert secret not in key.secret_hash
    assert key.secret_hash == hash_secret(secret)
    assert secret_matches(secret, key.secret_hash)
    assert not secret_matches(secret + "x", key.secret_hash)
    assert new_key().token != key.token


@pytest.mark.parametrize(
    "token", ["", "hs_", "hs_zzzzzzzz_" + "a" * 43, "sk_12345678_" + "a" * 43, "hs_1234_abc"]
)
def test_malformed_keys_are_unauthenticated(token: str) -> None:
    with pytest.raises(Unauthenticated, match="malformed"):
        parse_key(token)


@pytest.mark.parametrize("agent_id", ["shared", "system", "", " ", "x" * (MAX_ID_CHARS + 1)])
def test_keys_cannot_be_made_for_reserved_or_empty_agents(agent_id: str) -> None:
    with pytest.raises(InvalidValue):
        check_agent_id(agent_id)


@pytest.mark.parametrize(
    ("mode", "host", "required"),
    [
        ("auto", "127.0.0.1", False),
        ("auto", "localhost", False),
        ("auto", "::1", False),
        ("auto", "0.0.0.0", True),
        ("auto", "10.0.0.5", True),
        ("auto", "api.example.com", True),
        ("required", "127.0.0.1", True),
        ("required", "0.0.0.0", True),
        ("off", "127.0.0.1", False),
    ],
)
def test_auth_mode_by_bind_address(mode: str, host: str, required: bool) -> None:
    assert auth_required(mode, host) is required


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.2", "hindsight"])
def test_auth_off_is_refused_on_a_non_loopback_bind(host: str) -> None:
    assert not is_loopback(host)
    with pytest.raises(ConfigError, match=r"bind to 127\.0\.0\.1"):
        auth_required("off", host)


class FakeKeys:
    """The KeyStore's lookups, counted (a unit test of the cache, not of SQL)."""

    def __init__(self, row: KeyRow) -> None:
        self.row: KeyRow | None = row
        self.finds = 0
        self.touches = 0

    def find(self, prefix: str) -> KeyRow | None:
        self.finds += 1
        return self.row if self.row is not None and self.row.prefix == prefix else None

    def touch(self, prefix: str, *, now: datetime) -> None:
        self.touches += 1


def _resolver(ttl_s: float = 30.0) -> tuple[KeyResolver, FakeKeys, list[float], str]:
    key = new_key()
    row = KeyRow(key.prefix, key.secret_hash, "a", False, False, None)
    keys = FakeKeys(row)
    clock = [0.0]
    resolver = KeyResolver(
        keys,  # type: ignore[arg-type]
        ttl_s=ttl_s,
        now=lambda: datetime(2026, 12, 1, tzinfo=UTC),
        clock=lambda: clock[0],
    )
    return resolver, keys, clock, key.token


def test_resolved_keys_are_cached_and_touched_once_per_period() -> None:
    resolver, keys, clock, token = _resolver()
    for _ in range(5):
        assert resolver.resolve(token).agent_id == "a"
    assert (keys.finds, keys.touches) == (1, 1)
    clock[0] = 31.0
    resolver.resolve(token)
    assert (keys.finds, keys.touches) == (2, 2)


def test_a_revocation_takes_effect_within_the_cache_period() -> None:
    resolver, keys, clock, token = _resolver(ttl_s=30.0)
    resolver.resolve(token)
    assert keys.row is not None
    keys.row = replace(keys.row, revoked_at=datetime(2026, 12, 1, tzinfo=UTC))
    clock[0] = 29.0
    resolver.resolve(token)  # still cached: the documented window
    clock[0] = 30.0
    with pytest.raises(Unauthenticated, match="revoked"):
        resolver.resolve(token)


def test_a_wrong_secret_for_a_known_prefix_is_refused_even_when_cached() -> None:
    resolver, _, _, token = _resolver()
    resolver.resolve(token)
    forged = token[:12] + ("A" if token[12] != "A" else "B") + token[13:]
    with pytest.raises(Unauthenticated, match="unknown API key"):
        resolver.resolve(forged)
