"""The agreement figures and report of `hindsight bench embed` (pure numpy, no model)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bench.embed import (
    REVIEW_CALL,
    EmbedResult,
    Labelled,
    Timing,
    _TorchBatch,
    cosine_agreement,
    evidence_recall,
    load_labelled,
    report_lines,
    top_k_agreement,
)
from pipeline.core.errors import ConfigError


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _circle(n: int) -> np.ndarray:
    angles = np.linspace(0, np.pi, n)  # increasingly far from the query at angle 0
    return _unit(np.stack([np.cos(angles), np.sin(angles)], axis=1))


def test_the_same_vectors_agree_fully() -> None:
    rng = np.random.default_rng(1)
    groups = [(_unit(rng.normal(size=(5, 8))), _unit(rng.normal(size=(40, 8)))) for _ in range(3)]
    assert top_k_agreement(groups, groups) == 1.0


def test_one_item_leaving_the_top_10_costs_a_tenth() -> None:
    query, corpus = _unit(np.array([[1.0, 0.0]])), _circle(12)
    moved = corpus.copy()
    moved[0] = -moved[0]  # the nearest item becomes the farthest: item 10 enters the top 10
    assert top_k_agreement([(query, corpus)], [(query, moved)]) == pytest.approx(0.9)
    # Two queries: the second candidate query points the other way, so its top 10 is item 0 (now
    # at angle pi) and items 11..3, of which 0 and 3..9 are in the reference's 0..9: 8 of 10.
    queries = _unit(np.array([[1.0, 0.0], [1.0, 0.0]]))
    both = top_k_agreement([(queries, corpus)], [(_unit(np.array([[1.0, 0.0], [-1.0, 0.0]])), moved)])
    assert both == pytest.approx((0.9 + 0.8) / 2)


def test_a_small_corpus_compares_all_of_it() -> None:
    query, corpus = _unit(np.array([[1.0, 0.0]])), _circle(4)
    assert top_k_agreement([(query, corpus)], [(query, corpus[::-1].copy())]) == 1.0


def test_no_query_is_an_error() -> None:
    empty = np.zeros((0, 2), dtype=np.float32)
    with pytest.raises(ValueError, match="no query"):
        top_k_agreement([(empty, _circle(3))], [(empty, _circle(3))])


def test_cosine_agreement_is_row_by_row() -> None:
    a = _circle(5)
    lo, mean = cosine_agreement(a, a)
    assert (lo, mean) == (pytest.approx(1.0), pytest.approx(1.0))
    flipped = a.copy()
    flipped[2] = -flipped[2]
    lo, mean = cosine_agreement(a, flipped)
    assert lo == pytest.approx(-1.0)
    assert mean == pytest.approx(3 / 5)


def test_the_report_says_when_a_target_is_missed() -> None:
    timings = {}
    for threads in (1, 2):
        for backend, wall in (("torch", 10.0), ("onnx", 8.0), ("onnx-int8", 4.0)):
            timings[(backend, threads)] = Timing([wall * threads, wall], [wall * 2, wall * 2])
    result = EmbedResult(
        n=100,
        batch_size=64,
        rounds=2,
        timings=timings,
        agreement={"onnx": (1.0, 0.99999, 1.0), "onnx-int8": (0.88, 0.96, 0.99)},
        queries=10,
        corpus=50,
        load_before=(1.0, 1.0, 1.0),
        load_after=(2.0, 2.0, 2.0),
        export_s={"onnx": 30.0, "onnx-int8": 1.0},
        startup={"torch": (14.0, 500.0), "onnx": (2.0, 200.0), "onnx-int8": (2.0, 190.0)},
        recall10={"torch": 0.5, "onnx": 0.5, "onnx-int8": 0.5},
    )
    assert result.ratio("onnx-int8", 1) == pytest.approx(2.5)  # best of rounds: 10 s vs 4 s
    text = "\n".join(report_lines(result))
    assert "onnx: 1.25× torch's sentences per CPU second at worst (wall time 1.25×" in text
    assert "top-10 agreement 1.0000 (target ≥ 0.99), LoCoMo recall@10 +0.0000 against torch" in text
    assert "top-10 agreement 0.8800 (target ≥ 0.99)" in text
    assert text.count("— not met") == 2  # onnx too slow, onnx-int8 not in agreement
    assert "| onnx-int8 | 2 | 25 | 2.50 | 12 | 2.50 |" in text


class _RecordingModel:
    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []  # (texts in the call, batch size)

    def encode(self, texts: Sequence[str], *, batch_size: int, **_: Any) -> np.ndarray:
        self.calls.append((len(texts), batch_size))
        return np.ones((len(texts), 3), dtype=np.float32)


class _Embedder:
    def __init__(self) -> None:
        self.recording = _RecordingModel()

    def model(self) -> _RecordingModel:
        return self.recording


def test_batch_sizes_are_timed_in_review_sized_calls() -> None:
    embedder = _Embedder()
    out = _TorchBatch(embedder, 8).embed([f"t{i}" for i in range(2 * REVIEW_CALL + 5)])  # type: ignore[arg-type]
    assert out.shape == (2 * REVIEW_CALL + 5, 3)
    assert embedder.recording.calls == [(REVIEW_CALL, 8), (REVIEW_CALL, 8), (5, 8)]


def _small_result(**changes: Any) -> EmbedResult:
    """100 sentences at batch 8, every backend at 1 s unless `changes` say otherwise."""
    fields: dict[str, Any] = {
        "n": 100,
        "batch_size": 8,
        "rounds": 1,
        "timings": {(b, t): Timing([1.0], [1.0]) for b in ("torch", "onnx", "onnx-int8") for t in (1, 2)},
        "agreement": {"onnx": (1.0, 1.0, 1.0), "onnx-int8": (0.9, 0.95, 0.99)},
        "queries": 1,
        "corpus": 1,
        "load_before": (0.0, 0.0, 0.0),
        "load_after": (0.0, 0.0, 0.0),
        "export_s": {},
        "startup": {},
        "recall10": {"torch": 0.5, "onnx": 0.5, "onnx-int8": 0.5},
    }
    return EmbedResult(**{**fields, **changes})


def test_the_batch_table_is_against_the_configured_size_and_names_the_fastest() -> None:
    result = _small_result(
        batch_timings={4: Timing([2.0], [2.0]), 8: Timing([1.0], [1.0]), 32: Timing([0.8], [0.5])}
    )
    text = "\n".join(report_lines(result))
    assert "| batch size | sentences/s | × batch 8 | sentences per CPU s |" in text
    assert "| 4 | 50 | 0.50 | 50 |" in text
    assert "| 32 | 125 | 1.25 | 200 |" in text
    assert "the most sentences per CPU second in this run came at 32." in text


def test_evidence_recall_is_the_share_of_evidence_in_the_top_k() -> None:
    corpus = _circle(12)  # turn i is further from the query at angle 0 as i grows
    group = Labelled(
        "conv-1",
        tuple(f"turn {i}" for i in range(12)),
        tuple(f"conv-1:D1:{i}" for i in range(12)),
        ("near", "far"),
        (("conv-1:D1:0", "conv-1:D1:11"), ("conv-1:D1:11",)),
    )
    queries = np.stack([corpus[0], corpus[0]])
    # Question one finds turn 0 but not turn 11 (12th); question two finds nothing: (0.5 + 0) / 2.
    assert evidence_recall([group], [(queries, corpus)]) == pytest.approx(0.25)
    assert evidence_recall([group], [(queries, corpus)], k=12) == pytest.approx(1.0)


def test_a_recall_that_moves_more_than_a_hundredth_misses_the_target() -> None:
    timings = {(b, t): Timing([1.0], [1.0]) for b in ("torch", "onnx", "onnx-int8") for t in (1, 2)}
    timings.update({("onnx", t): Timing([0.4], [0.4]) for t in (1, 2)})  # 2.5x torch: fast enough
    result = _small_result(
        timings=timings,
        agreement={"onnx": (0.995, 0.999, 0.9999), "onnx-int8": (0.9, 0.95, 0.99)},
        recall10={"torch": 0.70, "onnx": 0.685, "onnx-int8": 0.69},
    )
    text = "\n".join(report_lines(result))
    assert "| onnx | 0.9950 | 0.9990 | 0.99990 | 0.6850 | -0.0150 |" in text
    assert "LoCoMo recall@10 -0.0150 against torch (target within 0.01) — not met" in text
    assert result.figures["onnx_recall10"] == pytest.approx(0.685)


def test_labelled_conversations_come_from_the_shared_locomo_loader(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.json"
    with pytest.raises(ConfigError, match=r"LoCoMo data not found at .*nowhere\.json: pass --data PATH"):
        load_labelled(missing)
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    with pytest.raises(ConfigError, match="holds no LoCoMo conversation turns"):
        load_labelled(empty)
    one = tmp_path / "one.json"
    one.write_text(
        json.dumps(
            [
                {
                    "sample_id": "conv-9",
                    "conversation": {
                        "speaker_a": "Ana",
                        "speaker_b": "Bo",
                        "session_1_date_time": "1:56 pm on 8 May, 2023",
                        "session_1": [
                            {"speaker": "Ana", "dia_id": "D1:1", "text": "I moved to Lisbon."},
                            {"speaker": "Bo", "dia_id": "D1:2", "text": "Nice!"},
                        ],
                    },
                    "qa": [{"question": "Where does Ana live?", "category": 4, "evidence": ["D1:1"]}],
                }
            ]
        )
    )
    (group,) = load_labelled(one)
    assert group.turn_ids == ("conv-9:D1:1", "conv-9:D1:2")
    assert group.questions == ("Where does Ana live?",)
    assert group.evidence == (("conv-9:D1:1",),)
