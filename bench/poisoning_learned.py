"""A learned screen, measured beside the rules: character n-gram TF-IDF and logistic regression (scikit-learn).

It learns from the tuned attack sources and the benign turns of the conversation sets' dev splits (plus own_v1's
hard negatives), with scikit-learn's defaults and the usual 0.5 decision threshold: no knob is set by looking at
any result. It is scored on what it never saw: the held-out attack sources, the look-alikes and the conversation
sets' test splits. The product keeps whichever of the two does better there (BENCHMARKS.md).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from bench.poisoning_data import Sample


@dataclass(frozen=True, slots=True)
class LearnedResult:
    predictions: dict[str, bool]  # sample id -> flagged, for the samples it was scored on
    train_size: int
    turns_per_s: float
    scores: dict[str, float]  # sample id -> probability of an attack (flagged: > 0.5), for the frontier


def train_and_score(train: list[Sample], score: list[Sample]) -> LearnedResult:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    # The source is part of the input (a tool result is read differently from a user's words), as a token.
    def text(s: Sample) -> str:
        return f"[{s.source}] {s.content[:4000]}"

    model = make_pipeline(
        TfidfVectorizer(
            analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True, min_df=2, max_features=200_000
        ),
        LogisticRegression(max_iter=2000, class_weight="balanced"),
    )
    model.fit([text(s) for s in train], [s.label == "attack" for s in train])
    started = time.perf_counter()
    flags = model.predict([text(s) for s in score])
    elapsed = time.perf_counter() - started
    probability = model.predict_proba([text(s) for s in score])[:, 1]
    return LearnedResult(
        {s.id: bool(f) for s, f in zip(score, flags, strict=True)},
        len(train),
        len(score) / elapsed if elapsed > 0 else 0.0,
        {s.id: float(p) for s, p in zip(score, probability, strict=True)},
    )
