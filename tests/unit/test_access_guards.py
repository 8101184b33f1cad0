"""The pure parts of issue 29's guards: MCP-over-HTTP key checks and the inspector's session token."""

from __future__ import annotations

import pytest
from starlette.requests import Request

from pipeline.api import ui_session
from pipeline.mcp.http_auth import MALFORMED, MISSING, key_problem

SECRET = b"s" * 32
HASH = "ab" * 32


@pytest.mark.parametrize(
    ("headers", "required", "problem"),
    [
        ({}, True, MISSING),
        ({}, False, None),
        ({"authorization": "Basic eDp5"}, False, MALFORMED),
        ({"authorization": "Token hs_x"}, True, MALFORMED),
        ({"authorization": "Bearer"}, True, MALFORMED),
        ({"authorization": "Bearer hs_x", "x-api-key": ""}, True, None),
        ({"x-api-key": "hs_x"}, True, None),
        ({"x-api-key": "  "}, True, MISSING),
    ],
)
def test_mcp_http_key_problems(headers: dict[str, str], required: bool, problem: str | None) -> None:
    assert key_problem(headers, keys_required=required) == problem


def test_a_session_token_verifies_for_its_key_only_and_expires() -> None:
    token = ui_session.issue(SECRET, "0123abcd", HASH, ttl_s=60, now=1000.0)
    parsed = ui_session.parse(token, now=1000.0)
    assert parsed is not None
    assert parsed.prefix == "0123abcd"
    assert ui_session.verify(SECRET, token, parsed, HASH)
    assert not ui_session.verify(b"t" * 32, token, parsed, HASH)  # another server secret
    assert not ui_session.verify(SECRET, token, parsed, "cd" * 32)  # another key with that prefix
    forged = token.replace(".1060.", ".9999.")
    forged_parsed = ui_session.parse(forged, now=1000.0)
    assert forged_parsed is not None
    assert not ui_session.verify(SECRET, forged, forged_parsed, HASH)  # a later expiry is not signed
    assert ui_session.parse(token, now=1061.0) is None
    for bad in ("", "hs_0123abcd_secret", "hss.a.b.c", "hss.a.1.b.c"):
        assert ui_session.parse(bad, now=0.0) is None


def _request(headers: dict[str, str], scheme: str = "http") -> Request:
    raw = [(k.lower().encode(), v.encode()) for k, v in {"host": "memory.example:8700", **headers}.items()]
    return Request({"type": "http", "method": "POST", "scheme": scheme, "path": "/ui/login", "headers": raw})


@pytest.mark.parametrize(
    ("headers", "cross"),
    [
        ({}, False),  # not a browser
        ({"sec-fetch-site": "same-origin"}, False),
        ({"sec-fetch-site": "none"}, False),  # typed in the address bar, a bookmark
        ({"sec-fetch-site": "cross-site", "origin": "http://memory.example:8700"}, True),
        ({"sec-fetch-site": "same-site"}, True),
        ({"origin": "http://memory.example:8700"}, False),
        ({"origin": "https://memory.example:8700"}, False),  # behind a TLS-terminating proxy
        ({"origin": "https://evil.example"}, True),
        ({"origin": "null"}, True),
    ],
)
def test_cross_site_sign_ins_are_told_apart(headers: dict[str, str], cross: bool) -> None:
    assert ui_session.cross_site(_request(headers)) is cross


def test_a_link_is_judged_by_sec_fetch_site_alone() -> None:
    assert ui_session.cross_site(_request({"sec-fetch-site": "cross-site"}), navigation=True)
    assert not ui_session.cross_site(_request({"origin": "https://evil.example"}), navigation=True)
