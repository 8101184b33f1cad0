"""bench.sets.consolidation: the labelled consolidation set is deterministic, stored as generated, and has
the shape issue 27 asks for; bench.consolidation's scoring functions count what they say on small cases
worked out by hand."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bench import consolidation as bench
from bench.sets import consolidation
from bench.sets.common import read_set
from pipeline.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
CJK = re.compile(r"[\u4e00-\u9fff]")
FIELDS = {"turn_id", "role", "content", "ts", "session", "topic", "attribute", "value", "near"}


@cache
def fresh() -> list[dict[str, Any]]:
    return consolidation.generate()


def turns() -> list[dict[str, Any]]:
    return [{**t, "user": u["user_id"]} for u in fresh() for t in u["turns"]]


def topics() -> dict[str, dict[str, Any]]:
    return {t["topic"]: t for u in fresh() for t in u["topics"]}


def by_topic() -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for t in turns():
        if t["topic"] is not None:
            out.setdefault(t["topic"], []).append(t)
    return out


# -- the set ----------------------------------------------------------------------------------------------


def test_generation_is_deterministic() -> None:
    assert json.dumps(consolidation.generate(), ensure_ascii=False) == json.dumps(fresh(), ensure_ascii=False)


def test_generation_does_not_depend_on_hash_seed() -> None:
    code = "import json; from bench.sets import consolidation as c; print(json.dumps(c.generate()))"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == fresh()


def test_stored_set_regenerates_byte_for_byte(tmp_path: Path) -> None:
    again = tmp_path / "consolidation.json.gz"
    consolidation.write(again, consolidation.generate())
    assert again.read_bytes() == consolidation.PATH.read_bytes()
    assert read_set(consolidation.PATH) == fresh()
    assert consolidation.PATH.read_bytes()[4:8] == b"\x00\x00\x00\x00"  # gzip mtime 0: nothing of the clock


def test_at_least_40_topics_of_3_to_6_turns_over_a_few_scopes() -> None:
    groups = by_topic()
    assert len(topics()) >= 40
    assert set(groups) == set(topics())
    for label, members in groups.items():
        assert 3 <= len(members) <= 6, label
        assert topics()[label]["turns"] == len(members), label
    users = [u["user_id"] for u in fresh()]
    assert len(users) == len(set(users)) == 4
    assert {u["agent_id"] for u in fresh()} == {consolidation.AGENT}
    for u in fresh():
        assert 10 <= len(u["topics"]) <= 12, u["user_id"]
        assert all(t["topic"].startswith(f"{u['user_id']}/") for t in u["topics"])


def test_every_turn_has_its_fields_and_time_order() -> None:
    ids = [t["turn_id"] for t in turns()]
    assert len(ids) == len(set(ids))
    for u in fresh():
        stamps = [datetime.fromisoformat(t["ts"]) for t in u["turns"]]
        assert stamps == sorted(stamps), u["user_id"]
        assert all(s.tzinfo is not None for s in stamps)
        assert len({t["session"] for t in u["turns"]}) >= 5, u["user_id"]
        for t in u["turns"]:
            assert set(t) == FIELDS, t
            assert t["content"].strip(), t
            assert t["role"] in {"user", "assistant"}, t
    roles = Counter(t["role"] for t in turns())
    assert roles["assistant"] >= 5
    assert roles["user"] > 5 * roles["assistant"]  # mostly user turns


def test_attribute_labels_follow_the_topic() -> None:
    for t in turns():
        if t["topic"] is None:
            assert t["attribute"] is None, t
            assert t["value"] is None, t
        else:
            assert t["attribute"] == topics()[t["topic"]]["attribute"], t
            if t["attribute"] is None:
                assert t["value"] is None, t
    assert sum(1 for t in topics().values() if t["attribute"]) >= 15
    assert sum(1 for t in topics().values() if not t["attribute"]) >= 15


def _mostly_chinese(text: str) -> bool:
    return len(CJK.findall(text)) >= len(re.findall(r"[A-Za-z]{2,}", text)) and bool(CJK.search(text))


def test_chinese_topics_wholly_and_mixed() -> None:
    wholly = [k for k, ts in by_topic().items() if all(_mostly_chinese(t["content"]) for t in ts)]
    mixed = [
        k
        for k, ts in by_topic().items()
        if any(_mostly_chinese(t["content"]) for t in ts)
        and not all(_mostly_chinese(t["content"]) for t in ts)
    ]
    assert len(wholly) >= 10
    assert len(mixed) >= 5
    assert {topics()[k]["lang"] for k in wholly} == {"zh"}
    assert {topics()[k]["lang"] for k in mixed} == {"mixed"}
    lin_wei = next(u for u in fresh() if u["user_id"] == "lin-wei")
    assert all(_mostly_chinese(t["content"]) for t in lin_wei["turns"])


def test_the_design_brevity_example_is_one_topic() -> None:
    brevity = by_topic()["maya/brevity"]
    assert sorted(t["content"] for t in brevity) == sorted(
        ["I don't like long answers", "can you be shorter", "too wordy", "just the point"]
    )
    assert {t["role"] for t in brevity} == {"user"}
    assert topics()["maya/brevity"]["memory"] == "The user prefers short, direct answers."


def _values(label: str) -> list[str]:
    """The values a fact topic states, in time order, consecutive repeats folded."""
    out: list[str] = []
    for t in sorted(by_topic()[label], key=lambda t: t["ts"]):
        if t["value"] is not None and (not out or out[-1] != t["value"]):
            out.append(t["value"])
    return out


def test_fact_updates_come_in_time_order() -> None:
    assert _values("chen-jia/offsite_budget") == ["50,000 yuan", "80,000 yuan"]
    assert _values("chen-jia/residence") == ["Hangzhou", "Shanghai"]
    assert topics()["chen-jia/offsite_budget"]["attribute"] == "offsite_budget"
    assert topics()["chen-jia/residence"]["attribute"] == "residence"
    # The wording of the move and the assistant's confirmation of the new budget.
    texts = {t["content"] for t in by_topic()["chen-jia/residence"]}
    assert "Big news: I moved to Shanghai last week, I'm now living in Xuhui district." in texts
    confirm = [t for t in by_topic()["chen-jia/offsite_budget"] if t["role"] == "assistant"]
    assert [t["content"] for t in confirm] == ["Understood, the offsite budget is now 80,000 yuan."]
    changing = [k for k in topics() if len(_values(k)) >= 2]
    assert len(changing) >= 8, changing
    assert any(topics()[k]["lang"] == "zh" for k in changing)


def _words(text: str) -> set[str]:
    latin = {w.lower().rstrip("s") for w in re.findall(r"[A-Za-z]{4,}", text)}
    cjk = {
        text[i : i + 2] for i in range(len(text) - 1) if CJK.fullmatch(text[i]) and CJK.fullmatch(text[i + 1])
    }
    return latin | cjk


def test_distractors_unrelated_and_near_misses_that_share_words_with_a_topic() -> None:
    distractors = [t for t in turns() if t["topic"] is None]
    near = [t for t in distractors if t["near"] is not None]
    assert len(distractors) >= 40
    assert len(near) >= 20
    assert len(distractors) - len(near) >= 20
    for t in near:
        assert t["near"] in topics(), t
        assert t["near"].startswith(f"{t['user']}/"), t
        shared = _words(t["content"]) & set().union(*(_words(m["content"]) for m in by_topic()[t["near"]]))
        assert shared, t
    for u in fresh():
        assert sum(t["topic"] is None for t in u["turns"]) >= 10, u["user_id"]


def test_topics_have_typos_and_informal_wording() -> None:
    texts = " ".join(t["content"] for t in turns())
    for typo in ("pls", "dont", "arent", "recomend", "im in"):
        assert typo in texts, typo


# -- choosing a subset ------------------------------------------------------------------------------------


def test_subset_keeps_the_first_topics_their_near_misses_and_as_many_other_distractors() -> None:
    labelled = bench.parse_set(fresh())
    part = bench.subset(labelled, ["chen-jia"], 2)
    assert part.users == ["chen-jia"]
    assert set(part.topics) == {"chen-jia/residence", "chen-jia/offsite_budget"}
    kept_topics = {t.topic for t in part.turns if t.topic is not None}
    assert kept_topics == set(part.topics)
    nears = [t for t in part.turns if t.near is not None]
    assert {t.near for t in nears} == {"chen-jia/residence", "chen-jia/offsite_budget"}
    assert (
        len(nears) == 4
    )  # three of residence (Hangzhou, a colleague's move, Shanghai's rain), one of budget
    assert sum(1 for t in part.turns if t.topic is None and t.near is None) == 2
    assert len(bench.subset(labelled).turns) == len(labelled.turns)
    with pytest.raises(ConfigError, match="no such user"):
        bench.subset(labelled, ["nobody"])


# -- scoring, worked out by hand ----------------------------------------------------------------------------

TOPIC = {"a1": "A", "a2": "A", "a3": "A", "b1": "B", "b2": "B", "d1": None, "d2": None}
ATTR = {"a1": "budget", "a2": "budget", "a3": "budget", "b1": "residence", "b2": "residence"}


def test_purity_counts_pairs_inside_each_memory() -> None:
    # One memory of a1 a2 a3 b1: 6 pairs, 3 of them A-A.
    assert bench.pairwise_purity([["a1", "a2", "a3", "b1"]], TOPIC) == bench.Ratio(3, 6)
    # a1-a2 (same), then a3-b1, a3-b2 (different) and b1-b2 (same): 2 of 4.
    assert bench.pairwise_purity([["a1", "a2"], ["a3", "b1", "b2"]], TOPIC).value == 0.5
    # Distractors pair impurely with anything, each other included; so does a turn without a label.
    assert bench.pairwise_purity([["d1", "d2"]], TOPIC) == bench.Ratio(0, 1)
    assert bench.pairwise_purity([["a1", "x9"]], TOPIC) == bench.Ratio(0, 1)
    # A member listed twice is one member.
    assert bench.pairwise_purity([["a1", "a1", "a2"]], TOPIC) == bench.Ratio(1, 1)
    # No pair at all: nothing impure.
    assert bench.pairwise_purity([["a1"], ["b1"]], TOPIC) == bench.Ratio(0, 0)
    assert bench.Ratio(0, 0).value == 1.0


def test_completeness_counts_same_topic_pairs_that_share_a_memory() -> None:
    # Same-topic pairs: a1a2 a1a3 a2a3 b1b2 = 4. One memory of a1 a2 a3 b1 holds the three A pairs.
    assert bench.completeness([["a1", "a2", "a3", "b1"]], TOPIC) == bench.Ratio(3, 4)
    # a1a2 together, b1b2 together, a3 alone: 2 of 4.
    assert bench.completeness([["a1", "a2"], ["a3", "b1", "b2"]], TOPIC).value == 0.5
    # A pair in two memories counts once; a turn in no memory is with nobody.
    assert bench.completeness([["a1", "a2"], ["a1", "a2", "d1"]], TOPIC) == bench.Ratio(1, 4)
    assert bench.completeness([], TOPIC) == bench.Ratio(0, 4)
    # Distractors make no pair to complete.
    assert bench.completeness([["d1", "d2"]], {"d1": None, "d2": None}) == bench.Ratio(0, 0)


def test_mixed_attributes_names_memories_with_two_attributes() -> None:
    groups = [["a1", "b1"], ["a1", "a2", "d1"], ["b1", "b2", "d2"], ["a3", "b2", "d1"]]
    assert bench.mixed_attributes(groups, ATTR) == [0, 3]
    assert bench.mixed_attributes([["d1", "d2"]], ATTR) == []


def test_score_puts_the_figures_together() -> None:
    labelled = bench.LabelledSet(
        tuple(
            bench.LabelledTurn(
                turn, "ag", "u", "s1", "user", turn, datetime(2026, 1, 1, tzinfo=UTC), topic, ATTR.get(turn)
            )
            for turn, topic in TOPIC.items()
        ),
        {},
    )
    s = bench.score(
        [["a1", "a2", "a3", "b1"], ["b2", "d1", "d2"]], labelled, ["Fine statement here.", "too wordy"]
    )
    assert (s.purity, s.completeness) == (bench.Ratio(3, 9), bench.Ratio(3, 4))
    assert s.mixed == [0]
    assert (s.groups, s.grouped_turns, s.turns) == (2, 7, 7)
    assert s.keyword_texts == [1]
    alone = bench.score(bench.singletons(labelled), labelled)
    assert (alone.purity.value, alone.completeness.value, alone.groups) == (1.0, 0.0, 7)


@pytest.mark.parametrize(
    ("text", "listed"),
    [
        ("Understood, the offsite budget is now 80,000 yuan. (also: 50, capped, team offsite, update)", True),
        ("Keep your answers short. (also: reading, phone, long, give, key, point)", True),
        ("简短回答。（还有：手机，重点）", True),
        ("too wordy.", True),  # two words: a fragment, not a statement
        ("太长了。", True),  # three CJK characters
        ("budget, offsite, team, update", True),
        ("杭州、西湖、预算", True),
        ("The user prefers short, direct answers.", False),
        ("Offsite budget: 80,000 yuan (was 50,000 until 2026-06-01)", False),
        ("回答请简短一点。", False),
        ("I don't like long answers.", False),
    ],
)
def test_keyword_lists_and_fragments_are_flagged(text: str, listed: bool) -> None:
    assert bench.keyword_list(text) is listed


def test_questions_are_told_apart() -> None:
    assert bench.is_question("Recommend me some science fiction like Le Guin?")
    assert bench.is_question("去云南要带厚衣服吗？")
    assert not bench.is_question("The user is going to Lisbon.")


def test_agglomerative_cuts_at_the_cosine_and_drops_small_clusters() -> None:
    # Two tight pairs: cosine 0.8 inside each pair; across, 0 but for q-s (0.36).
    v = np.array([[1.0, 0.0, 0.0], [0.8, 0.6, 0.0], [0.0, 0.0, 1.0], [0.0, 0.6, 0.8]])
    ids = ["p", "q", "r", "s"]
    assert sorted(map(sorted, bench.agglomerative(ids, v, 0.7, 2))) == [["p", "q"], ["r", "s"]]
    assert bench.agglomerative(ids, v, 0.7, 3) == []  # pairs are below the minimum size
    assert bench.agglomerative(ids, v, 0.9, 2) == []  # 0.8 is below the cut: every turn alone
    # q-s has cosine 0.36: at 0.3 average linkage still keeps the pairs apart (mean across is 0.09).
    assert len(bench.agglomerative(ids, v, 0.3, 2)) == 2
    assert bench.agglomerative(ids[:1], v[:1], 0.5, 1) == []
