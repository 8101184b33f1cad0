"""pipeline.review.clustering: HDBSCAN over cosine geometry plus the cohesion trim. Pure.

Real embeddings of the default model (all-MiniLM-L6-v2 + USE) for the small sets (the thresholds must hold for the model we ship),
synthetic blobs on the unit sphere for the large ones (fast, with a known truth).
"""

from __future__ import annotations

import itertools

import numpy as np
import numpy.typing as npt
import pytest
from sklearn.cluster import HDBSCAN
from sklearn.metrics import adjusted_rand_score

from pipeline.adapters.embedder import make_embedder
from pipeline.core.config import Settings
from pipeline.review.clustering import (
    Cluster,
    ClusterParams,
    central_order,
    cluster,
    cohesion,
    plan,
)

PARAPHRASES = [
    "I don't like long answers",
    "please keep it short",
    "your replies are too wordy",
    "just get to the point",
]
UNRELATED = [
    "We're planning a trip to Kyoto in April to see the temples",
    "I have a dentist appointment on Thursday at 3pm",
    "Our cat is called Miso",
    "We went to a jazz concert last night and the saxophonist was amazing",
    "Can I deduct my home office on my tax return?",
    "The recipe needs two cups of flour and a pinch of salt",
]
# The paraphrases spread among the unrelated turns, so that nothing depends on them coming first.
MIXED = [
    PARAPHRASES[0],
    UNRELATED[0],
    UNRELATED[1],
    PARAPHRASES[1],
    UNRELATED[2],
    PARAPHRASES[2],
    UNRELATED[3],
    UNRELATED[4],
    PARAPHRASES[3],
    UNRELATED[5],
]
PARAPHRASE_AT = [MIXED.index(p) for p in PARAPHRASES]  # [0, 3, 5, 8]
# Unrelated, but all dated plans: the closest call for the threshold (tests/integration's scope).
PLANS = [
    "I'm flying to Kyoto on the 14th of April.",
    "My dentist appointment moved to Tuesday at 3pm.",
    "Our cat is called Miso and she is twelve.",
    "I bought tickets for a jazz concert at the Blue Note.",
    "How do I deduct home office costs from my taxes?",
    "The lasagne recipe needs 500 grams of ricotta.",
    "My sister's wedding is in Lisbon in June.",
]

Matrix = npt.NDArray[np.float32]


@pytest.fixture(scope="module")
def vectors() -> dict[str, Matrix]:
    """Each sentence embedded once for the whole module (loading the model takes ~5 s)."""
    texts = [*PARAPHRASES, *UNRELATED, *PLANS]
    embedded = make_embedder(Settings(embedding={"torch_threads": 1})).embed(texts)
    return {text: embedded[i] for i, text in enumerate(texts)}


def embed(vectors: dict[str, Matrix], texts: list[str]) -> Matrix:
    return np.stack([vectors[t] for t in texts])


