"""recall.hybrid.lexical_query: "the user" names the scope's user, so it is no lexical search term (issue 27)."""

from __future__ import annotations

from collections import Counter

from pipeline.recall.hybrid import lexical_query
from pipeline.recall.lexical import BM25, tokens


def test_the_user_leaves_the_lexical_query_other_uses_of_user_stay() -> None:
    assert "user" not in tokens(lexical_query("Where does the user live?"))
    assert "user" not in tokens(lexical_query("What is the user's job?"))
    assert tokens(lexical_query("user interviews?")) == tokens("user interviews?")
    assert tokens(lexical_query("What do users want?")) == tokens("What do users want?")
    assert lexical_query("the user") == "the user"  # nothing else to search for


def test_a_turn_about_software_users_no_longer_outranks_where_the_user_lives() -> None:
    index = BM25()
    turns = {
        "pm": "I'm a product manager, mostly roadmaps and user interviews.",
        "move": "I now live in Shanghai, close to the river.",
        "old": "I live in Hangzhou, near West Lake.",
        "dog": "My dog is called Biscuit.",
    }
    for key, text in turns.items():
        index.add(key, dict(Counter(tokens(text))))
    query = "Where does the user live?"
    assert index.search(query, 1)[0][0] == "pm"  # what the plain query finds
    assert index.search(lexical_query(query), 1)[0][0] in {"move", "old"}
