"""Dense retrieval alone, per embedding model, on LoCoMo: R@10 of each question's evidence turns among the
ten turns of its conversation nearest the question. No recall pipeline, no BM25: the model's own share.

Turns are embedded through `embed` (e5: "passage: "), questions through `embed_queries` (e5: "query: "),
as the service does. Questions without evidence are left out, as in `bench quality`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.locomo import turn_text
from bench.locomo_data import load, recall_at_k
from pipeline.core.config import EmbeddingSettings, Settings
from pipeline.core.ports import embed_queries

K = 10


@dataclass(frozen=True)
class DenseResult:
    model: str
    backend: str
    recall_at_10: float
    questions: int
    turns_per_s: float


def dense_recall(path: Path, model: str, backend: str, cache_dir: Path | None = None) -> DenseResult:
    from pipeline.adapters.embedder import make_embedder

    turns, questions = load(path)
    settings = Settings(
        embedding=EmbeddingSettings(model=model, backend=backend, torch_threads=1, cache_dir=cache_dir)
    )
    embedder = make_embedder(settings)
    embedder.warm_up()
    t0 = time.perf_counter()
    vectors = np.asarray(embedder.embed([turn_text(t) for t in turns]), dtype=np.float32)
    rate = len(turns) / (time.perf_counter() - t0)
    asked = [q for q in questions if q.evidence]
    qvecs = np.asarray(embed_queries(embedder, [q.text for q in asked]), dtype=np.float32)
    rows: dict[str, list[int]] = {}
    for i, t in enumerate(turns):
        rows.setdefault(t.conversation, []).append(i)
    scores: list[float] = []
    for q, qv in zip(asked, qvecs, strict=True):
        members = rows[q.conversation]
        order = np.argsort(-(vectors[members] @ qv), kind="stable")[:K]
        ranked = [(turns[members[j]].turn_id,) for j in order]
        scores.append(recall_at_k(ranked, q.evidence, K))
    return DenseResult(model, backend, float(np.mean(scores)), len(asked), rate)


def main(argv: Sequence[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, required=True, help="locomo10.json")
    parser.add_argument("--model", action="append", required=True, help="model:backend, repeatable")
    parser.add_argument("--cache-dir", type=Path)
    args = parser.parse_args(argv)
    for spec in args.model:
        model, _, backend = spec.partition(":")
        r = dense_recall(args.data, model, backend or "onnx-int8", args.cache_dir)
        print(
            f"{r.model:24} {r.backend:10} dense R@10 {r.recall_at_10:.3f}  ({r.questions} questions, "
            f"{r.turns_per_s:.0f} turns/s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
