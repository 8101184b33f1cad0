"""`bench updates`' judges over a ranked list: an update pair's newer statement first, and a look-alike pair's
asked-about statement kept above the later look-alike (no false currency)."""

from __future__ import annotations

from bench.updates import Pair, judge, kept_first


def _pair(label: str) -> Pair:
    return Pair(
        pair_id="c-p01",
        conversation="c",
        split="test",
        label=label,
        lang="en",
        shape="long_request",
        kind="plan",
        rule_table=False,
        old=frozenset({"o"}),
        new=frozenset({"n"}),
        question="How many hours do I sleep?",
        evidence=frozenset({"o"}),
    )


def _ranked(*ids: str) -> list[tuple[tuple[str, ...], str]]:
    return [((i,), i) for i in ids]


def test_a_look_alike_above_the_asked_about_statement_is_a_false_currency() -> None:
    look = _pair("lookalike")
    assert kept_first(_ranked("x", "o", "n"), look) == 1
    assert kept_first(_ranked("o"), look) == 1  # the look-alike not returned at all
    assert kept_first(_ranked("n", "o"), look) == 0
    assert kept_first(_ranked("n", "x"), look) == 0  # the asked-about statement lost
    assert kept_first(_ranked(), look) == 0


def test_an_update_pair_wants_the_newer_statement_first() -> None:
    update = _pair("update")
    assert judge(_ranked("n", "o"), update).current_first == 1
    assert judge(_ranked("n", "o"), update).top1 == 1
    assert judge(_ranked("x", "o", "n"), update).current_first == 0
    assert judge(_ranked("x", "n", "o"), update).top1 == 0
