"""The pure parts of recall: fusion, provenance order, BM25, evidence ids and recall@k walking."""

from __future__ import annotations

import pytest

from bench.locomo_data import normalise_evidence, recall_at_k
from pipeline.core.models import Hit
from pipeline.core.recall_rows import RecallEpisode
from pipeline.recall import hits as recall_hits
from pipeline.recall import hybrid as recall
from pipeline.recall import lexical, ranking


def test_normalised_fusion_is_min_max_per_list() -> None:
    fused = ranking.normalised(
        {"dense": [("a", 0.9), ("b", 0.5), ("c", 0.1)], "lexical": [("c", 10.0), ("a", 5.0)]},
        weights={"dense": 1.0, "lexical": 1.0},
    )
    assert fused["a"] == pytest.approx(1.0 + 0.0)
    assert fused["b"] == pytest.approx(0.5)
    assert fused["c"] == pytest.approx(0.0 + 1.0)
    single = ranking.normalised({"dense": [("x", 0.3)]}, weights={})
    assert single == {"x": 1.0}


def test_factors_multiply_and_semantic_memories_are_boosted() -> None:
    f = ranking.Factors(weight=0.5, trust=0.7, semantic=ranking.SEMANTIC_BOOST, window=1.5, speaker=1.3)
    assert f.product() == pytest.approx(0.5 * 0.7 * 1.2 * 1.5 * 1.3)
    assert ranking.Factors(weight=1.0, trust=1.0, superseded=0.5).product() == 0.5


def test_order_turns_puts_relevant_members_first_and_keeps_the_rest_in_order() -> None:
    turns = ["t1", "t2", "t3", "t4", "t2"]
    assert ranking.order_turns(turns, {"t3": 0.9, "t4": 0.2}) == ("t3", "t4", "t1", "t2")
    assert ranking.order_turns(turns, {}) == ("t1", "t2", "t3", "t4")


def test_bm25_prefers_rare_terms_and_matches_stems() -> None:
    index = lexical.BM25()
    index.add_text(1, "Caroline: I went to the support group yesterday")
    index.add_text(2, "Caroline: I love painting sunsets")
    index.add_text(3, "Melanie: Caroline, how are you?")
    results = index.search("When did Caroline paint a sunset?", 3)
    assert results[0][0] == 2  # "paint"/"sunset" are rarer than "Caroline" and match "painting"/"sunsets"
    assert {doc for doc, _ in results} == {1, 2, 3}
    assert index.search("the of and", 3) == []  # stop words only


def test_bm25_context_terms_count_less_than_own_terms() -> None:
    index = lexical.BM25()
    index.add(
        1,
        lexical.weighted_terms(
            "I adopted a puppy", context="What did you do at the shelter?", context_weight=0.5
        ),
    )
    index.add(2, lexical.weighted_terms("The shelter was busy"))
    index.add(3, lexical.weighted_terms("Nothing much"))
    assert index.search("shelter", 3)[0][0] == 2
    assert next(doc for doc, _ in index.search("shelter puppy", 3)) == 1


def test_tokens_split_cjk_into_characters_and_bigrams() -> None:
    assert lexical.tokens("我住在上海") == ["我", "住", "在", "上", "海", "我住", "住在", "在上", "上海"]
    assert lexical.tokens("Running, ran; runs!") == ["run", "ran", "run"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (["D1:3"], ("D1:3",)),
        (["D30:05"], ("D30:5",)),
        (["D:11:26"], ("D11:26",)),
        (["D8:6; D9:17"], ("D8:6", "D9:17")),
        (["D21:18 D21:22 D11:15"], ("D21:18", "D21:22", "D11:15")),
        (["D", "D2:1", "D2:1"], ("D2:1",)),
        ([], ()),
    ],
)
def test_normalise_evidence(raw: list[str], expected: tuple[str, ...]) -> None:
    assert normalise_evidence(raw) == expected


