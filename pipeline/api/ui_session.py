"""The inspector's session cookie and its cross-site guard.

The cookie does not hold the API key: a stolen cookie (a log line, a shared browser profile) must not be
a key that also opens the JSON API, MCP or the Python client. It holds `hss.<prefix>.<expires>.<mac>`, an
HMAC-SHA256 under a server secret of the key's prefix, expiry and stored secret hash. A forged or
expired token fails the MAC or the clock; a revoked key fails the lookup the API does for every key.

Login is refused when the browser says the form came from another site (`Sec-Fetch-Site`, else
`Origin`): otherwise any page could sign a visitor in with the attacker's key (login CSRF) and read what
they then type. Clients that send neither header (curl, httpx) are not browsers and cannot be forged into
sending a request, so they pass.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from fastapi import Request

COOKIE = "hindsight_session"
MARK = "hss"
# What a browser says about where a request came from: these are this site (or the user typing a URL).
SAME_SITE_FETCH = frozenset({"same-origin", "none"})


@dataclass(frozen=True, slots=True)
class SessionToken:
    prefix: str
    expires: int


def _mac(secret: bytes, prefix: str, expires: int, secret_sha256: str) -> str:
    digest = hmac.new(secret, f"{prefix}.{expires}.{secret_sha256}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def issue(secret: bytes, prefix: str, secret_sha256: str, *, ttl_s: float, now: float | None = None) -> str:
    expires = int((time.time() if now is None else now) + ttl_s)
    return f"{MARK}.{prefix}.{expires}.{_mac(secret, prefix, expires, secret_sha256)}"


def parse(token: str, *, now: float | None = None) -> SessionToken | None:
    """The token's prefix and expiry when it is shaped like one and not expired; the MAC is checked
    by `verify` once the key's stored hash is known."""
    parts = token.split(".")
    if len(parts) != 4 or parts[0] != MARK or not parts[2].isdigit():
        return None
    expires = int(parts[2])
    if expires < (time.time() if now is None else now):
        return None
    return SessionToken(parts[1], expires)


def verify(secret: bytes, token: str, parsed: SessionToken, secret_sha256: str) -> bool:
    expected = _mac(secret, parsed.prefix, parsed.expires, secret_sha256)
    return hmac.compare_digest(token.rsplit(".", 1)[1].encode(), expected.encode())


def cross_site(request: Request, *, navigation: bool = False) -> bool:
    """Whether a browser sent this request from another site. `navigation`: a GET a link can trigger,
    where browsers send no Origin, so only Sec-Fetch-Site can tell."""
    fetch_site = request.headers.get("sec-fetch-site")
    if fetch_site is not None:
        return fetch_site.strip().lower() not in SAME_SITE_FETCH
    if navigation:
        return False
    origin = request.headers.get("origin")
    if origin is None:
        return False
    # Host only, not the scheme: behind a TLS-terminating proxy the page is https while this request
    # may arrive as http. "null" (a sandboxed or file: page) has no host, so it is refused.
    return urlsplit(origin.strip()).netloc.lower() != own_host(request).lower()


def own_host(request: Request) -> str:
    return request.headers.get("host") or request.url.netloc


def secure_cookie(request: Request, configured: bool | None) -> bool:
    """`Secure` when configured so, else when this request came over https (directly, or through a
    proxy uvicorn trusts with X-Forwarded-Proto)."""
    return configured if configured is not None else request.url.scheme == "https"
