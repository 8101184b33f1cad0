"""The API's door: every request resolves its key to a Principal here, and routes ask `guard` whether
that principal may act on the scope they touch (the rule itself is pipeline/core/authz.py, pure).

A key arrives as `Authorization: Bearer <key>` or `X-API-Key: <key>`; the inspector's pages also take
a session cookie set by /ui/login (path /ui, HttpOnly, SameSite=Strict, so no other site can send it):
an HMAC of the key's prefix, not the key (pipeline/api/ui_session.py).
Resolved keys are cached for `auth.key_cache_s` seconds: a revocation takes effect within that time.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from pipeline.adapters.postgres.api_keys_sql import KeyRow, KeyStore
from pipeline.api import ui_session
from pipeline.core.authz import LOCAL_OPERATOR, Action, Principal, authorize, parse_key, secret_matches
from pipeline.core.errors import Unauthenticated

# Declared for the OpenAPI page only (its Authorize button); the key itself is read by presented_key.
_BEARER = HTTPBearer(auto_error=False, description="an API key from `hindsight keys create`")
_HEADER = APIKeyHeader(name="X-API-Key", auto_error=False, description="the same key, as a header")


class KeyResolver:
    """Key -> Principal, with a short cache of the stored rows (the secret is checked on every request)."""

    def __init__(
        self,
        store: KeyStore,
        *,
        ttl_s: float,
        now: Callable[[], datetime],
        clock: Callable[[], float] = time.monotonic,
        session_secret: bytes | None = None,
        session_ttl_s: float = 12 * 3600.0,
    ) -> None:
        self.store = store
        self.ttl_s = ttl_s
        self.now = now
        self.clock = clock
        self._rows: dict[str, tuple[KeyRow | None, float]] = {}
        self._lock = threading.Lock()
        self.session_secret = session_secret or secrets.token_bytes(32)
        self.session_ttl_s = session_ttl_s

    def resolve(self, token: str) -> Principal:
        return self._checked(token).principal()

    def _checked(self, token: str) -> KeyRow:
        prefix, secret = parse_key(token)
        row = self._row(prefix)
        # One message for unknown and wrong secret: do not tell a guesser which prefixes exist.
        if row is None or not secret_matches(secret, row.secret_sha256):
            raise Unauthenticated("unknown API key")
        if row.revoked_at is not None:
            raise Unauthenticated(f"the API key {prefix} was revoked")
        return row

    def open_session(self, token: str) -> str:
        """A valid key -> the inspector's cookie value (not the key: see ui_session)."""
        row = self._checked(token)
        return ui_session.issue(self.session_secret, row.prefix, row.secret_sha256, ttl_s=self.session_ttl_s)

    def resolve_session(self, cookie: str) -> Principal:
        parsed = ui_session.parse(cookie)
        row = self._row(parsed.prefix) if parsed is not None else None
        if (
            parsed is None
            or row is None
            or not ui_session.verify(self.session_secret, cookie, parsed, row.secret_sha256)
        ):
            raise Unauthenticated("the inspector session expired or is not valid: sign in again")
        if row.revoked_at is not None:
            raise Unauthenticated(f"the API key {row.prefix} was revoked")
        return row.principal()

    def _row(self, prefix: str) -> KeyRow | None:
        at = self.clock()
        with self._lock:
            cached = self._rows.get(prefix)
        if cached is not None and at - cached[1] < self.ttl_s:
            return cached[0]
        row = self.store.find(prefix)
        if row is not None and row.revoked_at is None:
            # last_used_at is kept lazily: once per cache period per key and process, not per request.
            self.store.touch(prefix, now=self.now())
        with self._lock:
            if len(self._rows) > 10_000:  # invalid prefixes must not grow the cache without bound
                self._rows.clear()
            self._rows[prefix] = (row, at)
        return row


def presented_key(request: Request) -> str | None:
    auth = request.headers.get("authorization")
    if auth:
        scheme, _, value = auth.partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise Unauthenticated("Authorization header: expected 'Bearer <API key>'")
        return value.strip()
    header = request.headers.get("x-api-key")
    if header:
        return header.strip()
    return None


def principal(
    request: Request,
    _bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_BEARER)] = None,
    _header: Annotated[str | None, Depends(_HEADER)] = None,
) -> Principal:
    """The FastAPI dependency on every route but health, metrics, docs and the login page."""
    resolver: KeyResolver | None = request.app.state.key_resolver
    if resolver is None:  # auth off: the embedded default on loopback
        return LOCAL_OPERATOR
    cached: Principal | None = getattr(request.state, "principal", None)
    if cached is not None:
        return cached
    token = presented_key(request)
    cookie = request.cookies.get(ui_session.COOKIE) if request.url.path.startswith("/ui") else None
    if token is None and cookie:
        found = resolver.resolve_session(cookie)
        request.state.principal = found
        return found
    if token is None:
        raise Unauthenticated(
            "this API requires a key: send 'Authorization: Bearer <key>' or 'X-API-Key: <key>' "
            "(operators create keys with `hindsight keys create`)"
        )
    found = resolver.resolve(token)
    request.state.principal = found
    return found


Caller = Annotated[Principal, Depends(principal)]


def guard(caller: Principal, agent_id: str | None, user_id: str | None, action: Action) -> None:
    """Raise Forbidden (403) unless the caller may `action` the scope; None agent_id = every scope."""
    authorize(caller, agent_id, user_id, action)
