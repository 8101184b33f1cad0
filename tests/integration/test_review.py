"""Review part 1 through the real pipeline: quality, de-duplication, fact chains, corrections, idempotence."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from pipeline.adapters.postgres.repository import Repository
from tasks.app import REVIEW_TASK
from tasks.app import create_app as create_celery_app
from tests.integration.harness import Stack, WorkerProcess
from tests.llm_stub import Reply, StubLLM

pytestmark = pytest.mark.integration

JAN = datetime(2026, 1, 10, 9, 0, tzinfo=UTC)
MAR = datetime(2026, 3, 15, 12, 0, tzinfo=UTC)
JUN = datetime(2026, 6, 1, 18, 0, tzinfo=UTC)


def _session(
    stack: Stack, session: str, turns: list[tuple[str, str]], start: datetime, user: str = "li"
) -> list[str]:
    """Write one session's turns (role, content), a minute apart, end it and wait for the review."""
    ids = []
    for i, (role, content) in enumerate(turns):
        ids.append(
            stack.client.write_memory(
                "agent-a",
                user,
                session,
                role,
                content,
                ts=start + timedelta(minutes=i),
                turn_id=f"{session}-{i}",
            )
        )
    stack.client.end_session("agent-a", user, session)
    stack.wait_indexed(ids)
    return ids


def _facts(stack: Stack, **params: Any) -> list[dict[str, Any]]:
    response = stack.api.get("/v1/facts", params={"agent_id": "agent-a", "user_id": "li", **params})
    assert response.status_code == 200, response.text
    facts: list[dict[str, Any]] = response.json()["facts"]
    return facts


def _rows(repo: Repository, sql: str, **params: object) -> list[tuple[Any, ...]]:
    with repo.engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text(sql), params)]


def test_rules_only_review_keeps_what_says_something_and_colds_only_filler(stack: Stack) -> None:
    # Without an LLM the rule score cannot tell a question the user comes back to, or an assistant's
    # command, from noise: they stay recallable; what carries nothing goes cold.
    stack.start_scheduler()
    _session(
        stack,
        "b1",
        [
            ("user", "hmm, which one works better for SEO and faster deployment times?"),
            ("assistant", "For SEO, Next.js with static export; deploy it with `vercel deploy --prod`."),
            ("user", "ok"),
            ("user", "thanks!!"),
        ],
        JAN,
    )
    status = dict(_rows(stack.repo, "SELECT turn_id, status FROM episodes WHERE session_id = 'b1'"))
    assert status == {"b1-0": "kept", "b1-1": "kept", "b1-2": "cold", "b1-3": "cold"}
    hits = stack.recall("which deploy command did the assistant suggest", "agent-a", "li", k=5)
    assert "b1-1" in {t for h in hits for t in h["source_turn_ids"]}  # type: ignore[attr-defined]


def test_a_move_closes_the_old_city_and_as_of_answers_the_past(stack: Stack) -> None:
    stack.start_scheduler()
    _session(stack, "s1", [("user", "你好"), ("user", "我住在杭州，在一家做机器人的公司上班")], JAN)
    _session(stack, "s2", [("user", "告诉你个消息，我搬到了上海")], JUN)

    (current,) = _facts(stack, attribute="location")
    assert (current["value"], current["valid_from"], current["valid_to"]) == ("上海", JUN.isoformat(), None)
    (then,) = _facts(stack, attribute="location", as_of=MAR.isoformat())
    assert then["value"] == "杭州"
    assert then["valid_to"] == JUN.isoformat()  # closed in valid time, not retracted
    assert then["retracted_at"] is None
    history = _facts(stack, attribute="location", history=True)
    assert [f["value"] for f in history] == ["杭州", "上海"]

    # Recall answers with what is true now; the superseded statement comes back only when history is asked for.
    hits = stack.recall("我住在哪里", "agent-a", "li", k=10)
    turns = {t for h in hits for t in h["source_turn_ids"]}  # type: ignore[attr-defined]
    assert "s2-0" in turns
    assert "s1-1" not in turns
    response = stack.api.get(
        "/v1/recall", params={"q": "我住在哪里", "agent_id": "agent-a", "user_id": "li", "history": True}
    )
    assert "s1-1" in {t for h in response.json()["results"] for t in h["source_turn_ids"]}
    # As of March, Hangzhou was true and Shanghai not yet said.
    response = stack.api.get(
        "/v1/recall",
        params={"q": "我住在哪里", "agent_id": "agent-a", "user_id": "li", "as_of": MAR.isoformat()},
    )
    assert {t for h in response.json()["results"] for t in h["source_turn_ids"]} >= {"s1-1"}


