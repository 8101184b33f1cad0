"""Hybrid recall through the real pipeline: validity, history, semantic stand-ins, scopes, explain."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from pipeline.adapters.postgres.recall_sql import RecallStore
from tests.helpers import PARAPHRASES, UNRELATED, wait_until
from tests.integration.harness import Stack

pytestmark = pytest.mark.integration

JAN = datetime(2026, 1, 10, 9, 0, tzinfo=UTC)
MAR = datetime(2026, 3, 15, 12, 0, tzinfo=UTC)
JUN = datetime(2026, 6, 1, 18, 0, tzinfo=UTC)


def _session(stack: Stack, user: str, session: str, contents: list[str], start: datetime) -> list[str]:
    ids = [
        stack.client.write_memory(
            "agent-a",
            user,
            session,
            "user",
            c,
            ts=start + timedelta(minutes=i),
            turn_id=f"{user}-{session}-{i}",
        )
        for i, c in enumerate(contents)
    ]
    stack.client.end_session("agent-a", user, session)
    stack.wait_indexed(ids)
    return ids


def _recall(stack: Stack, q: str, user: str, **params: Any) -> list[dict[str, Any]]:
    response = stack.api.get(
        "/v1/recall", params={"q": q, "agent_id": "agent-a", "user_id": user, "k": 10, **params}
    )
    assert response.status_code == 200, response.text
    results: list[dict[str, Any]] = response.json()["results"]
    return results


def _position(results: list[dict[str, Any]], turn_id: str) -> int:
    return next(i for i, r in enumerate(results) if turn_id in r["source_turn_ids"])


def test_superseded_values_rank_below_current_ones_and_as_of_answers_the_past(stack: Stack) -> None:
    stack.start_scheduler()
    old = _session(stack, "li", "s1", ["你好", "我住在杭州，在一家做机器人的公司上班"], JAN)[1]
    new = _session(stack, "li", "s2", ["告诉你个消息，我搬到了上海"], JUN)[0]

    # Now: only the current value; the Hangzhou turn asserts what is no longer true.
    now = _recall(stack, "我住在哪里", "li")
    turns = {t for r in now for t in r["source_turn_ids"]}
    assert new in turns
    assert old not in turns
    top = now[_position(now, new)]
    assert top["session_id"] == "s2"
    assert top["event_time"] == JUN.isoformat()
    assert top["valid_to"] is None
    assert top["superseded"] is False
    assert {"dense", "lexical", "fused", "weight", "trust", "semantic_boost", "speaker_boost"} <= set(
        top["explain"]
    )
    # "住哪儿" shares no character with the answer: the lexicon cannot match it, the vector finds it.
    unworded = _recall(stack, "住哪儿", "li")
    found = unworded[_position(unworded, new)]
    assert found["explain"]["lexical_rank"] is None
    assert found["explain"]["dense_rank"] is not None
    worded = _recall(stack, "搬到上海", "li")
    assert worded[0]["source_turn_ids"] == [new]
    assert worded[0]["explain"]["lexical_rank"] == 1

    # History: the superseded value comes back, flagged, and never above the value that replaced it, even
    # for a query worded like the old statement.
    for q in ("我住在哪里", "我住在杭州", "杭州 机器人 公司"):
        history = _recall(stack, q, "li", history=True)
        assert _position(history, new) < _position(history, old), q
        assert history[_position(history, old)]["superseded"] is True
        assert history[_position(history, old)]["explain"]["superseded_factor"] < 1

    # As of March: Hangzhou was the value then, and Shanghai had not been said yet.
    then = _recall(stack, "我住在哪里", "li", as_of=MAR.isoformat())
    turns = {t for r in then for t in r["source_turn_ids"]}
    assert old in turns
    assert new not in turns
    assert all(datetime.fromisoformat(r["event_time"]) <= MAR for r in then)


def test_a_semantic_memory_stands_in_for_the_members_it_states_and_the_switch_turns_it_off(
    stack: Stack,
) -> None:
    stack.start_scheduler()
    first = _session(stack, "mo", "s1", PARAPHRASES[:2] + UNRELATED[:3], JAN)
    second = _session(stack, "mo", "s2", PARAPHRASES[2:] + UNRELATED[3:], JAN + timedelta(days=7))
    members = {first[0], first[1], second[0], second[1]}
    stack.full_review("agent-a", "mo")
    wait_until(lambda: stack.repo.outbox_lag()[0] == 0, timeout=30, what="the outbox to drain")

    # By default (issue 40) recall returns the coherent memory with its provenance, and it stands in for the
    # members whose words its text states: they are not listed again. Switched off (HINDSIGHT_RECALL__SEMANTIC
    # =false) recall ranks the turns only, each at its whole weight.
    semantic = _get_memories(stack)
    assert [set(m["source_turn_ids"]) for m in semantic] == [members]
    deps = stack.api.app.state.deps  # type: ignore[attr-defined]
    default = deps.tuning
    assert default.semantic
    for switched_on in (True, False):
        deps.tuning = replace(default, semantic=switched_on)
        for q in ("Your replies are too wordy.", "how long should your answers be"):
            results = _recall(stack, q, "mo")
            memories = [r for r in results if r["kind"] == "semantic"]
            assert [set(m["source_turn_ids"]) for m in memories] == ([members] if switched_on else []), q
            stated: set[str] = set()
            for m in memories:  # what it stands for, and when it was said
                assert m["stands_for"]["turns"] == len(members)
                assert m["stands_for"]["first"] <= m["stands_for"]["last"]
                stated |= set(m["speaks_for"])
            alone = {t for r in results if r["kind"] == "episode" for t in r["source_turn_ids"]}
            assert not alone & stated, q  # a member it states is not listed again
            assert members <= alone | stated, q  # and none is lost
            assert all(r["explain"]["weight"] == 1.0 for r in results if r["kind"] == "episode")
            scores = [r["score"] for r in results]
            assert scores == sorted(scores, reverse=True)
    deps.tuning = default
    # The paraphrases are restated requests on one subject: the latest wording leads, the earlier ones are
    # quoted, so the text states (speaks for) every member.
    memory_id = int(semantic[0]["id"].split(":")[1])
    row = RecallStore(stack.repo.engine).semantic_by_id([memory_id], agent_id="agent-a", user_id="mo")[
        memory_id
    ]
    assert row.text == (
        'Just get to the point. Earlier: "Your replies are too wordy", "Please keep it short" and '
        '"I don\'t like long answers".'
    )
    assert set(row.speaks_for) == members


def _get_memories(stack: Stack) -> list[dict[str, Any]]:
    response = stack.api.get(
        "/v1/memories", params={"agent_id": "agent-a", "user_id": "mo", "kind": "semantic"}
    )
    assert response.status_code == 200, response.text
    items: list[dict[str, Any]] = response.json()["memories"]
    return items


def test_recall_never_returns_another_scopes_memories(stack: Stack) -> None:
    stack.start_scheduler()
    ana = _session(stack, "ana", "s1", [UNRELATED[0], UNRELATED[2], "Ana's violin lesson is on Friday."], JAN)
    bob = _session(stack, "bob", "s1", [UNRELATED[0], UNRELATED[3], "Bob's violin lesson is on Monday."], JAN)
    for user, own in (("ana", set(ana)), ("bob", set(bob))):
        for q in ("violin lesson", "Kyoto flight", "Miso the cat", "jazz concert tickets"):
            results = _recall(stack, q, user)
            assert {t for r in results for t in r["source_turn_ids"]} <= own, (user, q)
    assert _recall(stack, "violin lesson", "carol") == []
    response = stack.api.get("/v1/recall", params={"q": "violin", "agent_id": "agent-b", "user_id": "ana"})
    assert response.json() == {"results": [], "space": "private"}


def test_the_named_speaker_s_turns_are_favoured_and_no_neighbour_is_lifted_by_default(stack: Stack) -> None:
    stack.start_scheduler()
    turns = [
        ("Melanie", "These are my new shoes for the marathon next month!"),
        ("Caroline", "Love them, Melanie! Marathon running sounds so hard, I could never do it."),
        ("Melanie", "My doctor suggested it to help me de-stress after long days at the hospital."),
        ("Caroline", "My cousin Ben also trains for one every spring in Boston."),
    ]
    ids = [
        stack.client.write_memory(
            "agent-a",
            "sp",
            "s1",
            "user",
            text,
            ts=JAN + timedelta(minutes=i),
            metadata={"speaker": speaker},
            turn_id=f"sp-{i}",
        )
        for i, (speaker, text) in enumerate(turns)
    ]
    stack.client.end_session("agent-a", "sp", "s1")
    stack.wait_indexed(ids)
    _session(stack, "sp", "s2", UNRELATED[:3], JAN + timedelta(days=3))  # other words, another session

    results = _recall(stack, "Why did Melanie get into marathon running?", "sp")
    by_turn = {r["source_turn_ids"][0]: r for r in results}
    assert set(ids) <= set(by_turn), "every turn was kept and recallable"
    # Melanie is named: her own turns carry the speaker boost, Caroline's do not.
    assert by_turn[ids[0]]["explain"]["speaker_boost"] > 1
    assert by_turn[ids[2]]["explain"]["speaker_boost"] > 1
    assert by_turn[ids[1]]["explain"]["speaker_boost"] == 1
    assert by_turn[ids[3]]["explain"]["speaker_boost"] == 1
    # Naming both speakers favours neither.
    both = _recall(stack, "What did Caroline tell Melanie about marathon running?", "sp")
    assert both
    assert all(r["explain"]["speaker_boost"] == 1 for r in both)


def test_a_question_about_the_user_favours_the_user_s_own_turns_over_the_assistant_s(stack: Stack) -> None:
    """An agent asks about "the user": what the user said is lifted level with the assistant's reply on the
    same topic, which says far more of the question's words (issue 25: on assistant_help the long replies
    outranked the user's own statements)."""
    stack.start_scheduler()
    turns = [
        ("user", "for the landing page I'd rather deploy on Netlify, it is what I know"),
        (
            "assistant",
            "Deploying a landing page: Vercel, Netlify and Cloudflare Pages all deploy a static landing page "
            "from git. For a landing page with previews, Vercel deploys fastest; Netlify deploys forms too.",
        ),
        ("user", "thanks! also my sister's birthday is next week, any gift ideas?"),
        ("assistant", "A framed print of a place you both love, or a class you can take together."),
    ]
    ids = [
        stack.client.write_memory(
            "agent-a", "ro", "s1", role, text, ts=JAN + timedelta(minutes=i), turn_id=f"ro-{i}"
        )
        for i, (role, text) in enumerate(turns)
    ]
    stack.client.end_session("agent-a", "ro", "s1")
    stack.wait_indexed(ids)

    results = _recall(stack, "Where does the user want to deploy the landing page?", "ro")
    by_turn = {r["source_turn_ids"][0]: r for r in results}
    assert {ids[0], ids[1]} <= set(by_turn)
    assert by_turn[ids[0]]["explain"]["speaker_boost"] > 1  # the user's turn
    assert by_turn[ids[1]]["explain"]["speaker_boost"] == 1  # the assistant's
    # The reply matches the question's words far better (fused ~1.9 against ~1.0 here); the boost and the
    # reply's lower source trust bring the user's turn level with it (within a few percent). Until issue 45
    # the session prior (each turn gained a share of its session's best other match) and the lexical
    # confidence put it just above; both were deleted by measurement, each costing sets it was not tuned on.
    assert {_position(results, ids[0]), _position(results, ids[1])} == {0, 1}
    assert by_turn[ids[0]]["score"] >= 0.95 * by_turn[ids[1]]["score"]
    assert by_turn[ids[0]]["explain"]["fused"] < 0.6 * by_turn[ids[1]]["explain"]["fused"]
    # Without the role named, the reply that repeats the question's words ranks first.
    plain = _recall(stack, "Where to deploy the landing page?", "ro")
    assert all(r["explain"]["speaker_boost"] == 1 for r in plain)
    assert _position(plain, ids[1]) < _position(plain, ids[0])
    # A question about the assistant favours its turns instead.
    about = _recall(stack, "Which hosts did the assistant compare for the landing page?", "ro")
    assert {r["source_turn_ids"][0]: r for r in about}[ids[1]]["explain"]["speaker_boost"] > 1
