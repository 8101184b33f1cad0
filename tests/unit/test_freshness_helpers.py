"""The freshness bench's pure parts: the turns it writes, its schedule, its percentiles, and what it reads in a
recall response (bench/freshness.py)."""

from __future__ import annotations

import math

import pytest

from bench import freshness as fr
from pipeline.core.config import Settings
from pipeline.recall.lexical import tokens


def test_phrases_are_deterministic_and_no_two_share_their_three_words() -> None:
    a, b = fr.phrases(3000, seed=5), fr.phrases(3000, seed=5)
    assert a == b
    assert fr.phrases(50, seed=6) != fr.phrases(50, seed=5)
    assert len({frozenset(p.words) for p in a}) == 3000
    assert len({p.content for p in a}) == 3000
    assert fr.phrases(10, seed=5) == a[:10]  # a shorter run writes the same first turns


def test_each_phrase_holds_its_query_words_and_the_query_is_those_words_only() -> None:
    for p in fr.phrases(200):
        assert len(set(p.words)) == 3
        assert p.query.split() == list(p.words)
        own = set(tokens(p.content))
        assert set(tokens(p.query)) <= own, p
        assert "{" not in p.content
        assert "}" not in p.content
    assert (fr._article("apricot"), fr._article("banjo")) == ("an apricot", "a banjo")


def test_every_rare_word_is_one_search_term_of_its_own() -> None:
    stems = [tokens(w) for w in fr.WORDS]
    assert all(len(t) == 1 for t in stems), [w for w, t in zip(fr.WORDS, stems, strict=True) if len(t) != 1]
    assert len({t[0] for t in stems}) == len(fr.WORDS)  # no two words share a stem
    template_terms = {
        t for tpl in fr.TEMPLATES for t in tokens(tpl.format(a="", b="", c="", A="", B="", C=""))
    }
    assert not template_terms & {t[0] for t in stems}  # a query word never matches a template word


def test_the_write_side_screen_passes_every_phrase() -> None:
    # A turn the screen holds back is not recallable before its review: it would count as a miss.
    from pipeline.review import injection
    from tasks.deps import review_config_for

    screen = review_config_for(Settings()).screening
    decisions = {
        injection.decide(injection.assess(p.content, role="user", source="user"), screen)
        for p in fr.phrases(2000)
    }
    assert decisions == {"clean"}


def test_too_many_phrases_is_refused_rather_than_looping() -> None:
    with pytest.raises(ValueError, match="distinct phrases"):
        fr.phrases(math.comb(len(fr.WORDS), 3))


def test_the_schedule_is_steady_and_goes_round_the_scopes() -> None:
    assert [fr.due_at(i, 100.0) for i in (0, 1, 100, 6000)] == [0.0, 0.01, 1.0, 60.0]
    users = [fr.scope_user(i, 50) for i in range(200)]
    assert len(set(users)) == 50
    assert all(users.count(u) == 4 for u in set(users))
    assert users[0] == users[50] == "u0"
    assert [i for i in range(20) if fr.is_sampled(i, 5)] == [0, 5, 10, 15]


def test_percentile_is_nearest_rank_and_a_miss_counts_as_never() -> None:
    assert fr.percentile([3.0, 1.0, 2.0], 0.5) == 2.0
    assert fr.percentile([float(i) for i in range(1, 101)], 0.95) == 95.0
    assert fr.percentile([1.0, 2.0], 1.0) == 2.0
    assert math.isnan(fr.percentile([], 0.95))
    assert math.isinf(fr.percentile([0.1] * 18 + [math.inf] * 2, 0.95))  # 10% never found: p95 is never
    assert fr.percentile([0.1] * 19 + [math.inf], 0.90) == 0.1


def _freshness(*samples: fr.Sample) -> fr.Freshness:
    f = fr.Freshness(100.0, 50, 60.0, 5, 0.1, 30.0)
    f.samples = list(samples)
    return f