def test_recall_at_k_counts_distinct_turns_not_results() -> None:
    ranked = [("a", "b", "c"), ("b", "d"), ("e",), ("gold2",)]
    # k=3: a, b, c (one semantic memory takes three slots); gold1 never appears.
    assert recall_at_k(ranked, {"c", "gold2"}, 3) == 0.5
    # k=5: a, b, c, d, e; the repeated "b" does not use a slot, but gold2 comes sixth.
    assert recall_at_k(ranked, {"c", "gold2"}, 5) == 0.5
    assert recall_at_k(ranked, {"c", "gold2"}, 6) == 1.0
    assert recall_at_k([], {"x"}, 10) == 0.0
    with pytest.raises(ValueError, match="without evidence"):
        recall_at_k(ranked, set(), 5)


def _hit(
    id_: str,
    score: float,
    turns: tuple[str, ...],
    *,
    kind: str = "episode",
    superseded: bool = False,
    speaks_for: tuple[str, ...] | None = None,
) -> Hit:
    # A semantic memory speaks for all its members unless told otherwise (a template or LLM summary).
    said = turns if speaks_for is None and kind == "semantic" else (speaks_for or ())
    return Hit(id_, kind, id_, score, 1.0, None, None, turns, None, superseded=superseded, speaks_for=said)  # type: ignore[arg-type]


def test_history_puts_superseded_statements_below_every_current_one_even_on_ties() -> None:
    hits = [
        _hit("old", 0.9, ("t1",), superseded=True),
        _hit("new", 0.0, ("t2",)),
        _hit("other", 0.4, ("t3",)),
    ]
    ranked = sorted(recall_hits.history_below_current(hits, 0.5), key=recall_hits.rank_key, reverse=True)
    assert [h.id for h in ranked] == ["other", "new", "old"]
    assert ranked[-1].score == 0.0


def test_small_semantic_memories_stand_in_for_their_members_and_large_ones_do_not() -> None:
    hits = [
        _hit("member-b", 0.9, ("b",)),
        _hit("other", 0.8, ("x",)),
        _hit("small", 0.3, ("a", "b", "c"), kind="semantic"),
        _hit("member-a", 0.2, ("a",)),
        _hit("large", 0.1, (*tuple(f"t{i}" for i in range(20)), "x"), kind="semantic"),
    ]
    out = recall_hits.stand_in(hits, max_members=12)
    assert [h.id for h in out] == ["small", "other", "large"]
    assert out[0].score == pytest.approx(0.9 * ranking.SEMANTIC_BOOST)  # lifted above its best member
    assert out[0].source_turn_ids == ("b", "a", "c")  # most relevant member first
    assert out[0].explain == {"stands_in_for_score": 0.9}
    assert out[2].score == 0.1  # a 21-turn memory keeps its own rank, and "other" keeps its place


def test_a_memory_borrows_from_and_hides_only_the_members_it_speaks_for() -> None:
    # Issue 27: "the offsite budget is now 80,000 yuan" with a residence turn cosine put beside it. The
    # residence turn is the best hit for "where does the user live?": the memory may not rank on it or hide it.
    hits = [
        _hit("residence", 0.9, ("home",)),
        _hit("budget-turn", 0.2, ("budget",)),
        _hit("memory", 0.1, ("budget", "home"), kind="semantic", speaks_for=("budget",)),
    ]
    out = recall_hits.stand_in(hits, max_members=12)
    assert [h.id for h in out] == ["residence", "memory"]
    assert out[1].score == pytest.approx(0.2 * ranking.SEMANTIC_BOOST)  # lifted by its own member only


def _episode(weight: float, folded_into: int) -> RecallEpisode:
    from datetime import UTC, datetime

    return RecallEpisode(
        7, "t7", (), "s", "text", datetime(2024, 1, 1, tzinfo=UTC), "user", weight, False, folded_into
    )


@pytest.mark.parametrize(
    ("folded_into", "expected_weight"),
    [(0, 1.0), (5, 0.5), (300, 1.0)],
)
def test_members_of_memories_too_big_to_stand_in_get_their_weight_back(
    folded_into: int, expected_weight: float
) -> None:
    weight = 1.0 if folded_into == 0 else 0.5  # what review left members at before member_weight 1.0
    tuning = recall.RecallTuning(semantic=True, stand_in_max=12, member_weight=0.5)
    candidate = recall_hits.Candidate(("episode", 7), fused=0.8)
    hit = recall_hits.to_hit(candidate, {7: _episode(weight, folded_into)}, {}, None, tuning)
    assert hit is not None
    assert hit.explain is not None
    assert hit.explain["weight"] == expected_weight
    assert hit.score == pytest.approx(0.8 * expected_weight)


