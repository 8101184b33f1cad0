"""`hindsight bench longmemeval` (issue 45): the stratified sample, the conversion of a question's haystack
into one LoCoMo-format scope, and LongMemEval's lenient measures beside the strict recall@k."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import longmemeval
from bench.locomo_data import Score, any_at_k, first_distinct, parse, session_of
from bench.quality import load_set
from pipeline.core.errors import ConfigError


def _question(qid: str, qtype: str, *, evidence: bool = True) -> dict[str, object]:
    return {
        "question_id": qid,
        "question_type": qtype,
        "question": f"what about {qid}?",
        "question_date": "2023/05/30 (Tue) 23:42",
        "answer": 7,
        "answer_session_ids": ["s2"],
        "haystack_session_ids": ["s2", "s1"],
        # Out of date order on purpose: the conversion sorts sessions by date.
        "haystack_dates": ["2023/05/21 (Sun) 10:00", "2023/05/20 (Sat) 00:31"],
        "haystack_sessions": [
            [
                {"role": "user", "content": f"{qid}: I have 7 plants now", "has_answer": evidence},
                {"role": "assistant", "content": "Nice, seven plants."},
            ],
            [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi there"}],
        ],
    }


def test_sample_is_stratified_seeded_split_and_leaves_out_questions_without_turn_evidence() -> None:
    qs = [_question(f"q{t}{i}", t) for t in ("a-type", "b-type") for i in range(6)]
    qs.append(_question("abs", "a-type", evidence=False))
    one = longmemeval.sample(qs, 4, seed=1)
    assert [q["question_type"] for _, q in one].count("a-type") == 4
    assert [q["question_type"] for _, q in one].count("b-type") == 4
    assert "abs" not in {q["question_id"] for _, q in one}
    assert [s for s, _ in one][:4] == ["dev", "test", "dev", "test"]
    assert one == longmemeval.sample(qs, 4, seed=1)  # fixed seed: the same sample
    assert one != longmemeval.sample(qs, 4, seed=2)
    assert len(longmemeval.sample(qs, None)) == 12


def test_a_question_becomes_one_scope_in_date_order_with_its_has_answer_turns_as_evidence() -> None:
    sample = longmemeval.to_locomo("test", _question("q1", "knowledge-update"))
    turns, questions = parse([sample])
    assert {t.conversation for t in turns} == {"q1"}
    assert [t.text for t in turns][:2] == ["hello", "hi there"]  # the earlier session first
    assert [t.role for t in turns] == ["user", "assistant", "user", "assistant"]
    assert turns[0].ts < turns[2].ts
    [q] = questions
    assert q.evidence == ("q1:D2:1",)
    assert q.category == "knowledge-update"


def test_the_sample_file_is_readable_by_the_quality_bench(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gzip
    import json

    src = tmp_path / "lme.json.gz"
    with gzip.open(src, "wt", encoding="utf-8") as fh:
        json.dump([_question(f"q{i}", "multi-session") for i in range(3)], fh)
    monkeypatch.setattr(longmemeval, "CACHE_DIR", tmp_path / "cache")
    path, chosen = longmemeval.write_sample(src, 2, 45)
    _, _turns, questions, splits = load_set(path)
    assert len(questions) == 2
    assert len(chosen) == 2
    assert set(splits.values()) == {"dev", "test"}


def test_bad_data_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        longmemeval.load_questions(tmp_path / "missing.json.gz")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(ConfigError, match="not LongMemEval JSON"):
        longmemeval.load_questions(bad)
    with pytest.raises(ConfigError, match="2023/05/20"):
        longmemeval.parse_date("May 20")


def test_recall_any_and_session_level_recall_beside_the_strict_measure() -> None:
    ranked = [
        ("c:D1:1",),
        ("c:D1:2",),
        ("c:D2:1", "c:D3:1"),
        ("c:D4:1",),
        ("c:D5:1",),
        ("c:D6:1",),
        ("c:D7:1",),
    ]
    assert first_distinct(ranked, 3) == ["c:D1:1", "c:D1:2", "c:D2:1"]
    assert first_distinct(ranked, 5, session_of) == ["c:D1", "c:D2", "c:D3", "c:D4", "c:D5"]
    gold = ["c:D6:1", "c:D1:2"]
    assert any_at_k(ranked, gold, 2)
    assert not any_at_k(ranked, ["c:D6:1"], 5)
    assert any_at_k(ranked, ["c:D5:9"], 5, session_of)  # another turn of an evidence session counts
    assert not any_at_k(ranked, ["c:D6:1"], 5, session_of)
    s = Score()
    s.add(ranked, gold)
    assert (s.at5, s.any_at5, s.session_any_at5) == (0.5, 1.0, 1.0)
