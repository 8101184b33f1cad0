"""The short agent-chat set (bench/sets/updates_agents.py, issue 46): the stored file is a fresh build, each
pair's turns are where its label says (the wanted statement listed as "new": the newer for the present, the
older for a previous question and for a look-alike), and the halves share no scenario."""

from __future__ import annotations

import gzip
import json

from bench.sets.updates_agents import DEV, PATH, TEST, build


def test_the_stored_set_is_a_fresh_build() -> None:
    assert json.loads(gzip.decompress(PATH.read_bytes())) == build()


def test_every_pair_points_at_the_statement_it_wants() -> None:
    assert not DEV.keys() & TEST.keys()
    convs = build()
    assert {c["split"] for c in convs} == {"dev", "test"}
    kinds = set()
    for c in convs:
        by = {t["turn_id"]: t for t in c["turns"]}
        first, later = (
            c["turns"][0]["turn_id"],
            next(t["turn_id"] for t in c["turns"] if "-s3-" in t["turn_id"]),
        )
        for p in c["pairs"]:
            kinds.add((p["label"], p.get("asks")))
            assert all(by[t]["role"] in ("user", "assistant") for t in [*p["old_turns"], *p["new_turns"]])
            wanted, other = p["new_turns"][0], p["old_turns"][0]
            if p["label"] == "update" and p["asks"] == "current":
                assert (wanted, other) == (later, first)
            else:  # a previous question, or a look-alike: the older statement is the one that answers
                assert wanted == first if p["label"] == "update" else p["evidence"] == [first]
    assert kinds == {("update", "current"), ("update", "previous"), ("lookalike", None)}
