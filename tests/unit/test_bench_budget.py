"""What an agent pays (issue 40, bench/locomo_data.py): evidence recall within a context budget, and the
first result being one memory that holds a question's evidence."""

from __future__ import annotations

from bench.locomo_data import Recalled, budget_recall, top_memory


def test_context_budget_counts_whole_texts_in_rank_order_and_only_what_a_memory_states() -> None:
    text_of = {"a": "one two three", "b": "four five", "c": "six"}
    ranked = [("a",), ("b",), ("c",)]
    assert budget_recall(ranked, ["c"], 6, text_of) == 1.0
    assert budget_recall(ranked, ["c"], 5, text_of) == 0.0  # "b" does not fit whole: nothing after it counts
    memory = Recalled(("a", "b"), "short text", carries=("a",), semantic=True)
    assert budget_recall([memory], ["a", "b"], 256, text_of) == 0.5  # it does not state b
    assert top_memory([memory], ["a", "b"])
    assert not top_memory([memory], ["a", "c"])
    assert not top_memory([("a", "b")], ["a", "b"])
