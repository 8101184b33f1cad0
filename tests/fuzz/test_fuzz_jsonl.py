"""Fuzzing the JSONL reader behind `hindsight ingest`: every non-blank line is pushed or reported with its own
line number and a reason; nothing crashes, nothing is dropped silently."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.core.errors import InvalidTurn
from pipeline.ingest.jsonl_file import count_lines, ingest_file, read_jsonl
from pipeline.ingest.validation import parse_event
from tests.fuzz.strategies import EXAMPLES, FUZZ_TIMEOUT_S, NOW, json_values, turn_fields

pytestmark = [pytest.mark.fuzz, pytest.mark.timeout(FUZZ_TIMEOUT_S)]


def _encode(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode("utf-8", "surrogatepass")


raw_lines = st.one_of(
    turn_fields().map(_encode),
    turn_fields().map(lambda f: json.dumps(f).encode()),  # \\u escapes, lone surrogates included
    json_values.map(_encode),
    st.binary(max_size=60).filter(lambda b: b"\n" not in b),
    st.sampled_from(
        [
            b"{",
            b'{"content": "\xff\xfe"}',
            b"\xef\xbb\xbf{}",
            b"\xef\xbb\xbf",
            b"[" * 5000 + b"]" * 5000,
            b'{"a": ' + b"9" * 5000 + b"}",
            b"NaN",
            b'{"kind": "session_end", "agent_id": "a", "user_id": "u", "session_id": "s"}',
            b"\x00",
            b"   ",
            b"",
        ]
    ),
)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(raw_lines, min_size=1, max_size=5))
def test_every_line_is_pushed_or_reported_by_number(lines: list[bytes]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "turns.jsonl"
        path.write_bytes(b"\n".join(lines) + b"\n")
        # read_jsonl is the whole decision; ingest_file only batches its output (checked below, once:
        # its progress bar costs ~20 ms per file, which 10,000 cases cannot afford).
        outcomes = list(read_jsonl(path))
        assert count_lines(path) == len(outcomes), "the progress total disagrees with the lines reported"

    # A byte order mark before the first line is an encoding mark, not content: a line holding only it is blank.
    physical = b"\n".join(lines).removeprefix(b"\xef\xbb\xbf").split(b"\n")
    numbered = [n for n, raw in enumerate(physical, start=1) if raw.strip()]
    assert [n for n, _, _ in outcomes] == numbered, "a line was dropped silently or reported twice"
    for _n, item, reason in outcomes:
        assert (item is None) != (reason is None)
        if item is None:
            assert reason
            continue
        # What is pushed validates again (the API checks it once more) and carries its turn id.
        event = parse_event(item, now=NOW)
        if item.get("kind", "turn") == "turn":
            assert item["turn_id"] == getattr(event, "turn_id", None)


def test_a_rejection_names_the_line_and_the_field(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    good = json.dumps({"agent_id": "a", "user_id": "u", "session_id": "s", "role": "user", "content": "hi"})
    lines = [good.encode(), b"\xff", good.replace('"user"', '"root"', 1).encode(), b"[[[", b"", good.encode()]
    path.write_bytes(b"\n".join(lines))
    posted: list[dict[str, Any]] = []
    result = ingest_file(path, post=posted.extend, chunk=1)
    assert len(posted) == result.pushed == 2
    assert len(result.turn_ids) == 2
    assert [n for n, _ in result.rejected] == [2, 3, 4]
    reasons = dict(result.rejected)
    assert reasons[2] == "not valid UTF-8"
    assert reasons[3].startswith("role: must be one of")
    assert reasons[4].startswith("not valid JSON")
    with pytest.raises(InvalidTurn):
        parse_event({"agent_id": "a"}, now=NOW)