def test_a_new_contact_channel_replaces_the_old_one(stack: Stack) -> None:
    stack.start_scheduler()
    _session(stack, "s1", [("user", "有更新的话用邮件通知我")], JAN)
    _session(stack, "s2", [("user", "以后改用飞书联系我吧")], MAR)
    chain = _facts(stack, attribute="contact_channel", history=True)
    assert [(f["value"], f["valid_to"]) for f in chain] == [("email", MAR.isoformat()), ("feishu", None)]
    assert (
        _facts(stack, attribute="contact_channel", as_of=(JAN + timedelta(days=1)).isoformat())[0]["value"]
        == "email"
    )


def test_a_correction_retracts_the_wrong_value_instead_of_closing_it(stack: Stack) -> None:
    stack.start_scheduler()
    _session(stack, "s1", [("user", "我住在苏州")], JAN)
    _session(stack, "s2", [("user", "不对，是杭州不是苏州")], MAR)
    history = _facts(stack, attribute="location", history=True)
    wrong = next(f for f in history if f["value"] == "苏州")
    right = next(f for f in history if f["value"] == "杭州")
    assert wrong["retracted_at"] is not None
    assert wrong["superseded_by"] == right["id"]
    # Hangzhou was true all along: it takes Suzhou's whole interval.
    assert (right["valid_from"], right["valid_to"], right["retracted_at"]) == (JAN.isoformat(), None, None)
    assert [
        f["value"] for f in _facts(stack, attribute="location", as_of=(JAN + timedelta(days=1)).isoformat())
    ] == ["杭州"]


def test_greetings_go_cold_and_facts_stay_hot(stack: Stack) -> None:
    stack.start_scheduler()
    _session(
        stack,
        "s1",
        [
            ("user", "Hi there!"),
            ("assistant", "Hello! How can I help you today?"),
            ("user", "I'm allergic to peanuts, please never suggest recipes with them."),
            ("user", "thanks!"),
            ("user", "谢谢"),
            ("user", "My budget for the new laptop is 1500 euros."),
        ],
        JAN,
        user="li",
    )
    status = dict(_rows(stack.repo, "SELECT turn_id, status FROM episodes"))
    assert status == {
        "s1-0": "cold",
        "s1-1": "cold",
        "s1-2": "kept",
        "s1-3": "cold",
        "s1-4": "cold",
        "s1-5": "kept",
    }
    (quality,) = _rows(stack.repo, "SELECT quality FROM episodes WHERE turn_id = 's1-2'")[0]
    assert set(quality) >= {"density", "timeliness", "uniqueness", "actionability", "total", "trust", "why"}
    hits = stack.recall("hello thanks", "agent-a", "li", k=10)
    assert {t for h in hits for t in h["source_turn_ids"]} <= {"s1-2", "s1-5"}  # type: ignore[attr-defined]
    (counts,) = _rows(stack.repo, "SELECT counts FROM reviews")[0]
    assert (counts["kept"], counts["cold"], counts["merged"]) == (2, 4, 0)
    assert counts["facts_opened"] >= 2  # the allergy and the budget


def test_near_duplicates_merge_into_the_newer_with_provenance(stack: Stack) -> None:
    stack.start_scheduler()
    _session(stack, "s1", [("user", "Please keep your answers short and to the point.")], JAN)
    # Said again with one word more. (A changed end mark alone moves the default model further than a word:
    # "…point!" sits at cosine 0.93, under the 0.95 a merge needs, so it stays a memory of its own.)
    _session(stack, "s2", [("user", "Please keep all your answers short and to the point.")], MAR)
    rows = dict(_rows(stack.repo, "SELECT turn_id, status FROM episodes"))
    assert rows == {"s1-0": "merged", "s2-0": "kept"}
    (hit,) = [
        h for h in stack.recall("how long should answers be", "agent-a", "li") if h["kind"] == "episode"
    ][:1]
    assert hit["source_turn_ids"] == ["s2-0", "s1-0"]
    assert stack.index.count() == 1  # the merged one left the index


