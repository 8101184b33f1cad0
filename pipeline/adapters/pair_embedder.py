"""Two embedders as one: each text's vector is the two models' unit vectors side by side, scaled by 1/sqrt(2).

The cosine of two such vectors is the mean of the two models' cosines, so every cosine rule of review
(near-duplicates, novelty, clusters) and the index read one similarity, on a scale each model shares (a
paraphrase near 1, unrelated text near 0). The point is what each model misses: all-MiniLM-L6-v2 reads
English well and Chinese not at all; USE multilingual v3 (use_embedder) reads Chinese and across languages,
English less well, at a fifth of MiniLM's cost. Measured in BENCHMARKS.md ("A second embedder beside MiniLM"): offline on every set, through the pipeline on LongMemEval and the bilingual sets.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from pipeline.core.ports import Vector, WarmEmbedder, embed_queries


class PairEmbedder:
    def __init__(self, first: WarmEmbedder, second: WarmEmbedder) -> None:
        self.first, self.second = first, second
        self.dimension = int(first.dimension) + int(second.dimension)

    def warm_up(self) -> None:
        self.first.warm_up()
        self.second.warm_up()

    def embed(self, texts: Sequence[str]) -> Vector:
        return _side_by_side(self.first.embed(texts), self.second.embed(texts))

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        return _side_by_side(embed_queries(self.first, texts), embed_queries(self.second, texts))


def _side_by_side(a: Vector, b: Vector) -> Vector:
    out = np.hstack([np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)])
    out *= np.float32(1 / math.sqrt(2))
    return out
