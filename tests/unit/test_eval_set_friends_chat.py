"""bench.sets.friends_chat: the messenger-chat evaluation set is deterministic, stored as generated, and
has the shape it promises (short turns, bilingual conversations, evidence that names real turns)."""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

from bench.locomo_data import parse_session_time
from bench.sets import friends_chat
from bench.sets.common import SETS_DIR, read_set

STORED = SETS_DIR / "friends_chat.json.gz"
CATEGORIES = {"single-hop", "multi-hop", "temporal", "update", "chinese"}
CJK = re.compile(r"[\u4e00-\u9fff]")
ROOT = Path(__file__).resolve().parents[2]


@cache
def fresh() -> list[dict[str, Any]]:
    return [c.to_json() for c in friends_chat.generate()]


def sessions(sample: dict[str, Any]) -> list[tuple[str, list[dict[str, str]]]]:
    conv = sample["conversation"]
    numbers = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
    return [(conv[f"session_{n}_date_time"], conv[f"session_{n}"]) for n in numbers]


def turns(sample: dict[str, Any]) -> list[dict[str, str]]:
    return [t for _, ts in sessions(sample) for t in ts]


def test_generation_is_deterministic() -> None:
    again = [c.to_json() for c in friends_chat.generate()]
    assert json.dumps(again, ensure_ascii=False) == json.dumps(fresh(), ensure_ascii=False)


def test_generation_does_not_depend_on_hash_seed() -> None:
    code = "import json; from bench.sets import friends_chat as f; print(json.dumps([c.to_json() for c in f.generate()]))"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == fresh()


def test_stored_set_is_a_fresh_generation() -> None:
    assert read_set(STORED) == fresh()


def test_size_and_splits() -> None:
    data = fresh()
    assert len(data) >= 10
    assert sum(len(s["qa"]) for s in data) >= 300
    assert {s["split"] for s in data} == {"dev", "test"}
    assert len({s["sample_id"] for s in data}) == len(data)
    for sample in data:
        assert len(sample["qa"]) >= 20, sample["sample_id"]
        assert 300 <= len(turns(sample)) <= 700, sample["sample_id"]
        assert 15 <= len(sessions(sample)) <= 40, sample["sample_id"]
        assert all(8 <= len(ts) <= 40 for _, ts in sessions(sample)), sample["sample_id"]


def test_evidence_names_turns_of_its_own_conversation() -> None:
    for sample in fresh():
        known = {t["dia_id"] for t in turns(sample)}
        for q in sample["qa"]:
            assert q["evidence"], q
            assert set(q["evidence"]) <= known, (sample["sample_id"], q)
            assert q["category"] in CATEGORIES, q
            assert q["answer"].strip(), q
            assert "{" not in q["question"] + q["answer"], q


def test_turns_are_people_without_speaker_prefix() -> None:
    for sample in fresh():
        speakers = {sample["conversation"]["speaker_a"], sample["conversation"]["speaker_b"]}
        for t in turns(sample):
            assert t["role"] == "user"
            assert t["speaker"] in speakers
            assert t["text"].strip()
            assert not t["text"].startswith(f"{t['speaker']}:")
            assert "{" not in t["text"], t


def test_short_messages() -> None:
    lengths = [len(t["text"]) for sample in fresh() for t in turns(sample)]
    assert statistics.median(lengths) <= 60


def test_bilingual_conversations() -> None:
    bilingual = 0
    for sample in fresh():
        ts = turns(sample)
        if sum(1 for t in ts if CJK.search(t["text"])) >= 0.2 * len(ts):
            bilingual += 1
    assert bilingual >= 4
    chinese = [q for s in fresh() for q in s["qa"] if q["category"] == "chinese"]
    assert len(chinese) >= 30
    written = sum(friends_chat.written_in_chinese(q["question"]) for q in chinese)
    assert 0.3 * len(chinese) <= written <= 0.7 * len(chinese)  # about half in Chinese, half in English


def test_session_dates_parse_as_locomo_dates() -> None:
    for sample in fresh():
        dates = [parse_session_time(when) for when, _ in sessions(sample)]
        assert dates == sorted(dates)
        assert all(2025 <= d.year <= 2026 for d in dates)
        assert 40 <= (dates[-1] - dates[0]).days <= 190, sample["sample_id"]


def test_every_template_parses_and_its_questions_name_its_lines() -> None:
    for template in friends_chat.EN_TEMPLATES + friends_chat.ZH_TEMPLATES:
        parts, asks = friends_chat.parse_script(template)
        assert parts, template.name
        assert asks, template.name