def blobs(
    sizes: list[int], *, dim: int = 384, spread: float = 0.04, seed: int = 0
) -> tuple[Matrix, npt.NDArray[np.intp]]:
    """Gaussian blobs around random centres, projected onto the unit sphere, and their true labels.
    With spread 0.04 in 384 dimensions a point has cosine ~0.8 to its centre and ~0 to other blobs."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(len(sizes), dim))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    truth = np.repeat(np.arange(len(sizes)), sizes)
    points = centres[truth] + rng.normal(scale=spread, size=(len(truth), dim))
    points /= np.linalg.norm(points, axis=1, keepdims=True)
    return points.astype(np.float32), truth


def labels_of(clusters: list[Cluster], n: int) -> npt.NDArray[np.intp]:
    labels = np.full(n, -1, dtype=np.intp)
    for k, c in enumerate(clusters):
        labels[list(c.members)] = k
    return labels


def assert_partition(clusters: list[Cluster], noise: list[int], n: int) -> None:
    members = [i for c in clusters for i in c.members]
    assert sorted(members + noise) == list(range(n))
    assert noise == sorted(noise)


# -- real sentences ----------------------------------------------------------------------------------


def test_paraphrases_of_one_preference_are_one_cluster(vectors: dict[str, Matrix]) -> None:
    params = ClusterParams()
    clusters, noise = cluster(embed(vectors, MIXED), params)

    assert len(clusters) == 1
    (only,) = clusters
    assert list(only.members) == PARAPHRASE_AT
    assert noise == [i for i in range(len(MIXED)) if i not in PARAPHRASE_AT]
    assert only.cohesion >= params.min_cohesion
    assert only.centroid.dtype == np.float32
    assert np.linalg.norm(only.centroid) == pytest.approx(1.0, abs=1e-5)


def test_the_order_of_the_turns_does_not_matter(vectors: dict[str, Matrix]) -> None:
    reordered = [*reversed(UNRELATED[3:]), *reversed(PARAPHRASES), *UNRELATED[:3]]

    clusters, _ = cluster(embed(vectors, reordered), ClusterParams())

    assert [sorted(reordered[i] for i in c.members) for c in clusters] == [sorted(PARAPHRASES)]


def test_unrelated_turns_are_no_cluster(vectors: dict[str, Matrix]) -> None:
    clusters, noise = cluster(embed(vectors, UNRELATED), ClusterParams())

    assert clusters == []
    assert noise == list(range(len(UNRELATED)))


def test_loosely_related_plans_are_no_cluster(vectors: dict[str, Matrix]) -> None:
    # HDBSCAN groups the flight, dentist, concert and wedding (mean cosine 0.22); the trim dissolves it.
    assert cluster(embed(vectors, PLANS), ClusterParams(min_cohesion=-1.0))[0] != []

    clusters, noise = cluster(embed(vectors, PLANS), ClusterParams())

    assert clusters == []
    assert noise == list(range(len(PLANS)))


def test_a_scope_about_one_thing_is_one_cluster(vectors: dict[str, Matrix]) -> None:
    # HDBSCAN sees no split here at all; the whole scope is its root.
    clusters, noise = cluster(embed(vectors, PARAPHRASES), ClusterParams())

    assert [c.members for c in clusters] == [(0, 1, 2, 3)]
    assert noise == []


@pytest.mark.parametrize("n", range(3, 11))
def test_small_scopes_cluster(vectors: dict[str, Matrix], n: int) -> None:
    params = ClusterParams()
    clusters, noise = cluster(embed(vectors, MIXED[:n]), params)

    assert_partition(clusters, noise, n)
    for c in clusters:
        assert len(c.members) >= params.min_cluster_size
        assert set(c.members) <= set(PARAPHRASE_AT)  # an unrelated turn is never summarised


@pytest.mark.parametrize("n", [0, 1, 2])
def test_fewer_points_than_min_cluster_size_are_all_noise(vectors: dict[str, Matrix], n: int) -> None:
    x = embed(vectors, PARAPHRASES[:n]) if n else np.zeros((0, 384), dtype=np.float32)

    assert cluster(x, ClusterParams()) == ([], list(range(n)))


def test_min_samples_larger_than_the_scope_is_capped(vectors: dict[str, Matrix]) -> None:
    clusters, _ = cluster(embed(vectors, PARAPHRASES), ClusterParams(min_samples=50))

    assert [c.members for c in clusters] == [(0, 1, 2, 3)]


def test_the_paraphrases_are_closer_to_each_other_than_to_anything_else(vectors: dict[str, Matrix]) -> None:
    # The margins min_cohesion = 0.25 sits between; if the model changes, this says why a test above broke.
    p, u = embed(vectors, PARAPHRASES), embed(vectors, UNRELATED)
    per_member = [(p[i] @ np.delete(p, i, axis=0).T).mean() for i in range(len(p))]
    unrelated_pairs = [float(a @ b) for a, b in itertools.combinations(u, 2)]

    assert min(per_member) > 0.25
    assert max(unrelated_pairs) < 0.18
    assert float((p @ u.T).max()) < 0.15


def test_deterministic(vectors: dict[str, Matrix]) -> None:
    x = embed(vectors, MIXED)
    big, _ = blobs([300] * 4 + [40] * 5, seed=3)

    for data, params in [
        (x, ClusterParams()),
        (big, ClusterParams()),
        (big, ClusterParams(algorithm="reduced")),
    ]:
        first, again = cluster(data, params), cluster(data.copy(), params)
        assert [c.members for c in first[0]] == [c.members for c in again[0]]
        assert first[1] == again[1]
        for a, b in zip(first[0], again[0], strict=True):
            assert np.array_equal(a.centroid, b.centroid)
            assert a.cohesion == b.cohesion


# -- synthetic blobs: the two paths --------------------------------------------------------------------


def test_auto_clusters_exactly_up_to_reduce_above_and_reduces_beyond() -> None:
    params = ClusterParams()

    assert plan(params.reduce_above, 384, params).algorithm == "exact"
    assert plan(params.reduce_above + 1, 384, params) == plan(50, 384, ClusterParams(algorithm="reduced"))
    assert plan(params.reduce_above + 1, 384, params).dimensions == params.reduce_to
    assert plan(10**6, 384, ClusterParams(algorithm="exact")).algorithm == "exact"
    assert plan(10**6, 16, params).algorithm == "exact"  # nothing to reduce


def test_auto_beyond_reduce_above_recovers_the_blobs() -> None:
    x, truth = blobs([150, 200, 250, 300, 120, 180])
    params = ClusterParams(reduce_above=1000)
    assert plan(len(x), x.shape[1], params).algorithm == "reduced"

    clusters, noise = cluster(x, params)

    assert_partition(clusters, noise, len(x))
    assert adjusted_rand_score(truth, labels_of(clusters, len(x))) >= 0.9


def test_exact_recovers_the_blobs_and_leaves_scattered_points_as_noise() -> None:
    x, truth = blobs([60, 80, 100, 40])
    rng = np.random.default_rng(1)
    scattered = rng.normal(size=(30, x.shape[1])).astype(np.float32)
    scattered /= np.linalg.norm(scattered, axis=1, keepdims=True)
    data = np.concatenate([x, scattered])
    truth = np.concatenate([truth, np.full(30, -1)])

    clusters, noise = cluster(data, ClusterParams())

    assert adjusted_rand_score(truth, labels_of(clusters, len(data))) >= 0.9
    assert set(range(len(x), len(data))) <= set(noise)


def test_exact_agrees_with_scikit_learn() -> None:
    # The exact path builds HDBSCAN's spanning tree itself and uses hdbscan's private tree functions;
    # this pins both to the public reference implementation, on uneven blobs with scattered noise.
    x, _ = blobs([8, 12, 20, 30, 5, 6, 40, 10, 4, 3], dim=64, spread=0.1, seed=8)
    scattered = np.random.default_rng(8).normal(size=(40, 64))
    scattered /= np.linalg.norm(scattered, axis=1, keepdims=True)
    x = np.concatenate([x, scattered.astype(np.float32)])
    reference = HDBSCAN(min_cluster_size=3, algorithm="brute", copy=True).fit_predict(x)
    assert reference.max() + 1 >= 8
    assert (reference < 0).sum() >= 20

    clusters, _ = cluster(x, ClusterParams(min_cohesion=-1.0))  # no trimming: HDBSCAN's own answer

    assert adjusted_rand_score(reference, labels_of(clusters, len(x))) >= 0.99


def test_inputs_off_the_unit_sphere_are_normalised() -> None:
    x, _ = blobs([30, 30, 30], seed=5)
    scale = np.random.default_rng(2).uniform(0.5, 3.0, size=(len(x), 1)).astype(np.float32)

    assert cluster(x * scale, ClusterParams())[1] == cluster(x, ClusterParams())[1]


def test_non_finite_vectors_are_rejected() -> None:
    x, _ = blobs([5])
    x[2, 7] = np.nan

    with pytest.raises(ValueError, match="NaN"):
        cluster(x, ClusterParams())


# -- the cohesion trim ---------------------------------------------------------------------------------


def group(centre: Matrix, pairwise: float, size: int, directions: Matrix) -> Matrix:
    """`size` unit vectors with exactly `pairwise` cosine between any two: a shared component plus
    one private orthonormal direction each."""
    return (np.sqrt(pairwise) * centre + np.sqrt(1.0 - pairwise) * directions[:size]).astype(np.float32)


def test_a_loose_cluster_is_dissolved_into_noise() -> None:
    basis = np.eye(64, dtype=np.float32)
    tight = group(basis[0], 0.8, 5, basis[2:7])
    loose = group(basis[1], 0.1, 5, basis[7:12])  # a "mode" for HDBSCAN, not a topic
    x = np.concatenate([tight, loose])

    # HDBSCAN does form both...
    kept_all, _ = cluster(x, ClusterParams(min_cohesion=0.05))
    assert [c.members for c in kept_all] == [(0, 1, 2, 3, 4), (5, 6, 7, 8, 9)]
    assert kept_all[1].cohesion == pytest.approx(0.1, abs=1e-5)
    # ...and the loose one does not survive the default threshold.
    clusters, noise = cluster(x, ClusterParams())
    assert [c.members for c in clusters] == [(0, 1, 2, 3, 4)]
    assert clusters[0].cohesion == pytest.approx(0.8, abs=1e-5)
    assert noise == [5, 6, 7, 8, 9]


def test_a_stray_member_is_trimmed_and_the_rest_kept() -> None:
    basis = np.eye(64, dtype=np.float32)
    topic = group(basis[0], 0.4, 4, basis[2:6])
    stray = (0.25 * basis[0] + np.sqrt(1 - 0.0625) * basis[10])[None, :]  # cosine 0.16 to each member
    x = np.concatenate([topic, stray]).astype(np.float32)

    clusters, noise = cluster(x, ClusterParams())

    assert [c.members for c in clusters] == [(0, 1, 2, 3)]
    assert noise == [4]


def test_cohesion_is_the_mean_pairwise_cosine() -> None:
    basis = np.eye(8, dtype=np.float32)
    assert cohesion(basis[:3]) == pytest.approx(0.0)
    assert cohesion(np.stack([basis[0]] * 4)) == pytest.approx(1.0)
    assert cohesion(basis[:1]) == 1.0
    x = group(basis[0], 0.3, 6, basis[1:7])
    assert cohesion(x) == pytest.approx(0.3, abs=1e-6)
    # The mean cosine to the centroid says the same, inflated for small clusters.
    centroid = x.mean(axis=0) / np.linalg.norm(x.mean(axis=0))
    assert float((x @ centroid).mean()) == pytest.approx(np.sqrt(1 / 6 + 5 / 6 * 0.3), abs=1e-5)


# -- central order -------------------------------------------------------------------------------------


def test_central_order_puts_the_most_typical_first() -> None:
    basis = np.eye(6, dtype=np.float32)
    centre = basis[0]
    x = np.stack(
        [
            0.6 * centre + 0.8 * basis[1],
            centre,
            0.8 * centre + 0.6 * basis[2],
            0.6 * centre + 0.8 * basis[3],
        ]
    )

    assert central_order(x) == [1, 2, 0, 3]  # 0 and 3 tie: lower index first
    assert central_order(np.zeros((0, 6), dtype=np.float32)) == []


def test_central_order_of_the_paraphrases(vectors: dict[str, Matrix]) -> None:
    order = central_order(embed(vectors, PARAPHRASES))

    assert sorted(order) == [0, 1, 2, 3]
    assert PARAPHRASES[order[0]] == "I don't like long answers"


@pytest.mark.parametrize(
    "kwargs",
    [{"min_cluster_size": 1}, {"min_samples": 0}, {"reduce_to": 1}, {"algorithm": "kd_tree"}],
)
def test_bad_params_are_rejected(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        ClusterParams(**kwargs)  # type: ignore[arg-type]
