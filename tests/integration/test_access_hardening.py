"""Issue 29's access concerns, against the seeded stack of test_access.py (keys required):

- MCP over streamable HTTP never lends the server's own key to a remote client: a server started with an
  admin key answers 401 to a client that sends no key, or a Basic/Token Authorization header;
- the inspector refuses cross-site sign-ins, keeps a signed session (not the key) in its cookie, sends
  CSP / X-Frame-Options / nosniff / Referrer-Policy, renders its errors as pages, and shows an agent's
  key no link it cannot open.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path

import anyio
import httpx
import pytest

from pipeline.core.authz import parse_key
from tests.integration.harness import REPO_ROOT
from tests.integration.mcp_http import mcp_over_http, mcp_recall
from tests.integration.test_access import USER, World, words
from tests.integration.test_access import world as world  # the module's seeded stack

pytestmark = pytest.mark.integration
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"},
    },
}
MCP_ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def test_mcp_over_http_makes_each_remote_client_bring_its_own_key(world: World, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", str(REPO_ROOT))}
    # The server holds an admin key: over stdio its launcher would act with it, over HTTP nobody may.
    env.update({"HINDSIGHT_API_URL": world.url, "HINDSIGHT_API_KEY": world.keys["admin"]})
    with mcp_over_http(env, tmp_path / "mcp.log") as url:
        admin = world.keys["admin"]
        refused = {
            "no key": {},
            "Basic": {"Authorization": "Basic " + base64.b64encode(f"x:{admin}".encode()).decode()},
            "Token": {"Authorization": f"Token {admin}"},
            "empty Bearer": {"Authorization": "Bearer"},
        }  # fmt: skip
        for name, headers in refused.items():
            answer = httpx.post(url, json=INITIALIZE, headers={**MCP_ACCEPT, **headers}, timeout=30)
            assert answer.status_code == 401, (name, answer.status_code, answer.text[:300])
            detail = answer.json()["detail"]
            assert ("own API key" if name == "no key" else "expected 'Bearer <API key>'") in detail, name

        async def recall(agent_id: str) -> tuple[bool, str]:
            return await mcp_recall(url, world.keys["alpha"], words(agent_id)[0], agent_id, USER)

        own = anyio.run(recall, "alpha")
        foreign = anyio.run(recall, "beta")
    assert not own[0]
    assert "marmaladeword" in own[1]
    assert foreign[0]  # alpha's own rights, not the server's admin key
    assert "403" in foreign[1]
    assert "zeppelinword" not in foreign[1]


def _browser(world: World) -> httpx.Client:
    return httpx.Client(base_url=world.url, timeout=30, follow_redirects=False)


def test_the_inspector_refuses_cross_site_sign_ins(world: World) -> None:
    key = world.keys["alpha"]
    with _browser(world) as browser:
        for headers in (
            {"Origin": "https://evil.example"},
            {"Origin": "null"},
            {"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"},
            {"Sec-Fetch-Site": "same-site"},
        ):
            refused = browser.post("/ui/login", data={"key": key}, headers=headers)
            assert refused.status_code == 403, headers
            assert "set-cookie" not in refused.headers, headers
            assert "another site" in refused.text
            assert refused.headers["content-type"].startswith("text/html")
        # A ?key= link followed from another site fills the form but does not sign in.
        linked = browser.get("/ui/login", params={"key": key}, headers={"Sec-Fetch-Site": "cross-site"})
        assert linked.status_code == 200
        assert "set-cookie" not in linked.headers
        assert browser.get("/ui").status_code == 303  # still signed out
        same = browser.post(
            "/ui/login", data={"key": key}, headers={"Origin": world.url, "Sec-Fetch-Site": "same-origin"}
        )
        assert same.status_code == 303
        assert browser.get("/ui").status_code == 200


def test_the_inspector_cookie_is_a_signed_session_not_the_key(world: World) -> None:
    key = world.keys["alpha"]
    _, secret = parse_key(key)
    with _browser(world) as over_https:
        # Over https (here through a proxy uvicorn trusts) the cookie is Secure as well.
        signed = over_https.post("/ui/login", data={"key": key}, headers={"X-Forwarded-Proto": "https"})
        assert signed.status_code == 303
        assert "secure" in signed.headers["set-cookie"].lower()
    with _browser(world) as browser:
        signed = browser.post("/ui/login", data={"key": key})
        cookie_header = signed.headers["set-cookie"]
        lowered = cookie_header.lower()
        assert "httponly" in lowered
        assert "samesite=strict" in lowered
        assert "secure" not in lowered  # plain http: a Secure cookie would never come back
        name, value = cookie_header.split(";")[0].split("=", 1)
        assert key not in value
        assert secret not in value
        assert browser.get("/ui").status_code == 200
        # The session opens the inspector only: as a key it is refused everywhere.
        assert httpx.get(f"{world.url}/v1/scopes", headers={"X-API-Key": value}).status_code == 401
        assert browser.get("/v1/scopes").status_code == 401
    with _browser(world) as forger:
        forged = value[:-4] + ("AAAA" if not value.endswith("AAAA") else "BBBB")
        forger.cookies.set(name, forged, path="/ui")
        assert forger.get("/ui").status_code == 303  # back to the key form
        assert forger.get("/ui/login").status_code == 200


def test_the_inspector_sends_security_headers(world: World) -> None:
    with _browser(world) as browser:
        browser.post("/ui/login", data={"key": world.keys["alpha"]})
        for path in ("/ui", "/ui/login", f"/ui/scope?agent_id=alpha&user_id={USER}"):
            page = browser.get(path)
            assert page.status_code == 200, path
            csp = page.headers["content-security-policy"]
            assert "script-src 'self'" in csp
            assert "frame-ancestors 'none'" in csp
            assert page.headers["x-frame-options"] == "DENY"
            assert page.headers["x-content-type-options"] == "nosniff"
            assert page.headers["referrer-policy"] == "no-referrer"
        for path in ("/healthz", "/v1/scopes", "/openapi.json"):
            assert browser.get(path).headers["x-content-type-options"] == "nosniff", path


def test_inspector_errors_are_pages_and_agents_see_no_operator_links(world: World) -> None:
    with _browser(world) as browser:
        browser.post("/ui/login", data={"key": world.keys["alpha"]})
        foreign = browser.get("/ui/scope", params={"agent_id": "beta", "user_id": USER})
        assert foreign.status_code == 403
        assert foreign.headers["content-type"].startswith("text/html")
        assert "<html" in foreign.text
        assert "alpha" in foreign.text  # the reason, as the JSON API gives it
        assert '{"detail"' not in foreign.text
        missing = browser.get("/ui/memory/episode:999999", params={"agent_id": "alpha", "user_id": USER})
        assert missing.status_code == 404
        assert missing.headers["content-type"].startswith("text/html")
        assert "episode:999999" in missing.text
        for path in ("/ui", f"/ui/scope?agent_id=alpha&user_id={USER}"):
            body = browser.get(path).text
            assert 'href="/ui/reviews"' not in body, path
            assert 'href="/ui/dead"' not in body, path
        assert browser.get("/ui/reviews").status_code == 403
    with _browser(world) as operator:
        operator.post("/ui/login", data={"key": world.keys["admin"]})
        body = operator.get("/ui").text
        assert 'href="/ui/reviews"' in body
        assert 'href="/ui/dead"' in body