@pytest.mark.parametrize(
    ("weight", "base", "exponent", "expected"),
    [
        (0.25, 1.0, 1.0, 0.25),  # DESIGN §2: relevance x weight
        (0.25, 1.0, 0.5, 0.5),  # decay 0.25 counts as 0.5
        (0.25, 1.0, 0.0, 1.0),  # decay does not count
        (0.1, 0.4, 0.0, 0.4),  # what a person set keeps counting whole
        (0.1, 0.4, 0.5, 0.2),
        (0.3, None, 0.0, 0.3),  # no base known: the weight as it is
        (0.9, 0.5, 0.0, 0.5),  # a weight above its base (never written so) is no gain
    ],
)
def test_only_the_decay_share_of_a_weight_is_softened(
    weight: float, base: float | None, exponent: float, expected: float
) -> None:
    assert ranking.ranked_weight(weight, base, exponent) == pytest.approx(expected)


def test_an_unfolded_member_gets_its_base_back_but_keeps_its_decay() -> None:
    from datetime import UTC, datetime

    # Member of a 300-turn memory (too big to stand in): base 0.5 (member weight), decayed to 0.125.
    row = RecallEpisode(
        7, "t7", (), "s", "text", datetime(2024, 1, 1, tzinfo=UTC), "user", 0.125, False, 300, None, 0.5
    )
    candidate = recall_hits.Candidate(("episode", 7), fused=1.0)
    for exponent, expected in ((1.0, 0.25), (0.5, 0.5), (0.0, 1.0)):
        tuning = recall.RecallTuning(stand_in_max=12, member_weight=0.5, decay_exponent=exponent)
        hit = recall_hits.to_hit(candidate, {7: row}, {}, None, tuning)
        assert hit is not None
        assert hit.explain is not None
        assert hit.explain["weight"] == pytest.approx(expected)


def test_bm25_extend_scores_as_if_the_terms_had_been_added_at_once() -> None:
    whole, extended = lexical.BM25(), lexical.BM25()
    for index in (whole, extended):
        index.add("other", lexical.weighted_terms("a shelter dog barked at the puppy"))
    whole.add("doc", {"puppy": 1.0, "toy": 1.0, "shelter": 0.5})
    extended.add("doc", {"puppy": 1.0, "toy": 1.0})
    extended.add("later", lexical.weighted_terms("nothing to see"))
    whole.add("later", lexical.weighted_terms("nothing to see"))
    assert [d for d, _ in extended.search("shelter", 5)] == ["other"]
    assert extended.extend("doc", {"shelter": 0.5, "puppy": 0.0})
    assert not extended.extend("missing", {"shelter": 1.0})
    for query in ("shelter", "puppy toy", "shelter puppy"):
        got, want = extended.search(query, 5), whole.search(query, 5)
        assert [d for d, _ in got] == [d for d, _ in want]
        assert [s for _, s in got] == pytest.approx([s for _, s in want])


def test_named_speaker_is_the_one_person_the_query_names() -> None:
    speakers = ["Caroline", "Melanie", None, "Caroline"]
    assert recall.named_speaker("What did Caroline paint?", speakers) == "Caroline"
    assert recall.named_speaker("What is Caroline's favourite book?", speakers) == "Caroline"
    assert recall.named_speaker("What did Melanie give Caroline?", speakers) is None  # two people
    assert recall.named_speaker("What did she paint?", speakers) is None
    assert recall.named_speaker("Where does John Smith work?", ["John Smith", "Ann Lee"]) == "John Smith"


def test_named_role_is_the_one_side_of_the_conversation_the_query_names() -> None:
    assert recall.named_role("What does the user prefer for deploys?") == "user"
    assert recall.named_role("Which language should snippets use for this user?") == "user"
    assert recall.named_role("What is the user's dog called?") == "user"
    assert recall.named_role("Which base image did the assistant recommend?") == "assistant"
    assert recall.named_role("What did the assistant tell the user about Docker?") is None  # both
    assert recall.named_role("How should the user interface handle errors?") is None  # not a speaker
    assert recall.named_role("Which users asked about Docker?") is None


