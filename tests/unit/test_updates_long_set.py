"""The long-request set (bench/sets/updates_long.py, issue 46): the stored file is a fresh generation, at
least 30% of it Chinese or mixed, the halves share no attribute, the requests are long, and each update
pair's wanted statement states the value its label says, inside a request about something else."""

from __future__ import annotations

import gzip
import json

from bench.sets.updates_long import PATH, generate


def test_the_stored_set_is_a_fresh_generation() -> None:
    assert json.loads(gzip.decompress(PATH.read_bytes())) == generate()


def test_shape_of_the_set() -> None:
    convs = generate()
    assert sum(c["lang"] != "en" for c in convs) / len(convs) >= 0.3
    attrs = {
        split: {p["attribute"] for c in convs if c["split"] == split for p in c["pairs"]}
        for split in ("dev", "test")
    }
    assert attrs["dev"]
    assert attrs["test"]
    assert not attrs["dev"] & attrs["test"]
    for c in convs:
        by = {t["turn_id"]: t for t in c["turns"]}
        for p in c["pairs"]:
            if p["label"] != "update":
                continue
            wanted = by[p["new_turns"][0]]["content"]
            value = p["current_value"]
            assert value in wanted
            size = len(wanted.split()) if wanted.isascii() else len(wanted) / 1.6
            assert size >= 120, wanted
        assert any(p.get("asks") == "previous" for conv in convs for p in conv["pairs"])