def test_freshness_figures_count_misses_and_what_was_found_unreviewed() -> None:
    f = _freshness(
        fr.Sample(0, "t0", "u0", "q", 0.0, any_s=0.5, dense_s=1.5, unreviewed_at_find=True),
        fr.Sample(1, "t1", "u1", "q", 0.0, any_s=1.0, dense_s=None, unreviewed_at_find=False),
        fr.Sample(2, "t2", "u2", "q", 0.0),
    )
    assert (f.found(), f.missed()) == (2, 1)
    assert (f.found(dense=True), f.missed(dense=True)) == (1, 2)
    assert (f.found_unreviewed, f.found_reviewed) == (1, 1)
    assert f.p(0.5) == 1.0
    assert math.isinf(f.p(0.95))
    assert f.p(0.0, dense=True) == 1.5
    assert fr.fmt_s(f.p(0.95)) == "never"
    assert fr.fmt_s(1.234) == "1.23 s"


def test_a_sample_records_each_side_once_with_the_spacing_of_its_last_two_responses() -> None:
    s = fr.Sample(0, "t0", "u0", "q", 10.0)
    s.record(False, False, False, 10.1)
    s.record(True, False, False, 10.3)
    assert not s.done
    assert s.any_s == pytest.approx(0.3)
    assert s.any_gap_s == pytest.approx(0.2)
    assert s.unreviewed_at_find is True
    s.record(True, False, True, 10.8)  # found again, now reviewed: the first find stands
    assert s.any_s == pytest.approx(0.3)
    assert s.unreviewed_at_find is True
    s.record(True, True, True, 11.3)
    assert s.done
    assert (s.dense_s, s.dense_gap_s) == (pytest.approx(1.3), pytest.approx(0.5))
    assert s.polls == 4
    first = fr.Sample(1, "t1", "u0", "q", 5.0)
    first.record(True, True, False, 5.25)  # found by the first poll: known to within the time since the write
    assert (first.any_gap_s, first.dense_gap_s) == (pytest.approx(0.25), pytest.approx(0.25))


def test_resolution_reads_the_gaps_of_the_turns_found() -> None:
    f = _freshness(
        fr.Sample(0, "t0", "u0", "q", 0.0, any_s=1.0, any_gap_s=0.1, dense_s=2.0, dense_gap_s=0.5),
        fr.Sample(1, "t1", "u0", "q", 0.0, any_s=1.0, any_gap_s=0.3),
        fr.Sample(2, "t2", "u0", "q", 0.0),
    )
    assert f.resolution(1.0) == pytest.approx(0.3)
    assert f.resolution(0.5, dense=True) == pytest.approx(0.5)


def test_read_hit_finds_the_turn_in_any_result_and_reads_its_dense_part_and_review_flag() -> None:
    body = {
        "results": [
            {"source_turn_ids": ["other"], "reviewed": True, "explain": {"dense": 0.9, "lexical": 1.0}},
            {"source_turn_ids": ["t0"], "reviewed": False, "explain": {"dense": None, "lexical": 0.7}},
        ]
    }
    assert fr.read_hit(body, "t0") == (True, False, False)
    body["results"][1]["explain"]["dense"] = 0.61
    assert fr.read_hit(body, "t0") == (True, True, False)
    assert fr.read_hit(body, "missing") == (False, False, False)
    merged = {"results": [{"source_turn_ids": ["t9", "t0"], "reviewed": True}]}  # folded into a newer turn
    assert fr.read_hit(merged, "t0") == (True, False, True)
    assert fr.read_hit({"results": []}, "t0") == (False, False, False)


def test_every_names_the_sampled_turns() -> None:
    assert [fr.every(n) for n in (1, 2, 3, 5, 11, 12, 21, 22)] == [
        "Every turn",
        "Every 2nd turn",
        "Every 3rd turn",
        "Every 5th turn",
        "Every 11th turn",
        "Every 12th turn",
        "Every 21st turn",
        "Every 22nd turn",
    ]


def _round(unreviewed: bool, turns: int, elapsed: float, cpu: dict[str, float]) -> fr.Round:
    r = fr.Round(unreviewed, 0, turns, elapsed_s=elapsed)
    r.cpu_s = cpu
    return r


