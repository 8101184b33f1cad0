"""Clustering of a scope's unconsolidated episodes into would-be semantic memories (DESIGN §2).

Pure: unit vectors in, clusters and noise out. HDBSCAN, because the number of topics is unknown and the
points that belong to none (noise) must stay episodic rather than be forced into a cluster. On unit
vectors |a - b|^2 = 2 - 2 cos(a, b), so Euclidean HDBSCAN orders points exactly as cosine would, and the
fast Euclidean code paths can be used.

HDBSCAN on a handful of unrelated turns still happily groups some of them, and a summary of unrelated
turns is a false memory, so every cluster must also pass a cohesion test.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from pipeline.ports import Vector

ALGORITHMS = ("auto", "brute", "kd_tree", "ball_tree")
PCA_SEED = 0  # PCA's randomised solvers must not make two reviews of the same input disagree


@dataclass(frozen=True)
class ClusterParams:
    """min_samples counts the point itself (scikit-learn's convention; hdbscan's is one less) and
    defaults to min_cluster_size. Above reduce_above points the vectors are projected to reduce_to
    dimensions first (see `_plan`). algorithm: "auto", or force one of scikit-learn's HDBSCAN algorithms."""

    min_cluster_size: int = 3
    min_samples: int | None = None
    min_cohesion: float = 0.45
    reduce_above: int = 2000
    reduce_to: int = 32
    algorithm: str = "auto"

    def __post_init__(self) -> None:
        if self.min_cluster_size < 2:
            raise ValueError("min_cluster_size must be at least 2")
        if self.min_samples is not None and self.min_samples < 1:
            raise ValueError("min_samples must be at least 1")
        if self.reduce_to < 2:
            raise ValueError("reduce_to must be at least 2")
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}")


@dataclass(frozen=True)
class Cluster:
    members: tuple[int, ...]  # indices into the clustered vectors, ascending
    centroid: Vector  # L2-normalised mean of the members (in the original space)
    cohesion: float  # see `cohesion`


def cluster(vectors: npt.ArrayLike, params: ClusterParams) -> tuple[list[Cluster], list[int]]:
    """Clusters of `vectors` ((n, d), L2-normalised) and the indices left as noise (ascending).

    Deterministic for the same input. Clusters are ordered by their first member.
    """
    x = _unit_rows(vectors)
    n = x.shape[0]
    if n < params.min_cluster_size:
        return [], list(range(n))
    labels = _labels(x, params)
    clusters: list[Cluster] = []
    noise = [int(i) for i in np.flatnonzero(labels < 0)]
    for label in range(int(labels.max()) + 1):
        members = np.flatnonzero(labels == label)
        candidate = _make_cluster(x, members)
        if candidate.cohesion >= params.min_cohesion:
            clusters.append(candidate)
        else:
            noise.extend(int(i) for i in members)
    clusters.sort(key=lambda c: c.members[0])
    return clusters, sorted(noise)


def central_order(vectors: npt.ArrayLike) -> list[int]:
    """Row indices of `vectors` by cosine to their centroid, most central first (ties: lower index)."""
    x = _unit_rows(vectors)
    if x.shape[0] == 0:
        return []
    sims = x @ _centroid(x)
    return [int(i) for i in np.argsort(-sims, kind="stable")]


def cohesion(vectors: Vector) -> float:
    """Mean pairwise cosine of the rows: how alike the members are, whatever their number.

    Not the mean cosine to the centroid, although that is the same information: for unit rows
    |sum|^2 = n + n(n-1)·c, so the mean cosine to the centroid is |sum|/n = sqrt(1/n + (1-1/n)·c).
    Each member pulls the centroid towards itself, so for small clusters that number is inflated: three
    mutually orthogonal (unrelated) turns score 0.58 and six score 0.41, against 0 here. A threshold
    must mean the same for a cluster of 3 and one of 300. Computed in O(n·d) from that identity.
    """
    n = vectors.shape[0]
    if n < 2:
        return 1.0
    total = vectors.astype(np.float64).sum(axis=0)
    return float((total @ total - n) / (n * (n - 1)))


# -- internals ---------------------------------------------------------------------------------------


def _unit_rows(vectors: npt.ArrayLike) -> Vector:
    """A private float32 copy with unit rows (zero rows stay zero). Euclidean distance is a stand-in
    for cosine only on the unit sphere, so inputs that drifted from it are put back."""
    x = np.array(vectors, dtype=np.float32, copy=True, ndmin=2)
    if x.ndim != 2:
        raise ValueError(f"expected an (n, d) matrix, got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError("vectors contain NaN or infinity")
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    np.divide(x, norms, out=x, where=norms > 0)
    return x


def _centroid(x: Vector) -> Vector:
    mean = x.mean(axis=0, dtype=np.float64)
    norm = float(np.linalg.norm(mean))
    return (mean / norm if norm > 0 else mean).astype(np.float32)


def _make_cluster(x: Vector, members: npt.NDArray[np.intp]) -> Cluster:
    rows = x[members]
    return Cluster(tuple(int(i) for i in members), _centroid(rows), cohesion(rows))


def _plan(n: int, d: int, params: ClusterParams) -> tuple[int | None, str]:
    """(dimensions to project to, or None; scikit-learn HDBSCAN algorithm) for n points of d dimensions.

    Measured (scratch/cluster_bench.py, 2 cores, LoCoMo sentences embedded with all-MiniLM-L6-v2):
    TODO
    """
    reduce = n > params.reduce_above and params.reduce_to < d
    if params.algorithm != "auto":
        return (params.reduce_to if reduce else None), params.algorithm
    if reduce:
        return params.reduce_to, "kd_tree"
    return None, "brute"


def _project(x: Vector, dims: int) -> Vector:
    from sklearn.decomposition import PCA

    y = PCA(n_components=dims, random_state=PCA_SEED).fit_transform(x)
    return np.ascontiguousarray(y, dtype=np.float32)


def _labels(x: Vector, params: ClusterParams) -> npt.NDArray[np.intp]:
    from sklearn.cluster import HDBSCAN

    n, d = x.shape
    dims, algorithm = _plan(n, d, params)
    features = _project(x, dims) if dims is not None else x
    # HDBSCAN rejects min_samples > n; a scope of 3..10 episodes must still cluster.
    min_samples = min(params.min_samples or params.min_cluster_size, n)

    def fit(single: bool) -> npt.NDArray[np.intp]:
        model = HDBSCAN(
            min_cluster_size=params.min_cluster_size,
            min_samples=min_samples,
            algorithm=algorithm,
            allow_single_cluster=single,
            copy=False,  # `features` is our own array
        )
        return np.asarray(model.fit_predict(features), dtype=np.intp)

    labels = fit(single=False)
    if labels.max() < 0:
        # HDBSCAN never returns its root as a cluster unless asked, so a scope whose episodes are all
        # about one thing would get no memory at all. Asking is safe: the cohesion test throws out a
        # root that is just "everything".
        labels = fit(single=True)
    return labels