def test_reviewing_a_finished_batch_again_changes_nothing(stack: Stack) -> None:
    stack.start_scheduler()
    _session(stack, "s1", [("user", "I live in Porto and work as a nurse.")], JAN)
    before = (
        _rows(
            stack.repo,
            "SELECT id, value, valid_from, valid_to, retracted_at, turn_ids FROM facts ORDER BY id",
        ),
        _rows(stack.repo, "SELECT id, status, quality, merged_turn_ids FROM episodes ORDER BY id"),
        _rows(stack.repo, "SELECT id, status, attempts FROM batches ORDER BY id"),
    )
    (batch_id,) = before[2][0][:1]
    celery_app = create_celery_app(stack.settings)
    for _ in range(2):  # a duplicate delivery, as after a worker that died between commit and ack
        celery_app.send_task(REVIEW_TASK, args=[batch_id])
    # One worker takes tasks in order: once a later session is reviewed, the duplicates have run.
    _session(stack, "s9", [("user", "My cat is called Miso.")], MAR)
    after = (
        _rows(
            stack.repo,
            "SELECT id, value, valid_from, valid_to, retracted_at, turn_ids FROM facts ORDER BY id",
        ),
        _rows(stack.repo, "SELECT id, status, quality, merged_turn_ids FROM episodes ORDER BY id"),
        _rows(stack.repo, "SELECT id, status, attempts FROM batches ORDER BY id"),
    )
    assert [a[: len(b)] for a, b in zip(after, before, strict=True)] == list(before)
    assert _rows(stack.repo, "SELECT count(*) FROM reviews") == [(2,)]  # s1 and s9, once each


def test_the_llm_judges_the_uncertain_band_adds_facts_and_failures_fall_back_to_rules(
    stack: Stack, worker: WorkerProcess, tmp_path: Path
) -> None:
    answer = {
        "score": 0.95,
        "reason": "states a lasting fact",
        "facts": [{"entity": "user", "attribute": "employer", "value": "Globex", "confidence": 0.9}],
    }
    with StubLLM(default=Reply.good(answer, tokens=50)) as llm:
        worker.stop()
        llm_worker = WorkerProcess(
            tmp_path,
            extra_env={
                "HINDSIGHT_LLM__BASE_URL": llm.url,
                "HINDSIGHT_LLM__API_KEY": "test-key",
                "HINDSIGHT_LLM__TIMEOUT_S": "2",
                "HINDSIGHT_LLM__MAX_RETRIES": "0",
            },
        )
        llm_worker.start()
        try:
            stack.start_scheduler()
            # "Paris" alone lands in the uncertain band: the rules cannot tell, the judge can.
            _session(stack, "s1", [("user", "Paris"), ("user", "hi")], JAN)
            status = dict(_rows(stack.repo, "SELECT turn_id, status FROM episodes"))
            assert status == {"s1-0": "kept", "s1-1": "cold"}
            (why,) = _rows(stack.repo, "SELECT quality->>'why' FROM episodes WHERE turn_id = 's1-0'")[0]
            assert why == "llm_judge:0.95"
            assert [(f["attribute"], f["value"]) for f in _facts(stack)] == [("employer", "Globex")]
            assert llm.requests
            assert llm.headers[0]["authorization"] == "Bearer test-key"

            llm.close()  # the endpoint goes away: the review must carry on with the rules
            _session(stack, "s2", [("user", "Berlin")], MAR)
            (quality,) = _rows(stack.repo, "SELECT quality FROM episodes WHERE turn_id = 's2-0'")[0]
            assert quality["why"] == "rule_band"
            counts = [c for (c,) in _rows(stack.repo, "SELECT counts FROM reviews ORDER BY id")]
            assert counts[0]["llm_calls"] >= 2
            assert counts[0]["judged"] == 1
            assert counts[1]["llm_failures"] >= 1
            assert counts[1]["llm_fallbacks"] >= 1
        finally:
            llm_worker.stop()
            worker.start()
