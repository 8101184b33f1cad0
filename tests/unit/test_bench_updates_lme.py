"""`hindsight bench updates --longmemeval` (issue 46): which knowledge-update questions each half holds, which
evidence is the wanted statement, and how a ranking is judged."""

from __future__ import annotations

from typing import Any

from bench import updates_lme
from bench.locomo_data import parse
from bench.longmemeval import to_locomo


def _question(qid: str, *, qtype: str = "knowledge-update", evidence: bool = True) -> dict[str, Any]:
    return {
        "question_id": qid,
        "question_type": qtype,
        "question": "How many plants do I have?",
        "question_date": "2023/06/30 (Fri) 10:00",
        "answer": 14,
        "answer_session_ids": ["old", "new"],
        "haystack_session_ids": ["old", "new"],
        "haystack_dates": ["2023/05/01 (Mon) 10:00", "2023/06/01 (Thu) 10:00"],
        "haystack_sessions": [
            [
                {"role": "user", "content": "I have 9 plants in my flat.", "has_answer": evidence},
                {"role": "assistant", "content": "Nine plants is a lot of watering."},
            ],
            [
                {
                    "role": "user",
                    "content": "So now I have fourteen plants in total.",
                    "has_answer": evidence,
                },
                {"role": "assistant", "content": "Fourteen, nice."},
            ],
        ],
    }


def test_halves_alternate_by_question_id_and_only_knowledge_updates_with_turn_evidence_count() -> None:
    qs = [_question(f"q{i}") for i in (3, 0, 2, 1)]
    qs += [_question("other-type", qtype="multi-session"), _question("no-evidence", evidence=False)]
    chosen = updates_lme.select(qs, None)
    assert [(s, q["question_id"]) for s, q in chosen] == [
        ("dev", "q0"),
        ("dev", "q2"),
        ("test", "q1"),
        ("test", "q3"),
    ]
    assert [q["question_id"] for _, q in updates_lme.select(qs, 1)] == ["q0", "q1"]


def test_the_wanted_statement_is_the_session_that_says_the_answer_even_in_words() -> None:
    q = _question("q0")
    turns, [question] = parse([to_locomo("test", q)])
    item = updates_lme.item_of("test", q, turns, question)
    assert item is not None
    by_id = {t.turn_id: t.text for t in turns}
    # "fourteen" is read as 14, the answer: the newer session is wanted, the older is the other.
    assert [by_id[i] for i in item.wanted] == ["So now I have fourteen plants in total."]
    assert [by_id[i] for i in item.other] == ["I have 9 plants in my flat."]


def test_wanted_first_top_1_and_found_are_judged_on_the_first_hit_holding_each() -> None:
    item = updates_lme.Item("q", "test", "?", "14", frozenset({"new"}), frozenset({"old"}))

    def tally(*ids: str) -> tuple[int, int, int, int]:
        t = updates_lme.judge([((i,), i) for i in ids], item)
        return (t.n, t.first, t.top1, t.found)

    assert tally("new", "old") == (1, 1, 1, 1)
    assert tally("x", "new", "old") == (1, 1, 0, 1)
    assert tally("old", "new") == (1, 0, 0, 1)
    assert tally("x", "new") == (1, 1, 0, 1)  # the other statement not found at all
    assert tally("old", "x") == (1, 0, 0, 0)


def test_every_row_the_bench_scores_has_its_figures() -> None:
    rows = [
        "BM25 alone (floor)",
        "simple hybrid (floor)",
        "naive: later look-alike first (floor)",
        "simple hybrid + question-conditioned order (offline)",
        "simple hybrid + question-conditioned order, wanted first of all (offline)",
        "product without value_order",
        "**product**",
    ]
    result = updates_lme.LmeResult(rows={name: {"test": updates_lme.Tally(4, 3, 1, 4)} for name in rows})
    figures = updates_lme.figures(result)
    assert len(figures) == 2 * len(rows)
    assert figures["lme_product_no_order_test_first"] == 0.75
    assert figures["lme_product_test_top1"] == 0.25
    assert updates_lme.report_lines(result)[-1].startswith("| **product** | test | 4 | 0.750 | 0.250 |")
