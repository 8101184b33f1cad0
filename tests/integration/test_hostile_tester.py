"""What a hostile tester found (issue 29), against a real stack with keys required: PostgreSQL, Redis, a
Celery worker, the scheduler, the API on a socket; the CLI runs under a pseudo-terminal.

Each test reproduces one finding and would fail on the code before the fix: a turn dropped because another
scope used its id, a 500 for a lone surrogate in working memory, stored text obeyed as Rich markup or as
terminal controls, one refused line that stopped `ingest` pushing anything, `ingest --wait` that needed an
operator's key, an agent id that could be written but not listed, a reset instead of a 431.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from pipeline.adapters.postgres.api_keys_sql import KeyStore
from pipeline.adapters.postgres.repository import Repository
from pipeline.client import MemoryClient
from pipeline.core.errors import InvalidTurn
from pipeline.core.models import MAX_ID_CHARS
from pipeline.core.ports import WarmEmbedder
from pipeline.ingest.validation import utcnow
from tests.helpers import wait_until
from tests.integration.harness import DB_URL, REDIS_URL, Stack, WorkerProcess
from tests.integration.keyed import KeyedSite, fresh_keys
from tests.integration.live_api import live_stack
from tests.pty_cli import run_cli

pytestmark = pytest.mark.integration
USER = "u1"
# Stored text a terminal would obey: Rich markup (a stray closing tag, a link) and raw escape sequences
# (clear screen, window title, an OSC 8 hyperlink).
HOSTILE = (
    "I keep my notes in [/bold] tags, see [link=http://evil.example/phish]my page[/link] zanzibarword "
    "\x1b[2J\x1b]0;pwned-title\x07\x1b]8;;http://evil.example/raw\x1b\\raw link\x1b]8;;\x1b\\ \x9b31m end"
)
ESCAPES = ("\x1b]8;", "\x1b[2J", "\x1b]0;", "\x07", "\x9b")
_RICH_STYLING = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")


def visible(output: str) -> str:
    """What a person reads: the terminal output without the colours and cursor moves Rich adds itself."""
    return _RICH_STYLING.sub("", output)


class Site(KeyedSite):
    def __init__(self, stack: Stack, keys: dict[str, str]) -> None:
        super().__init__(stack, keys, bearer=True)

    def env(self, key: str) -> dict[str, str]:
        return {
            **os.environ,
            "HINDSIGHT_API_URL": self.url,
            "HINDSIGHT_API_KEY": self.keys[key],
            "HINDSIGHT_DATABASE_URL": DB_URL,
            "HINDSIGHT_REDIS_URL": REDIS_URL,
            "HINDSIGHT_LOG_JSON": "true",
        }

    def episode(self, agent_id: str, turn_id: str, user_id: str = USER) -> str | None:
        with self.stack.repo.engine.connect() as conn:
            return conn.scalar(
                text("SELECT content FROM episodes WHERE agent_id = :a AND user_id = :u AND turn_id = :t"),
                {"a": agent_id, "u": user_id, "t": turn_id},
            )


@pytest.fixture(scope="module")
def site(
    repo: Repository,
    worker: WorkerProcess,
    embedder: WarmEmbedder,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Site]:
    keys = fresh_keys(repo)
    tmp = tmp_path_factory.mktemp("hostile")
    with live_stack(repo, embedder, tmp, auth={"mode": "required", "key_cache_s": 1.0}) as stack:
        stack.start_scheduler()
        yield Site(stack, keys)
    time.sleep(0.2)


def _turn(agent_id: str, turn_id: str, content: str, **extra: Any) -> dict[str, Any]:
    return {
        "turn_id": turn_id,
        "agent_id": agent_id,
        "user_id": USER,
        "session_id": f"{agent_id[:20]}-s",
        "role": "user",
        "content": content,
        **extra,
    }


# -- Failure 1: turn ids are unique per scope ------------------------------------------------------------


def test_a_turn_id_another_scope_used_is_stored_and_progress_tells_nothing_of_other_scopes(
    site: Site,
) -> None:
    ask = {"turns": [{"agent_id": "alpha", "user_id": USER, "turn_id": "a-100"}]}
    with site.http("beta") as beta, site.http("alpha") as alpha:
        assert (
            beta.post("/v1/turns", json=[_turn("beta", "a-100", "beta's own turn a-100")]).status_code == 202
        )
        wait_until(lambda: site.episode("beta", "a-100"), timeout=30, what="beta's a-100 stored")
        # Alpha has no a-100 yet: whatever beta stored, alpha's progress says nothing was received.
        assert alpha.post("/v1/progress", json={"turn_ids": ["a-100"]}).json()["turns"]["received"] == 0
        assert alpha.post("/v1/progress", json=ask).json()["turns"]["received"] == 0
        mine = _turn("alpha", "a-100", "my new phone number is 555-0199")
        assert alpha.post("/v1/turns", json=[mine]).status_code == 202
        # Stored (before: ON CONFLICT (turn_id) DO NOTHING dropped it without a trace).
        wait_until(lambda: site.episode("alpha", "a-100"), timeout=30, what="alpha's a-100 stored")
        assert site.episode("alpha", "a-100") == "my new phone number is 555-0199"
        assert site.episode("beta", "a-100") == "beta's own turn a-100"
        assert alpha.post("/v1/progress", json=ask).json()["turns"]["received"] == 1
        # Beta asking for alpha's turn by its scope learns nothing: it counts only what beta may read.
        assert beta.post("/v1/progress", json=ask).json()["turns"]["received"] == 0
        recall = {"q": "phone number", "agent_id": "alpha", "user_id": USER}
        wait_until(
            lambda: "555-0199" in alpha.get("/v1/recall", params=recall).text,
            timeout=30,
            what="alpha's turn recallable",
        )


def test_two_different_turns_under_one_id_in_a_request_are_refused_naming_the_id(site: Site) -> None:
    with site.http("alpha") as alpha:
        twice = [_turn("alpha", "dup-1", "first text"), _turn("alpha", "dup-1", "second, different text")]
        refused = alpha.post("/v1/turns", json=twice)
        assert refused.status_code == 409, refused.text
        assert "item 1" in refused.json()["detail"]
        assert "'dup-1'" in refused.json()["detail"]
        # The same turn twice is a retry: accepted, stored once.
        same = [_turn("alpha", "dup-2", "the same text"), _turn("alpha", "dup-2", "the same text")]
        assert alpha.post("/v1/turns", json=same).status_code == 202
    wait_until(lambda: site.episode("alpha", "dup-2"), timeout=30, what="dup-2 stored")
    assert site.episode("alpha", "dup-1") is None  # nothing of the refused request went in
    with site.stack.repo.engine.connect() as conn:
        assert conn.scalar(text("SELECT count(*) FROM episodes WHERE turn_id = 'dup-2'")) == 1


# -- Failure 2: a lone surrogate in working memory is a 422, and the client's own error ------------------


def test_a_lone_surrogate_in_working_memory_is_a_422_and_the_clients_invalid_turn(site: Site) -> None:
    raw = '{"agent_id": "alpha", "user_id": "u1", "task": "t\\ud800"}'  # the escape as a client sends it
    with site.http("alpha") as alpha:
        response = alpha.patch(
            "/v1/sessions/s1/working-memory", content=raw, headers={"content-type": "application/json"}
        )
        assert response.status_code == 422, response.text
        assert "task: not valid UTF-8" in response.json()["detail"]
    client = MemoryClient(site.stack.settings, api_key=site.keys["alpha"])
    try:
        with pytest.raises(InvalidTurn, match="task: not valid UTF-8"):
            client.set_working_memory("alpha", USER, "s1", task="t\ud800")
        with pytest.raises(InvalidTurn, match=r"slots\.city: not valid UTF-8"):
            client.set_working_memory("alpha", USER, "s1", slots={"city": "x\udfff"})
    finally:
        client.close()


# -- Concerns: one id limit; metadata.space; 431 -----------------------------------------------------------


def test_an_agent_id_at_the_limit_can_be_written_recalled_and_listed(site: Site) -> None:
    agent = "a" * MAX_ID_CHARS
    scope = {"agent_id": agent, "user_id": USER}
    with site.http("admin") as admin:
        assert (
            admin.post("/v1/turns", json=[_turn(agent, "long-1", "quixotic longidword")]).status_code == 202
        )
        wait_until(lambda: site.episode(agent, "long-1"), timeout=30, what="the turn stored")
        assert admin.get("/v1/recall", params={"q": "longidword", **scope}).status_code == 200
        listed = admin.get("/v1/memories", params=scope)  # before: 422 "at most 200 characters"
        assert listed.status_code == 200, listed.text
        assert [m["source_turn_ids"] for m in listed.json()["memories"]] == [["long-1"]]
        assert admin.get("/v1/facts", params=scope).status_code == 200
        assert admin.get("/v1/reviews", params=scope).status_code == 200
        too_long = admin.get("/v1/memories", params={**scope, "agent_id": agent + "a"})
        assert too_long.status_code == 422
        assert admin.post("/v1/turns", json=[_turn(agent + "a", "long-2", "x")]).status_code == 422


def test_metadata_space_must_agree_with_the_agent_id(site: Site) -> None:
    with site.http("admin") as admin:
        wrong = admin.post("/v1/turns", json=[_turn("alpha", "sp-1", "x", metadata={"space": "shared"})])
        assert wrong.status_code == 422
        assert "metadata.space: 'shared', but agent_id 'alpha' is the private space" in wrong.json()["detail"]
        right = [_turn("shared", "sp-2", "a shared note", metadata={"space": "shared"})]
        assert admin.post("/v1/turns", json=right).status_code == 202


def test_oversized_request_headers_get_a_431_not_a_reset(site: Site) -> None:
    response = httpx.get(f"{site.url}/healthz", headers={"x-padding": "a" * 1_000_000}, timeout=30)
    assert response.status_code == 431
    assert "request headers larger than" in response.json()["detail"]
    assert httpx.get(f"{site.url}/healthz", timeout=30).status_code == 200  # and the server goes on


# -- Failures 3 and 4: the CLI shows stored text, never obeys it ------------------------------------------


def _assert_inert(output: str) -> str:
    """The hostile sequences are not in the output; returns the visible text."""
    for escape in ESCAPES:
        assert escape not in output, (escape, output[-3000:])
    assert "Traceback" not in output, output[-3000:]
    return visible(output)


def test_recall_and_memories_show_markup_and_escapes_as_text(site: Site) -> None:
    with site.http("alpha") as alpha:
        assert alpha.post("/v1/turns", json=[_turn("alpha", "hostile-1", HOSTILE)]).status_code == 202
        wait_until(
            lambda: (
                "zanzibarword"
                in alpha.get(
                    "/v1/recall", params={"q": "zanzibarword notes", "agent_id": "alpha", "user_id": USER}
                ).text
            ),
            timeout=60,
            what="the hostile turn recallable",
        )
    for args in (
        ["recall", "zanzibarword notes", "--agent", "alpha", "--user", USER],
        ["memories", "--agent", "alpha", "--user", USER, "--contains", "zanzibarword"],
    ):
        code, output = run_cli(args, site.env("alpha"), columns=400)
        assert code == 0, output[-3000:]
        shown = _assert_inert(output)
        assert "pwned-title" not in shown  # the whole title sequence went, not just its ESC
        assert "[/bold]" in shown
        assert "[link=http://evil.example/phish]my page[/link]" in shown
        assert "raw link" in shown  # the text of the raw hyperlink stays, as text
    with site.http("alpha") as alpha:
        listed = alpha.get(
            "/v1/memories", params={"agent_id": "alpha", "user_id": USER, "contains": "zanzibar"}
        )
        [memory_id] = [m["id"] for m in listed.json()["memories"]]
    code, output = run_cli(["memory", memory_id, "--agent", "alpha", "--user", USER], site.env("alpha"))
    assert code == 0, output[-3000:]
    _assert_inert(output)


def test_dead_letters_show_a_markup_role_as_text(site: Site) -> None:
    entry = {
        "v": "1", "kind": "turn", "turn_id": "dl-1", "agent_id": "alpha", "user_id": USER,
        "session_id": "s", "role": "[/red]", "content": "x\x1b]0;pwned-title\x07", "ts": utcnow().isoformat(),
    }  # fmt: skip
    site.stack.stream.add(entry)
    with site.http("admin") as admin:
        wait_until(
            lambda: admin.get("/v1/dead-letters").json()["total"] >= 1, timeout=30, what="the dead letter"
        )
    code, output = run_cli(["dead-letters"], site.env("admin"), columns=300)
    assert code == 0, output[-3000:]
    assert "got '[/red]'" in _assert_inert(output)


# -- Failures 5 and 6, JSONL concerns: ingest -----------------------------------------------------------


def _jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def test_ingest_stores_the_lines_the_key_may_write_and_reports_the_others(site: Site, tmp_path: Path) -> None:
    rows: list[Any] = [_turn("alpha", f"ing-{i}", f"ingested line {i} about kayaking") for i in range(6)]
    rows.insert(3, _turn("beta", "ing-beta", "a line for another agent"))
    rows.append(_turn("alpha", "ing-bad", "bad role", role="[/yellow]"))
    path = _jsonl(tmp_path / "turns.jsonl", rows)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())  # a BOM before line 1
    code, output = run_cli(
        ["ingest", str(path), "--wait", "--timeout", "240"], site.env("alpha"), columns=300
    )
    assert code == 1, output[-3000:]  # some lines were rejected
    shown = _assert_inert(output)
    assert "pushed 6 turns (2 lines rejected)" in shown, shown[-3000:]
    assert re.search(r"turns\.jsonl:4: 403 .*may not write the memories of agent 'beta'", shown), shown[
        -3000:
    ]
    assert re.search(r"turns\.jsonl:8: role: .*got '\[/yellow\]'", shown), shown[-3000:]
    # --wait with an agent's key: its wait asks for a review of its own scope, not of every scope.
    assert "all 6 turns reviewed and indexed" in shown, shown[-3000:]
    assert all(site.episode("alpha", f"ing-{i}") for i in range(6))  # line 1 too, behind its BOM
    assert site.episode("beta", "ing-beta") is None


def test_reviews_filter_by_scope_with_an_agents_key(site: Site) -> None:
    with site.http("alpha") as alpha:
        assert alpha.post("/v1/turns", json=[_turn("alpha", "rv-1", "reviewed soon")]).status_code == 202
        wait_until(lambda: site.episode("alpha", "rv-1"), timeout=30, what="rv-1 stored")
        assert alpha.post("/v1/review", json={"agent_id": "alpha", "user_id": USER}).status_code == 202
        scope = {"agent_id": "alpha", "user_id": USER}
        wait_until(
            lambda: alpha.get("/v1/reviews", params=scope).json()["reviews"], timeout=60, what="a review"
        )
    code, output = run_cli(["reviews", "--agent", "alpha", "--user", USER], site.env("alpha"), columns=200)
    assert code == 0, output[-3000:]
    assert "alpha/u1" in visible(output)
    refused_code, refused = run_cli(["reviews"], site.env("alpha"), columns=200)
    assert refused_code == 1
    assert "not an admin key" in visible(refused)


def test_keys_list_shows_whole_dates_on_an_80_column_terminal(site: Site) -> None:
    code, output = run_cli(["keys", "list"], site.env("admin"), columns=80)
    assert code == 0, output[-3000:]
    created = [r["created_at"] for r in KeyStore(site.stack.repo.engine).list()]
    for stamp in created:
        assert stamp in visible(output), (stamp, output)
