"""bench.sets.updates: the knowledge-update set is deterministic, stored as generated, and keeps the
invariants it promises (counts, languages, splits, pairs whose turns exist in time order, labels)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

from bench.sets import updates
from bench.sets.common import read_set

ROOT = Path(__file__).resolve().parents[2]
CONV_KEYS = ["conversation_id", "split", "shape", "lang", "agent_id", "user_id", "speakers", "turns", "pairs"]
TURN_KEYS = ["turn_id", "session_id", "role", "speaker", "content", "ts"]
PAIR_KEYS = [
    "pair_id", "label", "lang", "attribute", "value_kind", "rule_table", "lookalike_kind",
    "old_turns", "new_turns", "question", "old_value", "current_value", "evidence",
]  # fmt: skip
VALUE_KINDS = {
    "number",
    "amount",
    "date",
    "place",
    "name",
    "channel",
    "yesno",
    "negation",
    "preference",
    "version",
    "other",
}


@cache
def fresh() -> list[dict[str, Any]]:
    return updates.generate()


def pairs() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [(c, p) for c in fresh() for p in c["pairs"]]


def turn_index(conv: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["turn_id"]: t for t in conv["turns"]}


# -- the file -------------------------------------------------------------------------------------------


def test_generation_is_deterministic() -> None:
    assert json.dumps(updates.generate(), ensure_ascii=False) == json.dumps(fresh(), ensure_ascii=False)


def test_generation_does_not_depend_on_hash_seed() -> None:
    code = "import json; from bench.sets import updates as u; print(json.dumps(u.generate()))"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == fresh()


def test_stored_set_regenerates_byte_for_byte(tmp_path: Path) -> None:
    again = tmp_path / "updates.json.gz"
    updates.write(again, updates.generate())
    assert again.read_bytes() == updates.PATH.read_bytes()
    assert read_set(updates.PATH) == fresh()
    assert updates.PATH.read_bytes()[4:8] == b"\x00\x00\x00\x00"  # gzip mtime 0


def test_keys_are_exactly_the_documented_ones() -> None:
    for conv in fresh():
        assert list(conv) == CONV_KEYS
        assert all(list(t) == TURN_KEYS for t in conv["turns"])
        assert all(list(p) == PAIR_KEYS for p in conv["pairs"])


# -- counts, languages, shapes, splits ------------------------------------------------------------------


def test_at_least_300_updates_and_300_lookalikes() -> None:
    labels = Counter(p["label"] for _, p in pairs())
    assert set(labels) == {"update", "lookalike"}
    assert labels["update"] >= 300
    assert labels["lookalike"] >= 300


def test_at_least_30_percent_chinese_or_mixed_in_both_shapes() -> None:
    langs = Counter(p["lang"] for _, p in pairs())
    assert set(langs) == {"en", "zh", "mixed"}
    assert (langs["zh"] + langs["mixed"]) / sum(langs.values()) >= 0.30
    for shape in ("assistant", "friends"):
        cjk = [p for c, p in pairs() if c["shape"] == shape and p["lang"] != "en"]
        assert len(cjk) >= 60, shape
    for label in ("update", "lookalike"):
        of_label = [p for _, p in pairs() if p["label"] == label]
        assert sum(p["lang"] != "en" for p in of_label) / len(of_label) >= 0.25, label


def test_both_shapes_and_their_roles() -> None:
    shapes = Counter(c["shape"] for c in fresh())
    assert set(shapes) == {"assistant", "friends"}
    for conv in fresh():
        roles = {t["role"] for t in conv["turns"]}
        speakers = Counter(t["speaker"] for t in conv["turns"])
        if conv["shape"] == "assistant":
            assert roles == {"user", "assistant"}
            assert set(speakers) == {conv["speakers"]["user"], conv["speakers"]["assistant"]}
        else:  # both friends write, both as "user"
            assert roles == {"user"}
            assert set(speakers) == {conv["speakers"]["user"], conv["speakers"]["friend"]}
            assert min(speakers.values()) >= 15


def test_scopes_are_distinct() -> None:
    scopes = [(c["agent_id"], c["user_id"]) for c in fresh()]
    assert len(set(scopes)) == len(scopes)
    assert len({c["conversation_id"] for c in fresh()}) == len(fresh())


def test_dev_test_split_is_balanced_by_language_and_shape() -> None:
    groups: dict[tuple[str, str], Counter[str]] = {}
    for conv in fresh():
        assert conv["split"] in ("dev", "test")
        groups.setdefault((conv["lang"], conv["shape"]), Counter())[conv["split"]] += 1
    assert len(groups) == 6
    for key, counts in groups.items():
        assert abs(counts["dev"] - counts["test"]) <= 1, key
    by_split = Counter(c["split"] for c, _ in pairs())
    assert abs(by_split["dev"] - by_split["test"]) <= 0.1 * sum(by_split.values())


def test_conversation_sizes() -> None:
    for conv in fresh():
        assert 60 <= len(conv["turns"]) <= 150, conv["conversation_id"]
        assert 8 <= len(conv["pairs"]) <= 12, conv["conversation_id"]
        assert len({t["session_id"] for t in conv["turns"]}) >= 5


# -- turns and pairs ------------------------------------------------------------------------------------


def test_turns_are_unique_and_in_time_order_with_an_offset() -> None:
    for conv in fresh():
        ids = [t["turn_id"] for t in conv["turns"]]
        assert len(set(ids)) == len(ids)
        assert all(i.startswith(conv["conversation_id"] + "-t") for i in ids)
        stamps = [datetime.fromisoformat(t["ts"]) for t in conv["turns"]]
        assert all(s.utcoffset() is not None for s in stamps)
        assert stamps == sorted(stamps)
        assert len(set(stamps)) == len(stamps)
        assert all(t["content"].strip() for t in conv["turns"])


def test_every_pair_names_turns_that_exist_older_first_in_an_earlier_session() -> None:
    for conv in fresh():
        turns = turn_index(conv)
        sessions = list(dict.fromkeys(t["session_id"] for t in conv["turns"]))
        for p in conv["pairs"]:
            assert p["pair_id"].startswith(conv["conversation_id"] + "-p")
            old, new = p["old_turns"], p["new_turns"]
            assert old, p["pair_id"]
            assert new, p["pair_id"]
            assert all(t in turns for t in old + new), p["pair_id"]
            assert not set(old) & set(new)
            last_old = max(datetime.fromisoformat(turns[t]["ts"]) for t in old)
            first_new = min(datetime.fromisoformat(turns[t]["ts"]) for t in new)
            assert (first_new - last_old).days >= 1, p["pair_id"]
            assert max(sessions.index(turns[t]["session_id"]) for t in old) < min(
                sessions.index(turns[t]["session_id"]) for t in new
            )
            assert p["evidence"], p["pair_id"]
            assert set(p["evidence"]) <= set(old + new), p["pair_id"]


def test_labels_and_kinds() -> None:
    kinds = Counter(p["lookalike_kind"] for _, p in pairs() if p["label"] == "lookalike")
    assert set(kinds) == set(updates.KINDS)
    lookalikes = sum(kinds.values())
    assert min(kinds.values()) >= 0.08 * lookalikes  # roughly even
    for _, p in pairs():
        assert (p["lookalike_kind"] is None) == (p["label"] == "update")
        assert p["value_kind"] in VALUE_KINDS
        assert isinstance(p["rule_table"], bool)
        assert p["question"].strip()
        assert p["attribute"].strip()
        assert p["old_value"]
        assert p["current_value"]


def test_most_pairs_lie_outside_the_rule_table() -> None:
    rule = [p["rule_table"] for _, p in pairs()]
    assert sum(rule) / len(rule) <= 0.40
    assert sum(rule) / len(rule) >= 0.15  # some are in it


def test_values_follow_the_label() -> None:
    for _, p in pairs():
        kind = p["lookalike_kind"]
        if p["label"] == "update":
            assert p["old_value"] != p["current_value"], p["pair_id"]
        elif kind in ("same_value", "assistant_suggestion", "hypothetical", "past_history"):
            assert p["old_value"] == p["current_value"], p["pair_id"]
        elif kind == "both_true":
            assert p["current_value"] != p["old_value"]


def test_updates_are_said_by_the_subject_and_suggestions_by_the_assistant() -> None:
    for conv, p in pairs():
        turns = turn_index(conv)
        first_new = turns[p["new_turns"][0]]
        if p["label"] == "update":
            assert first_new["role"] == "user"
            assert all(
                turns[t]["speaker"] == first_new["speaker"]
                for t in p["old_turns"]
                if turns[t]["role"] == "user"
            )
        if p["lookalike_kind"] == "assistant_suggestion":
            assert conv["shape"] == "assistant"
            assert [turns[t]["role"] for t in p["new_turns"]] == ["assistant"]
        if conv["shape"] == "assistant":  # an echo follows its statement
            roles = [turns[t]["role"] for t in p["new_turns"]]
            assert (
                roles == sorted(roles, key=lambda r: r != "user")
                or p["lookalike_kind"] == "assistant_suggestion"
            )


def test_subjects_are_distinct_within_a_conversation() -> None:
    for conv in fresh():
        attributes = [p["attribute"] for p in conv["pairs"]]
        assert len(set(attributes)) == len(attributes), conv["conversation_id"]


def test_questions_are_written_apart_from_the_statements() -> None:
    for conv, p in pairs():
        turns = turn_index(conv)
        for t in p["old_turns"] + p["new_turns"]:
            assert p["question"] not in turns[t]["content"]
            assert turns[t]["content"] not in p["question"]
