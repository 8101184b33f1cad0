"""Semantic memories a person would have written (issue 27), through the real pipeline: a full review over a
concierge-like scope builds memories that never join turns about two fact attributes, and whose texts are
statements, never keyword lists."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest
from sqlalchemy import text

from pipeline.adapters.lexicon_cache import Lexicon
from pipeline.adapters.postgres.recall_sql import RecallStore
from pipeline.core.ports import WarmEmbedder, embed_queries
from pipeline.recall.hybrid import DEFAULT_TUNING, recall
from tests.integration.harness import Stack

pytestmark = pytest.mark.integration

T0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
AGENT, USER = "concierge", "lin"
TURNS = [
    "I live in Hangzhou, near West Lake.",
    "I don't like long answers.",
    "I work as a product manager at a travel startup.",
    "Can you be shorter?",
    "Big news: I moved to Shanghai last week, I'm now living in Xuhui district.",
    "Too wordy, just the point please.",
    "I'm a product manager, mostly roadmaps and user interviews.",
    "Keep your answers short.",
    "I now live in Shanghai, close to the river.",
    "I work as a product manager, still at the startup.",
    "I'm allergic to peanuts.",
    "My dog is called Biscuit.",
    "The team offsite budget is 50,000 yuan.",
    "Update: the board approved a bigger offsite, the offsite budget is now 80,000 yuan.",
]
RESIDENCE = {"c-0", "c-4", "c-8"}
BUDGET = {"c-12", "c-13"}


def _rows(stack: Stack, sql: str, **params: object) -> list[Any]:
    with stack.repo.engine.connect() as conn:
        return list(conn.execute(text(sql), params))


def test_a_full_review_builds_memories_about_one_thing_each_and_says_them_as_statements(stack: Stack) -> None:
    stack.start_scheduler()
    ids = [
        stack.client.write_memory(
            AGENT, USER, f"s{i // 4}", "user", c, ts=T0 + timedelta(days=i // 4, minutes=i), turn_id=f"c-{i}"
        )
        for i, c in enumerate(TURNS)
    ]
    for s in range((len(TURNS) + 3) // 4):
        stack.client.end_session(AGENT, USER, f"s{s}")
    stack.wait_indexed(ids)
    stack.full_review(AGENT, USER, timeout=90)
    memories = _rows(stack, "SELECT id, text FROM semantic_memories WHERE valid_to IS NULL")
    assert memories, "the review built no memory: the test would prove nothing"
    about: dict[str, set[str]] = {}
    for r in _rows(stack, "SELECT attribute, turn_ids FROM facts WHERE retracted_at IS NULL"):
        for t in r.turn_ids:
            about.setdefault(t, set()).add(r.attribute)
    assert {"location", "occupation"} <= {a for attrs in about.values() for a in attrs}
    for memory in memories:
        members = [
            r.turn_id
            for r in _rows(
                stack,
                "SELECT e.turn_id FROM semantic_members m JOIN episodes e ON e.id = m.episode_id "
                "WHERE m.memory_id = :m",
                m=memory.id,
            )
        ]
        stated = [about[t] for t in members if t in about]
        # No two members about different facts (a turn may state two: it shares one with the others).
        assert all(a & b for a in stated for b in stated), (memory.text, members, stated)
        assert "(also:" not in memory.text
        assert memory.text.rstrip()[-1] in ".!?。！？…", memory.text
        assert not (set(members) & RESIDENCE and set(members) & BUDGET), (memory.text, members)

    # Facts keep what the user said: the city of the move, with its casing, refined by the district.
    current = {
        r.attribute: r.value
        for r in _rows(
            stack, "SELECT attribute, value FROM facts WHERE valid_to IS NULL AND retracted_at IS NULL"
        )
    }
    assert current["location"].startswith("Shanghai"), current
    # The budget has its own memory, which says the current value and the one it replaced.
    budget = [m for m in memories if "budget" in m.text]
    assert [m.text for m in budget] == [
        "The offsite budget is 80,000 yuan (was 50,000 yuan until 2026-05-04)."
    ]
    # The inspector's listing says what each semantic memory stands for.
    listed = stack.api.get(
        "/v1/memories", params={"agent_id": AGENT, "user_id": USER, "kind": "semantic"}
    ).json()["memories"]
    assert listed
    for m in listed:
        assert m["stands_for"]["turns"] == len(m["source_turn_ids"]) >= 1
        assert m["stands_for"]["first"] <= m["stands_for"]["last"]
    # The move ranks first for where the user lives.
    hits = stack.api.get(
        "/v1/recall", params={"agent_id": AGENT, "user_id": USER, "q": "Where does the user live?", "k": 5}
    ).json()["results"]
    assert set(hits[0]["source_turn_ids"]) & {"c-4", "c-8"}, [(h["text"], h["source_turn_ids"]) for h in hits]


UNRELATED_ZH = [
    "我每周二和周四晚上上瑜伽课",
    "团子今天打完疫苗了，有点蔫",
    "我对海鲜过敏，尤其是虾",
    "最近项目赶进度，天天加班到十点",
    "国庆想去云南玩一周",
    "医生建议我睡前一小时不要看手机",
    "我在学日语，准备考N2",
    "妈妈的生日是十一月三号，想给她买条围巾",
    "周末想试试做红烧肉",
]


def test_unrelated_chinese_turns_join_no_memory_and_each_is_recalled_on_its_own(
    stack: Stack, embedder: WarmEmbedder
) -> None:
    """all-MiniLM-L6-v2 alone put unrelated Chinese sentences close together: clustered, they became one
    memory (a cat, yoga, an allergy, a trip). With the default model (MiniLM + USE, which reads Chinese) they
    stay episodes, and the dense side finds the one asked for."""
    stack.start_scheduler()
    user = "wei"
    ids = [
        stack.client.write_memory(
            AGENT, user, "z0", "user", c, ts=T0 + timedelta(minutes=i), turn_id=f"z-{i}"
        )
        for i, c in enumerate(UNRELATED_ZH)
    ]
    stack.client.end_session(AGENT, user, "z0")
    stack.wait_indexed(ids)
    stack.full_review(AGENT, user, timeout=90)
    kept = _rows(
        stack,
        "SELECT turn_id FROM episodes WHERE agent_id = :a AND user_id = :u AND status = 'kept'",
        a=AGENT,
        u=user,
    )
    assert len(kept) >= len(UNRELATED_ZH) - 1, kept  # the review kept them (none of them is filler)
    grouped = _rows(
        stack,
        "SELECT m.id, m.method, e.turn_id FROM semantic_memories m JOIN semantic_members s ON s.memory_id = m.id "
        "JOIN episodes e ON e.id = s.episode_id WHERE m.agent_id = :a AND m.user_id = :u AND m.valid_to IS NULL "
        "AND m.method <> 'template'",
        a=AGENT,
        u=user,
    )
    assert grouped == [], grouped
    hits = stack.recall("瑜伽课", AGENT, user, k=3)
    assert hits, "nothing recalled"
    assert hits[0]["source_turn_ids"] == ["z-0"], hits
    # The model reads Chinese: its nearest turn to the query is the yoga one (MiniLM's was another), and
    # recall counts its dense side.
    assert stack.settings.embedding.reads_cjk
    cosines = embed_queries(embedder, ["瑜伽课"]) @ embedder.embed(UNRELATED_ZH).T
    assert int(np.argmax(cosines[0])) == 0, cosines
    store = RecallStore(stack.repo.engine)
    dense_too = recall(
        "瑜伽课",
        agent_id=AGENT,
        user_id=user,
        k=3,
        repo=stack.repo,
        store=store,
        index=stack.index,
        embedder=embedder,
        lexicon=Lexicon(store),
        tuning=replace(DEFAULT_TUNING, dense_reads_cjk=True),
    )
    assert dense_too[0].source_turn_ids == ("z-0",), dense_too