def test_the_named_role_s_own_turns_get_the_speaker_boost() -> None:
    from datetime import UTC, datetime

    def row(id_: int, role: str) -> RecallEpisode:
        ts = datetime(2024, 1, 1, tzinfo=UTC)
        return RecallEpisode(id_, f"t{id_}", (), "s", "text", ts, "user", 1.0, False, 0, None, role=role)

    tuning = recall.RecallTuning(speaker_boost=1.5)
    rows = {1: row(1, "user"), 2: row(2, "assistant")}

    def score(ref: int, role: str | None) -> float:
        hit = recall_hits.to_hit(
            recall_hits.Candidate(("episode", ref), fused=0.6), rows, {}, None, tuning, None, role
        )
        assert hit is not None
        return hit.score

    assert score(1, "user") == pytest.approx(0.9)
    assert score(2, "user") == pytest.approx(0.6)
    assert score(2, "assistant") == pytest.approx(0.9)
    assert score(1, None) == pytest.approx(0.6)


def test_the_named_speaker_s_own_turns_get_the_speaker_boost() -> None:
    from datetime import UTC, datetime

    def row(id_: int, speaker: str) -> RecallEpisode:
        ts = datetime(2024, 1, 1, tzinfo=UTC)
        return RecallEpisode(id_, f"t{id_}", (), "s", "text", ts, "user", 1.0, False, 0, speaker)

    tuning = recall.RecallTuning(speaker_boost=1.5)
    rows = {1: row(1, "Caroline"), 2: row(2, "Melanie")}
    own = recall_hits.to_hit(
        recall_hits.Candidate(("episode", 1), fused=0.6), rows, {}, None, tuning, "Caroline"
    )
    other = recall_hits.to_hit(
        recall_hits.Candidate(("episode", 2), fused=0.8), rows, {}, None, tuning, "Caroline"
    )
    assert own is not None
    assert other is not None
    assert own.score == pytest.approx(0.9)
    assert other.score == pytest.approx(0.8)
    assert own.explain is not None
    assert own.explain["speaker_boost"] == 1.5
    unnamed = recall_hits.to_hit(
        recall_hits.Candidate(("episode", 1), fused=0.6), rows, {}, None, tuning, None
    )
    assert unnamed is not None
    assert unnamed.score == pytest.approx(0.6)


def test_dense_rescore_takes_cosines_from_the_lexicon_s_vectors_without_reading_the_store() -> None:
    import numpy as np

    e = "episode"

    class Store:
        def embeddings(self, ids: list[int], *, agent_id: str, user_id: str) -> dict[int, np.ndarray]:
            raise AssertionError("the lexicon holds the vectors: no SELECT")

    class Lexicon:
        keep_vectors = True

        def vectors(self, agent_id: str, user_id: str, keys: object) -> dict[tuple[str, int], np.ndarray]:
            held = {(e, 1): [0.6, 0.8], (e, 2): [1.0, 0.0], (e, 3): [0.0, 1.0]}
            return {k: np.asarray(held[k], dtype=np.float32) for k in keys if k in held}  # type: ignore[attr-defined]

    candidates = {
        (e, 1): recall_hits.Candidate((e, 1), dense=0.6, dense_rank=1),
        (e, 2): recall_hits.Candidate((e, 2), lexical=4.0, lexical_rank=150),  # no cosine from the index
        (e, 3): recall_hits.Candidate((e, 3), lexical=5.0, lexical_rank=1),
    }
    query = np.array([1.0, 0.0], dtype=np.float32)
    tuning = recall.RecallTuning()  # the defaults re-score every candidate
    out = recall._rescored_dense(Store(), Lexicon(), query, candidates, "a", "u", tuning)  # type: ignore[arg-type]
    assert [k for k, _ in out] == [(e, 2), (e, 1), (e, 3)]
    assert dict(out)[(e, 2)] == pytest.approx(1.0)  # the lexical candidate's own cosine, not 0
    assert dict(out)[(e, 1)] == pytest.approx(0.6)


