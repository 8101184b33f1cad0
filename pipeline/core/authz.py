"""Who may touch which space: API keys, principals and the one authorisation rule. Pure (no I/O).

A scope is (agent_id, user_id). Spaces are agent_id namespaces of the same user:
- private: the key's own agent_id — read and write;
- shared: the reserved agent id `shared` — every agent reads, writing needs `can_write_shared`;
- system: the reserved agent id `system` — read-only to agents (operators write it with an admin key);
- any other agent's scope — nothing.
Admin keys (operators) may do everything, including the deployment-wide views (stats, dead letters,
the quarantine queue, every scope's review log).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
import secrets
from dataclasses import dataclass
from typing import Literal

from pipeline.core.errors import ConfigError, Forbidden, InvalidValue, Unauthenticated
from pipeline.core.models import MAX_ID_CHARS

SHARED = "shared"
SYSTEM = "system"
RESERVED_AGENTS = frozenset({SHARED, SYSTEM})
Action = Literal["read", "write", "admin"]
Space = Literal["private", "shared", "system", "foreign"]
KEY_PREFIX_LEN = 8
# hs_<8 hex: shown in lists, the lookup key>_<secret: token_urlsafe, never stored>
KEY_PATTERN = re.compile(r"^hs_([0-9a-f]{8})_([A-Za-z0-9_-]{32,128})$")


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling. `agent_id` None with is_admin: the local operator (auth off, or an admin key)."""

    agent_id: str | None
    can_write_shared: bool = False
    is_admin: bool = False
    key_prefix: str | None = None


# Auth off (the embedded default on loopback): whoever reaches the socket is the local operator.
LOCAL_OPERATOR = Principal(agent_id=None, can_write_shared=True, is_admin=True)
# What the audit log records as the key of a change made with auth off (there is no key to name).
KEYLESS = "keyless"


def audit_key(caller: Principal) -> str:
    """The key an audited change was made with: its prefix (`hindsight keys list`), or KEYLESS. Recorded
    beside the `actor` the caller writes in the body, which is a claim the server cannot check."""
    return caller.key_prefix or KEYLESS


@dataclass(frozen=True, slots=True)
class NewKey:
    prefix: str
    secret_hash: str
    token: str  # shown once, never stored


def new_key() -> NewKey:
    prefix = secrets.token_hex(KEY_PREFIX_LEN // 2)
    secret = secrets.token_urlsafe(32)
    return NewKey(prefix=prefix, secret_hash=hash_secret(secret), token=f"hs_{prefix}_{secret}")


def hash_secret(secret: str) -> str:
    # A plain SHA-256 suffices: the secret is 256 random bits, so there is nothing to brute-force
    # that a slow password hash would protect (and every request would pay for one).
    return hashlib.sha256(secret.encode()).hexdigest()


def parse_key(token: str) -> tuple[str, str]:
    """(prefix, secret) of a presented key; Unauthenticated when it is not shaped like one."""
    m = KEY_PATTERN.match(token.strip())
    if m is None:
        raise Unauthenticated(
            "malformed API key: expected hs_<prefix>_<secret> as `hindsight keys create` prints"
        )
    return m.group(1), m.group(2)


def secret_matches(secret: str, stored_hash: str) -> bool:
    return hmac.compare_digest(hash_secret(secret), stored_hash)


def check_agent_id(agent_id: str) -> None:
    """Keys belong to an agent; the reserved spaces are no agent's own."""
    if not agent_id.strip() or len(agent_id) > MAX_ID_CHARS:
        raise InvalidValue(f"agent: expected 1 to {MAX_ID_CHARS} characters")
    if agent_id in RESERVED_AGENTS:
        raise InvalidValue(
            f"agent: {agent_id!r} is a reserved space, not an agent (use --write-shared or --admin)"
        )


def space_name(agent_id: str) -> str:
    """Which space a scope's agent_id is: `shared`, `system` or an agent's `private` one."""
    return agent_id if agent_id in RESERVED_AGENTS else "private"


def space_of(principal: Principal, agent_id: str) -> Space:
    if agent_id == SHARED:
        return "shared"
    if agent_id == SYSTEM:
        return "system"
    if principal.agent_id is not None and agent_id == principal.agent_id:
        return "private"
    return "foreign"


def authorize(principal: Principal, agent_id: str | None, user_id: str | None, action: Action) -> None:
    """Raise Forbidden unless `principal` may `action` the scope (agent_id, user_id).

    agent_id None means "every scope" (a deployment-wide view or job): admin only. user_id is not
    part of the rule today (an agent serves all its users) and is taken so the call sites name the
    whole scope should per-user keys come.
    """
    del user_id
    if principal.is_admin:
        return
    who = f"the key {principal.key_prefix} (agent {principal.agent_id!r})"
    if action == "admin" or agent_id is None:
        raise Forbidden(f"{who} is not an admin key: this needs an operator's key")
    space = space_of(principal, agent_id)
    if space == "private" or (space in ("shared", "system") and action == "read"):
        return
    if space == "shared" and principal.can_write_shared:
        return
    if space == "shared":
        raise Forbidden(
            f"{who} may read the shared space but not write it (create the key with --write-shared)"
        )
    if space == "system":
        raise Forbidden(
            f"{who} may read the system space but not write it (operators write it with an admin key)"
        )
    raise Forbidden(f"{who} may not {action} the memories of agent {agent_id!r}")


# Turns the detector quarantined are instructions aimed at the agent: a person reviews them (an operator's
# key), the agent never gets them back, not even by asking for that status.
OPERATOR_STATUSES = frozenset({"quarantined", "rejected"})


def may_see_status(principal: Principal, status: str | None) -> bool:
    return principal.is_admin or status not in OPERATOR_STATUSES


def readable(principal: Principal, agent_id: str) -> bool:
    try:
        authorize(principal, agent_id, None, "read")
    except Forbidden:
        return False
    return True


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve to anything


def auth_required(mode: str, bind_host: str) -> bool:
    """Whether the API must check keys: `required` always, `auto` unless bound to loopback, `off`
    never — and `off` on a non-loopback bind is refused (anyone on the network would be an operator)."""
    loopback = is_loopback(bind_host)
    if mode == "required":
        return True
    if mode == "auto":
        return not loopback
    if mode == "off" and loopback:
        return False
    if mode == "off":
        raise ConfigError(
            f"HINDSIGHT_AUTH__MODE=off with the API bound to {bind_host!r}: without keys anyone who reaches "
            "that address could read every memory; bind to 127.0.0.1 or use auto/required"
        )
    raise ConfigError(f"HINDSIGHT_AUTH__MODE: expected auto, required or off, got {mode!r}")
