"""Knowledge updates for any attribute (issue 39), through the real pipeline (scheduler, Celery worker, API):
a newer statement of the same subject supersedes the older one whatever the attribute, in English and
Chinese; recall ranks the new one first and demotes (never drops) the old one, which `as_of` and the
history still reach; every link is listed with its reason and can be undone, and review never re-links an
undone pair; look-alikes that are both true are never linked; a pair review has not seen yet is ordered
at recall time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import text

from tests.helpers import wait_until
from tests.integration.harness import Stack

pytestmark = pytest.mark.integration

AGENT, USER = "pm-bot", "ines"
JAN = datetime(2026, 1, 12, 9, 0, tzinfo=UTC)
MAR = datetime(2026, 3, 3, 15, 0, tzinfo=UTC)


def _session(stack: Stack, session: str, turns: list[tuple[str, str]], start: datetime) -> list[str]:
    return stack.write_session(AGENT, USER, session, turns, start)


def _recall(stack: Stack, q: str, **params: Any) -> list[dict[str, Any]]:
    response = stack.api.get(
        "/v1/recall", params={"q": q, "agent_id": AGENT, "user_id": USER, "k": 10, **params}
    )
    assert response.status_code == 200, response.text
    results: list[dict[str, Any]] = response.json()["results"]
    return results


def _links(stack: Stack, **params: Any) -> list[dict[str, Any]]:
    response = stack.api.get("/v1/supersessions", params={"agent_id": AGENT, "user_id": USER, **params})
    assert response.status_code == 200, response.text
    links: list[dict[str, Any]] = response.json()["supersessions"]
    return links


def _rank(hits: list[dict[str, Any]], turn_id: str) -> int | None:
    return next((i for i, h in enumerate(hits) if turn_id in h["source_turn_ids"]), None)


def test_a_newer_budget_supersedes_the_older_one_in_recall_as_of_and_history(stack: Stack) -> None:
    stack.start_scheduler()
    _session(
        stack,
        "s1",
        [
            ("user", "The Atlas project budget is 50,000 dollars for this quarter."),
            ("assistant", "Noted: the Atlas budget is 50,000 dollars."),
            ("user", "The Borealis project budget is 30,000 dollars."),
        ],
        JAN,
    )
    _session(stack, "s2", [("user", "Update: we bumped the Atlas project budget to 80,000 dollars.")], MAR)

    links = {(x["old"]["turn_id"], x["new"]["turn_id"]): x for x in _links(stack)}
    assert set(links) == {("s1-0", "s2-0"), ("s1-1", "s2-0")}, links  # the user's word and its echo
    link = links[("s1-0", "s2-0")]
    assert link["detector"] == "rules"
    assert link["reason"]["rule"] == "value"
    assert link["reason"]["new"] == ["80000"]
    assert link["batch_id"] is not None
    assert link["valid_from"] == MAR.isoformat()

    hits = _recall(stack, "What is the budget for the Atlas project?")
    assert hits[0]["source_turn_ids"] == ["s2-0"], hits
    assert hits[0]["supersedes"]
    assert hits[0]["explain"]["supersedes"]
    old = hits[_rank(hits, "s1-0")]  # demoted, not dropped
    assert old["superseded"] is True
    assert old["valid_to"] == MAR.isoformat()
    assert old["superseded_by"] == [hits[0]["id"]]
    assert old["score"] < hits[0]["score"]
    assert old["explain"]["superseded_found_by"] == "review"
    borealis = hits[_rank(hits, "s1-2")]
    assert borealis["superseded"] is False  # another project's budget is not an update

    # Before the newer statement, the older one held and nothing superseded it.
    before = _recall(
        stack, "What is the budget for the Atlas project?", as_of=(MAR - timedelta(days=1)).isoformat()
    )
    assert before[0]["source_turn_ids"] == ["s1-0"]
    assert before[0]["superseded"] is False
    assert _rank(before, "s2-0") is None

    facts = stack.api.get("/v1/facts", params={"agent_id": AGENT, "user_id": USER, "history": True}).json()
    assert {(x["old"]["turn_id"], x["new"]["turn_id"]) for x in facts["updates"]} == set(links)


def test_undo_restores_the_old_statement_and_review_never_relinks_it(stack: Stack) -> None:
    stack.start_scheduler()
    _session(stack, "s1", [("user", "Our staging API quota is 1,000 requests per minute.")], JAN)
    _session(stack, "s2", [("user", "Our staging API quota went up to 5,000 requests per minute.")], MAR)
    (link,) = _links(stack)
    response = stack.api.post(
        f"/v1/supersessions/{link['id']}/undo",
        json={"agent_id": AGENT, "user_id": USER, "reason": "both quotas exist", "actor": "ops-ana"},
    )
    assert response.status_code == 200, response.text
    hits = _recall(stack, "staging API quota requests per minute")
    assert all(h["superseded"] is False for h in hits), hits
    # A full review of the scope sees both statements again, and leaves the undone pair alone.
    stack.full_review(AGENT, USER)
    (again,) = _links(stack)
    assert again["id"] == link["id"]
    assert again["undone_by"] == "ops-ana"
    assert _links(stack, include_undone=False) == []
    with stack.repo.engine.connect() as conn:
        audit = conn.execute(
            text("SELECT actor, reason, action, changes FROM memory_audit WHERE action = 'undo_supersede'")
        ).all()
    assert [(a.actor, a.reason) for a in audit] == [("ops-ana", "both quotas exist")]
    assert audit[0].changes["supersession"] == link["id"]
    # Someone else's scope cannot undo it: an unknown link there is a 404, not a silent success.
    response = stack.api.post(
        f"/v1/supersessions/{link['id']}/undo",
        json={"agent_id": AGENT, "user_id": "someone-else", "reason": "x"},
    )
    assert response.status_code == 404, response.text


def test_look_alikes_that_are_both_true_are_never_linked(stack: Stack) -> None:
    stack.start_scheduler()
    _session(
        stack,
        "s1",
        [
            ("user", "I like green tea in the morning."),
            ("user", "My sister lives in Paris."),
            ("user", "The Atlas budget is 50k."),
            ("user", "We use Slack for team chat."),
        ],
        JAN,
    )
    _session(
        stack,
        "s2",
        [
            ("user", "I like coffee in the morning."),
            ("user", "I live in Lyon."),
            ("user", "Is the Atlas budget 60k?"),
            ("assistant", "You could raise the Atlas budget to 70k if the scope grows."),
            ("user", "If we had 100k for Atlas we would hire a designer."),
            ("user", "We also use Teams for calls with the client."),
        ],
        MAR,
    )
    assert _links(stack) == []


def test_a_chinese_channel_change_supersedes_the_old_channel(stack: Stack) -> None:
    stack.start_scheduler()
    _session(stack, "s1", [("user", "项目通知发到飞书群里"), ("user", "我每天早上跑步")], JAN)
    _session(stack, "s2", [("user", "以后项目通知发到钉钉群里"), ("user", "我不再早上跑步了")], MAR)
    pairs = {(x["old"]["turn_id"], x["new"]["turn_id"]) for x in _links(stack)}
    assert pairs == {("s1-0", "s2-0"), ("s1-1", "s2-1")}
    hits = _recall(stack, "项目通知发到哪里")
    assert hits[0]["source_turn_ids"] == ["s2-0"], hits


def test_a_pair_review_has_not_seen_yet_is_ordered_at_recall(stack: Stack) -> None:
    stack.start_scheduler()
    _session(stack, "s1", [("user", "The Atlas project deadline is Friday the 14th.")], JAN)
    stack.client.write_memory(
        AGENT,
        USER,
        "s2",
        "user",
        "The Atlas project deadline moved to Monday the 24th.",
        ts=MAR,
        turn_id="s2-0",
    )  # the session stays open: no review comes

    def new_first() -> list[dict[str, Any]] | None:
        hits = _recall(stack, "When is the Atlas project deadline?")
        return hits if hits and hits[0]["source_turn_ids"] == ["s2-0"] else None

    hits = wait_until(new_first, timeout=30, what="the unreviewed update ranked first")
    assert hits[0]["reviewed"] is False
    old = hits[_rank(hits, "s1-0")]
    assert old["superseded"] is True
    assert old["explain"]["superseded_found_by"] == "recall"
    assert _links(stack) == []  # nothing is stored until review decides


def test_the_inspector_shows_the_chain_and_undoes_a_link(stack: Stack) -> None:
    stack.start_scheduler()
    _session(stack, "s1", [("user", "Our team standup is at 9:30am.")], JAN)
    _session(stack, "s2", [("user", "From now on our team standup is at 10:15am.")], MAR)
    (link,) = _links(stack)
    scope = {"agent_id": AGENT, "user_id": USER}
    page = stack.api.get(f"/ui/memory/{link['old']['id']}", params=scope)
    assert page.status_code == 200, page.text
    assert 'data-testid="supersessions"' in page.text
    assert f"/ui/supersessions/{link['id']}/undo" in page.text
    # A form another site posts is refused; the inspector's own goes through and lands back on the page.
    form = {**scope, "reason": "both times are true", "back": link["old"]["id"]}
    refused = stack.api.post(
        f"/ui/supersessions/{link['id']}/undo", data=form, headers={"sec-fetch-site": "cross-site"}
    )
    assert refused.status_code == 403
    assert _links(stack, include_undone=False) != []
    done = stack.api.post(
        f"/ui/supersessions/{link['id']}/undo",
        data=form,
        headers={"sec-fetch-site": "same-origin"},
        follow_redirects=False,
    )
    assert done.status_code == 303, done.text
    (undone,) = _links(stack)
    assert undone["undone_by"] == "inspector"
    assert undone["undo_reason"] == "both times are true"
    assert "undone" in stack.api.get(f"/ui/memory/{link['old']['id']}", params=scope).text