def test_dense_rescore_keeps_the_index_cosine_of_a_turn_the_lexicon_holds_no_vector_for() -> None:
    # A memory re-heated from cold storage is in the vector index again before the lexicon has its vector.
    import numpy as np

    e = "episode"

    class Lexicon:
        keep_vectors = True

        def vectors(self, agent_id: str, user_id: str, keys: object) -> dict[tuple[str, int], np.ndarray]:
            return {(e, 2): np.asarray([0.0, 1.0], dtype=np.float32)}

    candidates = {
        (e, 1): recall_hits.Candidate((e, 1), dense=0.56, dense_rank=1),  # re-heated: no held vector
        (e, 2): recall_hits.Candidate((e, 2), dense=0.05, dense_rank=2),
    }
    query = np.array([1.0, 0.0], dtype=np.float32)
    out = recall._rescored_dense(None, Lexicon(), query, candidates, "a", "u", recall.RecallTuning())  # type: ignore[arg-type]
    assert out == [((e, 1), pytest.approx(0.56)), ((e, 2), pytest.approx(0.0))]


def test_bm25_freeze_builds_the_search_arrays_ahead_and_searches_alike() -> None:
    lazy, eager = lexical.BM25(), lexical.BM25()
    texts = [
        "the puppy chased the ball",
        "a shelter dog",
        "the ball was red",
        "puppy training at the shelter",
    ]
    for i, t in enumerate(texts):
        lazy.add(i, lexical.weighted_terms(t))
        eager.add(i, lexical.weighted_terms(t))
    eager.freeze()
    assert eager._stale == set()
    assert not eager._terms["puppi"].pending  # built before any search (stemmed)
    assert eager._terms["puppi"].rows.tolist() == [0, 3]
    assert lazy._terms["puppi"].pending  # not frozen: search merges for itself
    assert eager.search("puppy shelter", 3) == lazy.search("puppy shelter", 3)
    # A later append makes its terms stale again, and the next freeze rebuilds them with the new document.
    for index in (lazy, eager):
        index.add(9, lexical.weighted_terms("shelter shelter shelter"))
    assert "shelter" in eager._stale
    eager.freeze()
    assert eager.search("shelter", 5) == lazy.search("shelter", 5)
    assert eager.search("shelter", 1)[0][0] == 9


def test_a_passage_counts_for_its_turn_at_a_discount_and_each_memory_once() -> None:
    from pipeline.core.ports import IndexHit

    def hit(ref: int, score: float, passage: int | None = None) -> IndexHit:
        payload: dict[str, object] = {"kind": "episode", "ref_id": ref}
        if passage is not None:
            payload["passage"] = passage
        return IndexHit(f"{ref}-{passage}", score, payload)

    # The index returns points best first: a long reply's window at 0.50 and another at 0.48, a short
    # turn's main vector at 0.45, the long reply's main vector at 0.20.
    hits = [hit(1, 0.50, 3), hit(1, 0.48, 7), hit(2, 0.45), hit(1, 0.20)]
    best = recall._best_per_memory(hits, 0.1)
    assert [(key, round(h.score, 6)) for key, h in best] == [(("episode", 2), 0.45), (("episode", 1), 0.4)]
    assert best[1][1].payload["passage"] == 3  # the window that found it, for explain
    # Without a discount the window counts at face value and the reply comes first.
    assert [key for key, _ in recall._best_per_memory(hits, 0.0)] == [("episode", 1), ("episode", 2)]
    # A main vector above its discounted windows speaks for its turn.
    assert recall._best_per_memory([hit(1, 0.5, 2), hit(1, 0.45)], 0.1)[0][1].score == 0.45


def test_bm25_ceiling_bounds_every_score_and_a_full_match_nears_it() -> None:
    index = lexical.build(
        [
            ("full", "kestrel backup bucket kestrel backup bucket kestrel backup bucket"),
            ("part", "the kestrel launch went fine"),
            ("none", "we had soup for dinner"),
        ]
    )
    query = "which bucket does the kestrel backup use"
    ceiling = index.ceiling(query)
    scores = dict(index.search(query, 10))
    assert set(scores) == {"full", "part"}
    assert all(0 < s < ceiling for s in scores.values())
    assert scores["full"] / ceiling > 0.6 > 0.3 > scores["part"] / ceiling
    shares = dict(index.search(query, 10, shares=True))
    assert shares == pytest.approx({doc: s / ceiling for doc, s in scores.items()})
    assert index.ceiling("soup") > 0
    assert index.ceiling("zebra") == 0.0
