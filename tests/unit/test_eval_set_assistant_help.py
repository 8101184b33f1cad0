"""bench.sets.assistant_help: a deterministic user ↔ assistant evaluation set whose questions point at real turns."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bench.locomo_data import parse_session_time
from bench.sets import assistant_help
from bench.sets.common import SETS_DIR, read_set

STORED = SETS_DIR / "assistant_help.json.gz"
EXPECTED_CATEGORIES = {"single-hop", "update", "assistant", "multi-hop", "temporal", "preference"}


@pytest.fixture(scope="module")
def samples() -> list[dict[str, Any]]:
    return [c.to_json() for c in assistant_help.generate()]


def turns_of(sample: dict[str, Any]) -> list[dict[str, str]]:
    conv = sample["conversation"]
    return [
        t
        for key, value in conv.items()
        if key.startswith("session_") and isinstance(value, list)
        for t in value
    ]


def test_generation_is_deterministic(samples: list[dict[str, Any]]) -> None:
    again = [c.to_json() for c in assistant_help.generate()]
    assert json.dumps(again, ensure_ascii=False) == json.dumps(samples, ensure_ascii=False)


def test_stored_set_matches_a_fresh_generation(samples: list[dict[str, Any]]) -> None:
    assert read_set(STORED) == samples, "regenerate with: python -m bench.sets.build"


def test_size_splits_and_categories(samples: list[dict[str, Any]]) -> None:
    assert len(samples) >= 20
    assert {s["split"] for s in samples} == {"dev", "test"}
    assert sum(len(s["qa"]) for s in samples) >= 300
    assert {q["category"] for s in samples for q in s["qa"]} == EXPECTED_CATEGORIES
    assert all(len(s["qa"]) >= 12 for s in samples)


def test_every_evidence_id_names_a_turn_of_its_conversation(samples: list[dict[str, Any]]) -> None:
    for s in samples:
        ids = {t["dia_id"] for t in turns_of(s)}
        for q in s["qa"]:
            assert q["evidence"], q
            missing = [e for e in q["evidence"] if e not in ids]
            assert not missing, (s["sample_id"], q["question"], missing)


def test_turns_have_roles_and_no_speaker_prefix(samples: list[dict[str, Any]]) -> None:
    for s in samples:
        for t in turns_of(s):
            assert t["role"] in ("user", "assistant"), t["dia_id"]
            assert not t["text"].startswith(f"{t['speaker']}:"), t["dia_id"]
            if t["role"] == "assistant":
                assert not t["text"].startswith("Assistant:"), t["dia_id"]


def test_some_evidence_sits_in_a_very_long_turn(samples: list[dict[str, Any]]) -> None:
    long_evidence = [
        (s["sample_id"], e)
        for s in samples
        for q in s["qa"]
        for t in turns_of(s)
        for e in q["evidence"]
        if t["dia_id"] == e and len(t["text"].encode("utf-8")) > 16 * 1024
    ]
    assert long_evidence


def test_session_dates_parse(samples: list[dict[str, Any]]) -> None:
    for s in samples:
        conv = s["conversation"]
        stamps = [parse_session_time(v) for k, v in conv.items() if k.endswith("_date_time")]
        assert len(stamps) == sum(
            1 for k in conv if k.startswith("session_") and not k.endswith("_date_time")
        )
        assert stamps == sorted(stamps)
        assert all(2025 <= ts.year <= 2026 for ts in stamps)
