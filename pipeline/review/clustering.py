"""Clustering of a scope's unconsolidated episodes into would-be semantic memories (DESIGN §2).

Pure: unit vectors in, clusters and noise out. HDBSCAN, because the number of topics is unknown and the
points that belong to none (noise) must stay episodic rather than be forced into a cluster. On unit
vectors |a - b|^2 = 2 - 2 cos(a, b), so Euclidean HDBSCAN orders points exactly as cosine would, and the
fast Euclidean code paths can be used.

HDBSCAN on a handful of unrelated turns still happily groups some of them, and a summary of unrelated
turns is a false memory, so every member of a cluster must also pass a cohesion test (`_cohesive_core`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from pipeline.core.ports import Vector

# "exact": HDBSCAN on the full cosine geometry, O(n^2) memory (see `_exact_labels`).
# "reduced": PCA to reduce_to dimensions, then scikit-learn's kd-tree HDBSCAN; O(n·d) memory, but it
# agrees poorly with the exact result (see `plan`). "auto": exact up to reduce_above points, else reduced.
ALGORITHMS = ("auto", "exact", "reduced")
PCA_SEED = 0  # PCA's randomised solvers must not make two reviews of the same input disagree


@dataclass(frozen=True)
class ClusterParams:
    """min_samples counts the point itself (scikit-learn's convention; the hdbscan package's is one less)
    and defaults to min_cluster_size; it is capped at n so that scopes of 3..10 episodes still cluster.

    min_cohesion: every member of a cluster needs at least this mean cosine to the other members.
    Measured with all-MiniLM-L6-v2: four paraphrases of one preference ("I don't like long answers",
    "please keep it short", "your replies are too wordy", "just get to the point") reach 0.26 - 0.40
    per member (pairs 0.16 - 0.49); unrelated turns (a trip, a dentist, a cat, a concert, taxes, a
    recipe) pair at -0.11 - 0.25, and the most coherent trio of such dated plans (a flight, a concert,
    a wedding) reaches 0.24 per member. 0.25 sits in that thin gap; the mean cosine to the centroid has
    no gap at all for small clusters (see `cohesion`).

    reduce_above defaults to 10_000 = ReviewSettings.cluster_limit, so the default configuration always
    clusters exactly; beyond it the n x n float32 matrix of the exact path (400 MB at 10k) is the
    reason to reduce, not speed (see `plan`)."""

    min_cluster_size: int = 3
    min_samples: int | None = None
    min_cohesion: float = 0.25
    reduce_above: int = 10_000
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
class Plan:
    """How `cluster` will cluster n points of d dimensions."""

    algorithm: str  # "exact" or "reduced"
    dimensions: int  # of the space HDBSCAN runs in


def plan(n: int, d: int, params: ClusterParams) -> Plan:
    """Exact unless there are too many points for an n x n matrix.

    Measured with a throwaway script on this 2-core VM (timings vary ~2x between runs; ranges are
    medians of separate runs), all-MiniLM-L6-v2 embeddings of 10k LoCoMo sentences, min_cluster_size 3.
    Seconds; peak RSS at 10k; ARI = agreement with scikit-learn's brute HDBSCAN on the raw 384-d
    vectors, noise counted as one label:

        n     sklearn brute      hdbscan generic     any tree (sklearn kd/ball,   exact (ours)
              384d               384d                hdbscan boruvka/prims) 384d
        1k    0.04 - 0.06        0.04 - 0.22         0.8 - 1.5                    0.04 - 0.05, ARI 1.0
        3k    0.22 - 0.58        0.43 - 0.65         7.4 - 9.0                    0.20 - 0.31, ARI 1.0
        10k   3.1 - 7.0, 1.8 GB  6.7 - 10.3, 1.8 GB  75 - 109                     1.7 - 2.6, 0.6 GB, ARI 1.0

    PCA first does not pay: to 64 dims ARI 0.52 (10k: trees 11 - 16 s, brute 9 s); to 32 dims ARI
    0.40, and with the projections put back on the unit sphere EOM collapsed 3k and 10k points into
    2 - 3 giant clusters (ARI < 0); to 16 dims ARI 0.30 (10k: kd-tree 2.9 s). Two exact runs that only
    break ties between equal edge weights differently agree at ARI 0.95, so 0.3 - 0.5 is a different
    clustering, not noise. At 20k points PCA(16 | 32) + kd-tree takes 12 - 31 s. So: exact everywhere
    the matrix fits, and the reduction only as a memory valve.
    """
    reduce = params.algorithm == "reduced" or (params.algorithm == "auto" and n > params.reduce_above)
    if reduce and params.reduce_to < d:
        return Plan("reduced", params.reduce_to)
    return Plan("exact", d)


@dataclass(frozen=True)
class Cluster:
    members: tuple[int, ...]  # indices into the clustered vectors, ascending
    centroid: Vector  # L2-normalised mean of the members (in the original space)
    cohesion: float  # mean pairwise cosine of the members (see `cohesion`), >= min_cohesion


def cluster(vectors: npt.ArrayLike, params: ClusterParams) -> tuple[list[Cluster], list[int]]:
    """Clusters of `vectors` ((n, d), L2-normalised) and the indices left as noise (ascending).

    Every member of a returned cluster has a mean cosine of at least min_cohesion to the other members
    (`_cohesive_core`). Deterministic for the same input; clusters are ordered by their first member.
    """
    x = _unit_rows(vectors)
    n = x.shape[0]
    if n < params.min_cluster_size:
        return [], list(range(n))
    how = plan(n, x.shape[1], params)
    labels = _labels(x, how, params)
    groups = [np.flatnonzero(labels == k) for k in range(int(labels.max()) + 1)]
    if not groups and how.algorithm == "exact":
        # HDBSCAN found no split: to it all n points are one mode, its root, which it never returns as
        # a cluster (allow_single_cluster returns only the few points that leave the root last: 3 of the
        # 4 paraphrases in the tests). Typical of small scopes; hand the root to the cohesion trim, which
        # keeps its coherent core, if it has one. (Not when reduced: the trim needs an n x n matrix.)
        groups = [np.arange(n)]
    clusters: list[Cluster] = []
    for members in groups:
        core = _cohesive_core(x, members, params)
        if core.size:
            clusters.append(_make_cluster(x, core))
    clustered = {i for c in clusters for i in c.members}
    clusters.sort(key=lambda c: c.members[0])
    return clusters, [i for i in range(n) if i not in clustered]


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


def _cohesive_core(x: Vector, members: npt.NDArray[np.intp], params: ClusterParams) -> npt.NDArray[np.intp]:
    """The members of one cluster that belong together: the member least similar to the others (mean
    cosine) goes until every one left reaches min_cohesion; if fewer than min_cluster_size are left the
    cluster dissolves (empty result). HDBSCAN's clusters are density modes with tails, and a handful of
    unrelated turns is a "mode" too; a tail member summarised with the rest would be a false memory.
    Dropping the worst one at a time keeps the real members: they gain as the strays leave."""
    rows = x[members]
    sims = rows @ rows.T  # float32: the root of a 10k-point scope is 400 MB already
    np.fill_diagonal(sims, 0.0)
    sums = sims.sum(axis=1, dtype=np.float64)  # each member's total cosine to the others still in
    alive = np.ones(len(members), dtype=bool)
    left = len(members)
    while left >= params.min_cluster_size:
        means = np.where(alive, sums / (left - 1), np.inf)
        worst = int(np.argmin(means))
        if means[worst] >= params.min_cohesion:
            return members[alive]
        alive[worst] = False
        left -= 1
        sums -= sims[:, worst]
    return members[:0]


def _make_cluster(x: Vector, members: npt.NDArray[np.intp]) -> Cluster:
    rows = x[members]
    return Cluster(tuple(int(i) for i in members), _centroid(rows), cohesion(rows))


def _labels(x: Vector, how: Plan, params: ClusterParams) -> npt.NDArray[np.intp]:
    # HDBSCAN rejects min_samples > n; a scope of 3..10 episodes must still cluster.
    min_samples = min(params.min_samples or params.min_cluster_size, x.shape[0])
    if how.algorithm == "exact":
        return _exact_labels(x, min_samples, params.min_cluster_size)
    return _reduced_labels(_project(x, how.dimensions), min_samples, params.min_cluster_size)


def _exact_labels(x: Vector, min_samples: int, min_cluster_size: int) -> npt.NDArray[np.intp]:
    """HDBSCAN with the mutual-reachability minimum spanning tree built here, in float32 and in
    similarity space; the hdbscan package then condenses the tree and selects clusters (EOM).

    Why not a library call: scikit-learn's brute path computes the n x n matrix in float64 and copies it
    for the core distances (10k points: 3 - 7 s, 1.8 GB peak); every tree algorithm is useless at 384
    dimensions (75 - 109 s). Here: one float32 matmul (0.8 s at 10k), core distances by row blocks, a
    vectorised Prim (0.5 s): 1.7 - 2.6 s, 0.6 GB. Same labels as scikit-learn's brute HDBSCAN (ARI
    >= 0.999 at 1k, 3k and 10k; the rest is float32 ties).
    """
    sim = x @ x.T  # on unit vectors distance = sqrt(2 - 2 sim), decreasing in sim: no need to convert
    edges = _mst(sim, _core_similarity(sim, min_samples))
    del sim
    # Prim's edges sorted by distance, ties in numpy's default (quicksort) order as scikit-learn and
    # hdbscan do; a stable sort is just as valid but agrees with them only at ARI 0.95.
    edges = edges[np.argsort(edges[:, 2])]
    return _select(edges, min_cluster_size)


def _core_similarity(sim: Vector, min_samples: int, block: int = 1024) -> Vector:
    """Per point, the similarity of its min_samples-th nearest neighbour, counting itself (the core
    distance in similarity terms). By row blocks, so no second n x n array is allocated."""
    n = sim.shape[0]
    kth = n - min_samples  # ascending partition: the min_samples-th largest sits at n - min_samples
    core = np.empty(n, dtype=np.float32)
    for start in range(0, n, block):
        core[start : start + block] = np.partition(sim[start : start + block], kth, axis=1)[:, kth]
    return core


def _mst(sim: Vector, core: Vector) -> npt.NDArray[np.float64]:
    """Prim's maximum spanning tree of the mutual-reachability similarity min(sim_ij, core_i, core_j),
    i.e. the minimum spanning tree of mutual-reachability distance. Rows (from, to, distance)."""
    n = sim.shape[0]
    edges = np.empty((n - 1, 3), dtype=np.float64)
    best = np.full(n, -np.inf, dtype=np.float32)  # best similarity to the tree so far
    source = np.zeros(n, dtype=np.intp)
    done = np.zeros(n, dtype=bool)
    row = np.empty(n, dtype=np.float32)
    current = 0
    for step in range(n - 1):
        done[current] = True
        best[current] = -np.inf
        np.minimum(sim[current], core, out=row)
        np.minimum(row, core[current], out=row)
        row[done] = -np.inf
        better = row > best
        best[better] = row[better]
        source[better] = current
        nxt = int(np.argmax(best))  # first of equals, like hdbscan's Prim
        edges[step] = (source[nxt], nxt, best[nxt])
        current = nxt
    # Back to Euclidean distance on the unit sphere: the condensed tree works with 1 / distance.
    edges[:, 2] = np.sqrt(np.maximum(0.0, 2.0 - 2.0 * edges[:, 2]))
    return edges


def _select(edges: npt.NDArray[np.float64], min_cluster_size: int) -> npt.NDArray[np.intp]:
    # hdbscan's single-linkage labelling and cluster selection (EOM). Private names of hdbscan 0.8.x:
    # tests/unit/test_clustering.py pins them (agreement with scikit-learn's public HDBSCAN), so an
    # upgrade that moves them fails there, not in a review.
    from hdbscan._hdbscan_linkage import label
    from hdbscan.hdbscan_ import _tree_to_labels

    labels = _tree_to_labels(None, label(edges), min_cluster_size)[0]
    return np.asarray(labels, dtype=np.intp)


def _project(x: Vector, dims: int) -> Vector:
    from sklearn.decomposition import PCA

    # Not put back on the unit sphere: that made EOM collapse real data into 2 - 3 giant clusters.
    y = PCA(n_components=dims, random_state=PCA_SEED).fit_transform(x)
    return np.ascontiguousarray(y, dtype=np.float32)


def _reduced_labels(y: Vector, min_samples: int, min_cluster_size: int) -> npt.NDArray[np.intp]:
    from sklearn.cluster import HDBSCAN

    model = HDBSCAN(
        min_cluster_size=min_cluster_size,
        min_samples=min_samples,
        algorithm="kd_tree",
        copy=False,  # `y` is our own array
    )
    return np.asarray(model.fit_predict(y), dtype=np.intp)