def test_review_ratio_pools_the_rounds_of_each_side() -> None:
    rounds = [
        _round(True, 3000, 30.0, {"worker": 6.0, "indexer": 3.0}),
        _round(False, 3000, 25.0, {"worker": 9.0, "indexer": 0.3}),
        _round(False, 3000, 35.0, {"worker": 9.0, "indexer": 0.3}),
        _round(True, 3000, 30.0, {"worker": 6.0, "indexer": 3.0}),
    ]
    r = fr.FreshnessResult(_freshness(), {"ratio_p50": 1.5}, rounds, 1, 50, 60, True, "onnx")
    assert r.tps(True) == pytest.approx(100.0)
    assert r.tps(False) == pytest.approx(100.0)
    assert r.review_ratio == pytest.approx(1.0)
    assert r.cpu_ms_per_turn(True, "worker") == pytest.approx(2.0)
    assert r.cpu_ms_per_turn(False, "indexer") == pytest.approx(0.1)
    assert r.cpu_ms_per_turn(True) == pytest.approx(3.0)
    assert math.isnan(fr.FreshnessResult(_freshness(), {}, rounds[:1], 1, 50, 60, True, "onnx").review_ratio)


def test_review_turns_are_whole_batches_in_fresh_scopes_of_one_open_session() -> None:
    turns = fr.review_turns(4, 60)
    assert len(turns) == 240
    by_scope: dict[str, int] = {}
    for t in turns:
        by_scope[t.user_id] = by_scope.get(t.user_id, 0) + 1
    assert by_scope == {f"rev-u{j}": 60 for j in range(4)}
    assert {t.session_id for t in turns} == {fr.SESSION}
    assert len({t.turn_id for t in turns}) == 240


def test_by_part_splits_the_samples_by_when_they_were_written() -> None:
    f = fr.Freshness(100.0, 50, 60.0, 10, 0.1, 30.0)
    f.written = 6000
    f.samples = [
        fr.Sample(i, f"t{i}", "u0", "q", 0.0, any_s=i / 1000, dense_s=i / 100) for i in range(0, 6000, 10)
    ]
    parts = f.by_part()
    assert [label for label, _ in parts] == ["0–20 s", "20–40 s", "40–60 s"]
    assert [len(p.samples) for _, p in parts] == [200, 200, 200]
    assert parts[0][1].p(1.0, dense=True) < parts[2][1].p(0.0, dense=True)  # a side falling behind shows
    assert sum(len(p.samples) for _, p in parts) == len(f.samples)


def test_the_suite_runs_it_and_judges_its_four_targets() -> None:
    from bench import suite

    bench = {b.name: b for b in suite.REGISTRY}["freshness"]
    assert not bench.locomo
    assert (bench.database, bench.redis) == (None, None)  # private embedded servers: nothing shared is wiped
    met = bench.headlines(
        {"any_p95_s": 1.2, "dense_p95_s": 4.9, "ingest_ratio_p50": 1.5, "review_ratio": 0.95}
    )
    assert [(h.value, h.target, h.met) for h in met] == [
        ("1.20", "≤ 2 s", True),
        ("4.90", "≤ 5 s", True),
        ("1.50", "≤ 2.0", True),
        ("0.95", "≥ 0.9", True),
    ]
    missed = bench.headlines(
        {"any_p95_s": math.inf, "dense_p95_s": 5.1, "ingest_ratio_p50": 2.1, "review_ratio": 0.89}
    )
    assert [h.met for h in missed] == [False, False, False, False]
    assert missed[0].value == "inf"  # more than 5% of the turns never found


def test_the_write_side_screen_is_measured_on_every_set_present() -> None:
    from bench.freshness import screen_costs

    costs = {c.name: c for c in screen_costs()}
    # The two sets of the repository at least (LoCoMo too where the shared copy lies).
    assert {"assistant_help", "friends_chat"} <= set(costs)
    for c in costs.values():
        assert c.turns > 100  # the restated set is small: 6 users of requests said 3-4 times
        assert c.turns_per_s > 0
        assert 0 <= c.held < c.turns
