"""bench.sets.bilingual: the Chinese and English sets are one set of conversations written twice (same
turns, ids, questions and evidence), the Chinese one is Chinese, the cross set asks the Chinese
conversations in English, and the stored files are what the generator writes, byte for byte."""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

from bench.locomo_data import parse
from bench.sets import bilingual
from bench.sets.common import SETS_DIR, read_set, write_json_set, write_set
from pipeline.core.scripts import mostly_cjk

ROOT = Path(__file__).resolve().parents[2]
CATEGORIES = {"single-hop", "multi-session", "preference", "temporal", "knowledge-update"}


@cache
def fresh() -> dict[str, list[dict[str, Any]]]:
    sets = bilingual.generate()
    out = {lang: [c.to_json() for c in convs] for lang, convs in sets.items()}
    out["cross"] = bilingual.cross(sets)
    return out


def turns(sample: dict[str, Any]) -> list[dict[str, str]]:
    conv = sample["conversation"]
    n = sum(1 for k in conv if k.startswith("session_") and not k.endswith("date_time"))
    return [t for i in range(1, n + 1) for t in conv[f"session_{i}"]]


def test_stored_sets_are_byte_identical_to_a_fresh_generation(tmp_path: Path) -> None:
    sets = bilingual.generate()
    for lang in ("zh", "en"):
        write_set(tmp_path / f"{lang}.json.gz", sets[lang])
        assert (tmp_path / f"{lang}.json.gz").read_bytes() == (
            SETS_DIR / f"bilingual_{lang}.json.gz"
        ).read_bytes()
    write_json_set(tmp_path / "cross.json.gz", bilingual.cross(sets))
    assert (tmp_path / "cross.json.gz").read_bytes() == (SETS_DIR / "bilingual_cross.json.gz").read_bytes()


def test_generation_does_not_depend_on_hash_seed() -> None:
    code = (
        "import json; from bench.sets import bilingual as b; "
        "print(json.dumps({g: [c.to_json() for c in cs] for g, cs in b.generate().items()}))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    data = json.loads(out.stdout)
    assert data["zh"] == fresh()["zh"]
    assert data["en"] == fresh()["en"]


def test_the_two_languages_are_parallel() -> None:
    zh, en = fresh()["zh"], fresh()["en"]
    assert [s["sample_id"] for s in zh] == [s["sample_id"] for s in en]
    for a, b in zip(zh, en, strict=True):
        assert a["split"] == b["split"]
        assert [t["dia_id"] for t in turns(a)] == [t["dia_id"] for t in turns(b)]
        assert [t["role"] for t in turns(a)] == [t["role"] for t in turns(b)]
        for key in a["conversation"]:
            if key.endswith("date_time"):
                assert a["conversation"][key] == b["conversation"][key]
        assert [(q["evidence"], q["category"]) for q in a["qa"]] == [
            (q["evidence"], q["category"]) for q in b["qa"]
        ]
        assert [q["question"] for q in a["qa"]] != [q["question"] for q in b["qa"]]


def test_files_parse_with_identical_evidence() -> None:
    parsed = {name: parse(read_set(SETS_DIR / f"bilingual_{name}.json.gz")) for name in ("zh", "en", "cross")}
    evidence = {name: [(q.conversation, q.evidence) for q in qs] for name, (_, qs) in parsed.items()}
    assert evidence["zh"] == evidence["en"] == evidence["cross"]
    assert len(parsed["zh"][0]) == len(parsed["en"][0]) == len(parsed["cross"][0])


def test_the_chinese_file_is_chinese_and_the_english_file_is_not() -> None:
    zh_turns = [t["text"] for s in fresh()["zh"] for t in turns(s)]
    en_turns = [t["text"] for s in fresh()["en"] for t in turns(s)]
    assert sum(map(mostly_cjk, zh_turns)) >= 0.85 * len(zh_turns)
    assert not any(map(mostly_cjk, en_turns))
    assert all(mostly_cjk(q["question"]) for s in fresh()["zh"] for q in s["qa"])
    # mixed, as people type: English words (app names, offer, deadline, identifiers) inside Chinese turns
    assert sum(1 for t in zh_turns if mostly_cjk(t) and any(c.isascii() and c.isalpha() for c in t)) >= 100


def test_cross_set_is_the_chinese_conversations_with_the_english_questions() -> None:
    for c, zh, en in zip(fresh()["cross"], fresh()["zh"], fresh()["en"], strict=True):
        assert c["conversation"] == zh["conversation"]
        assert c["qa"] == en["qa"]


def test_shape() -> None:
    for lang in ("zh", "en"):
        data = fresh()[lang]
        assert len(data) >= 16
        assert {s["split"] for s in data} == {"dev", "test"}
        assert {s["sample_id"].split("-")[1] for s in data} == {"chat", "help"}
        for sample in data:
            assert 60 <= len(turns(sample)) <= 150
            assert 8 <= len(sample["qa"]) <= 15
            known = {t["dia_id"] for t in turns(sample)}
            for q in sample["qa"]:
                assert q["category"] in CATEGORIES
                assert q["evidence"]
                assert set(q["evidence"]) <= known
                assert "{" not in q["question"] + q["answer"], q
            assert all("{" not in t["text"] or "```" in t["text"] for t in turns(sample))


def test_stored_file_is_gzip_of_plain_json() -> None:
    raw = (SETS_DIR / "bilingual_zh.json.gz").read_bytes()
    with gzip.GzipFile(fileobj=io.BytesIO(raw)) as gz:
        assert json.loads(gz.read().decode("utf-8")) == fresh()["zh"]
