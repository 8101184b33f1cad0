"""The learned injection screen beside the rules: logistic regression on the turn's MiniLM embedding.

The review embeds every turn anyway, so scoring it costs one dot product. The weights and the per-role decision
thresholds ship in `data/injection_learned.json`, written by `python -m bench.poisoning_calibrated train`
(bench/poisoning_calibrated.py says what it learns from and how the thresholds are chosen: from benign
training turns only, never from attack recall). The review quarantines a turn when the rules say so OR its
learned score reaches its role's threshold (review_batch._screen).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.core.errors import ConfigError

DEFAULT_MODEL = Path(__file__).resolve().parent / "data" / "injection_learned.json"
# Names of the embedder the weights were fitted on (pipeline/adapters/embedder.PACKAGED_MODELS): on another
# model's vectors the weights mean nothing, so the screen refuses to load rather than score noise.
MINILM = frozenset({"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"})


@dataclass(frozen=True)
class LearnedScreen:
    coef: np.ndarray  # (dimension,) float32
    intercept: float
    user_threshold: (
        float  # users' turns, and tool / external / system text (no benign tool set to calibrate on)
    )
    assistant_threshold: float  # the agent's own turns: their own, looser false-positive target

    def score(self, vector: np.ndarray) -> float:
        """Probability-like score in [0, 1] that the turn is an injection."""
        z = float(np.dot(self.coef, np.asarray(vector, dtype=np.float32))) + self.intercept
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0

    def threshold_for(self, role: str) -> float:
        return self.assistant_threshold if role == "assistant" else self.user_threshold

    def flags(self, vector: np.ndarray, role: str) -> tuple[bool, float]:
        """(quarantine?, score) for one turn's embedding."""
        s = self.score(vector)
        return s >= self.threshold_for(role), s


def from_json(raw: dict[str, object], *, embedding_model: str, dimension: int) -> LearnedScreen:
    try:
        trained_on = str(raw["embedding_model"])
        coef = np.asarray(raw["coef"], dtype=np.float32)
        thresholds = raw["thresholds"]
        assert isinstance(thresholds, dict)
        screen = LearnedScreen(
            coef=coef,
            intercept=float(raw["intercept"]),  # type: ignore[arg-type]
            user_threshold=float(thresholds["user"]),
            assistant_threshold=float(thresholds["assistant"]),
        )
    except (KeyError, TypeError, ValueError, AssertionError) as exc:
        raise ConfigError(f"learned injection screen: malformed model ({exc!r})") from exc
    if trained_on not in MINILM or embedding_model not in MINILM:
        raise ConfigError(
            f"learned injection screen was fitted on {trained_on!r} vectors, the embedder is {embedding_model!r}; "
            "turn it off (HINDSIGHT_REVIEW__INJECTION_LEARNED=false) or retrain it"
        )
    if coef.shape != (dimension,):
        raise ConfigError(
            f"learned injection screen expects {coef.shape} vectors, the embedder gives {dimension}"
        )
    return screen


def load(
    path: Path = DEFAULT_MODEL, *, embedding_model: str = "all-MiniLM-L6-v2", dimension: int = 384
) -> LearnedScreen:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"learned injection screen: cannot read {path} ({exc})") from exc
    return from_json(raw, embedding_model=embedding_model, dimension=dimension)
