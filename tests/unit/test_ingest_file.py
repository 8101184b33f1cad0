"""pipeline.ingest.jsonl_file: a JSONL file of turns, bad lines reported by number, the rest pushed in chunks."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from pipeline.cli import ingest_progress
from pipeline.ingest.jsonl_file import IngestResult, ingest_file, read_jsonl
from pipeline.ingest.validation import MAX_CONTENT_BYTES


def turn(turn_id: str | None = "t1", **overrides: Any) -> dict[str, Any]:
    item: dict[str, Any] = {
        "agent_id": "agent-1",
        "user_id": "user-1",
        "session_id": "sess-1",
        "role": "user",
        "content": "I moved to Lisbon.",
        "ts": "2024-05-01T10:00:00+00:00",
    }
    if turn_id is not None:
        item["turn_id"] = turn_id
    item.update(overrides)
    return item


def end(**overrides: Any) -> dict[str, Any]:
    return {
        "kind": "session_end",
        "agent_id": "agent-1",
        "user_id": "user-1",
        "session_id": "sess-1",
        **overrides,
    }


def write(path: Path, lines: list[bytes | str | dict[str, Any]]) -> Path:
    """Each entry is one line: a dict as JSON, a str as UTF-8 text, bytes as they are."""
    with path.open("wb") as fh:
        for line in lines:
            if isinstance(line, dict):
                line = json.dumps(line)
            if isinstance(line, str):
                line = line.encode("utf-8")
            fh.write(line + b"\n")
    return path


def quiet() -> Console:
    return Console(file=io.StringIO())


# -- read_jsonl --------------------------------------------------------------------------------------


def test_good_and_bad_lines_by_number(tmp_path: Path) -> None:
    path = write(
        tmp_path / "turns.jsonl",
        [
            turn("t1"),  # 1
            "",  # 2 blank
            "   \t",  # 3 blank
            "{not json",  # 4
            json.dumps([turn("t2")]),  # 5 an array, not an object
            b'{"content": "caf\xe9"}',  # 6 Latin-1, not UTF-8
            turn("t3", role="admin"),  # 7
            turn("t4", ts="2024-05-01T10:00:00"),  # 8
            turn("t5", role="assistant"),  # 9
            end(),  # 10
            "42",  # 11
        ],
    )
    rows = list(read_jsonl(path))

    good = [(n, item["turn_id"] if "turn_id" in item else item["kind"]) for n, item, _ in rows if item]
    assert good == [(1, "t1"), (9, "t5"), (10, "session_end")]
    assert all(reason is None for _, item, reason in rows if item)

    bad = {n: reason for n, item, reason in rows if item is None}
    assert set(bad) == {4, 5, 6, 7, 8, 11}
    assert bad[4] is not None
    assert bad[4].startswith("not valid JSON: ")
    assert bad[5] == "entry: must be an object, got list"
    assert bad[6] == "not valid UTF-8"
    assert bad[7] is not None
    assert bad[7].startswith("role: must be one of")
    assert bad[8] is not None
    assert bad[8].startswith("ts: must include a UTC offset")
    assert bad[11] == "entry: must be an object, got int"


def test_a_line_deeper_than_the_json_parser_goes_is_reported(tmp_path: Path) -> None:
    path = write(tmp_path / "deep.jsonl", ["[" * 100_000 + "]" * 100_000, turn("t1")])
    rows = list(read_jsonl(path))
    [(line_no, reason)] = [(n, reason) for n, item, reason in rows if item is None]
    assert line_no == 1
    assert reason is not None
    assert reason.startswith("not valid JSON: ")
    assert len(reason) <= len("not valid JSON: ") + 120
    assert [n for n, item, _ in rows if item] == [2]


def test_good_items_are_returned_as_written(tmp_path: Path) -> None:
    item = turn("t1", metadata={"core": True}, source="external")
    [(line_no, got, reason)] = list(read_jsonl(write(tmp_path / "one.jsonl", [item])))
    assert (line_no, got, reason) == (1, item, None)


def test_missing_turn_id_is_generated_deterministically(tmp_path: Path) -> None:
    path = write(tmp_path / "turns.jsonl", [turn(None), turn(None, content="other"), turn(None)])

    first = [item["turn_id"] for _, item, _ in read_jsonl(path) if item]
    second = [item["turn_id"] for _, item, _ in read_jsonl(path) if item]

    assert first == second
    assert len(first) == 3
    assert all(t.startswith("jsonl-") and len(t) == len("jsonl-") + 24 for t in first)
    # lines 1 and 3 are identical, yet they are two turns
    assert len(set(first)) == 3


def test_empty_turn_id_is_generated_too(tmp_path: Path) -> None:
    [(_, item, reason)] = list(read_jsonl(write(tmp_path / "t.jsonl", [turn("")])))
    assert reason is None
    assert item is not None
    assert item["turn_id"].startswith("jsonl-")


def test_generated_id_depends_on_the_line_not_the_file(tmp_path: Path) -> None:
    a = write(tmp_path / "a.jsonl", [turn(None)])
    b = write(tmp_path / "b.jsonl", [turn(None)])
    [(_, item_a, _)] = list(read_jsonl(a))
    [(_, item_b, _)] = list(read_jsonl(b))
    assert item_a is not None
    assert item_b is not None
    assert item_a["turn_id"] == item_b["turn_id"]


def test_given_turn_id_is_kept(tmp_path: Path) -> None:
    [(_, item, _)] = list(read_jsonl(write(tmp_path / "t.jsonl", [turn("mine")])))
    assert item is not None
    assert item["turn_id"] == "mine"


def test_session_end_gets_no_turn_id(tmp_path: Path) -> None:
    [(_, item, reason)] = list(read_jsonl(write(tmp_path / "t.jsonl", [end()])))
    assert reason is None
    assert item == end()


def test_file_without_trailing_newline(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes((json.dumps(turn("t1")) + "\n" + json.dumps(turn("t2"))).encode())
    assert [(n, item["turn_id"]) for n, item, _ in read_jsonl(path) if item] == [(1, "t1"), (2, "t2")]


# -- ingest_file -------------------------------------------------------------------------------------


class FakePost:
    def __init__(self) -> None:
        self.chunks: list[list[dict[str, Any]]] = []

    def __call__(self, items: list[dict[str, Any]]) -> None:
        self.chunks.append(list(items))  # a copy: the caller reuses its list


def ingest(path: Path, chunk: int) -> tuple[IngestResult, FakePost]:
    post = FakePost()
    return ingest_file(path, post=post, chunk=chunk), post


@pytest.mark.parametrize(
    ("count", "chunk", "sizes"), [(7, 3, [3, 3, 1]), (6, 3, [3, 3]), (2, 10, [2]), (3, 1, [1, 1, 1])]
)
def test_chunks(tmp_path: Path, count: int, chunk: int, sizes: list[int]) -> None:
    path = write(tmp_path / "t.jsonl", [turn(f"t{i}") for i in range(count)])
    result, post = ingest(path, chunk)
    assert [len(c) for c in post.chunks] == sizes
    assert [i["turn_id"] for c in post.chunks for i in c] == [f"t{i}" for i in range(count)]
    assert result.pushed == count
    assert result.turn_ids == [f"t{i}" for i in range(count)]
    assert result.rejected == []


def test_long_turns_end_a_request_before_the_body_limit(tmp_path: Path) -> None:
    """500 turns of 256 KiB would be one 128 MiB request, refused whole by the API's 4 MiB limit."""
    limit = 4 * 1024 * 1024
    big = "x" * MAX_CONTENT_BYTES
    items: list[Any] = [turn(f"t{i}", content=big if i % 3 else "short") for i in range(40)]
    path = write(tmp_path / "t.jsonl", items)
    post = FakePost()

    result = ingest_file(path, post=post, chunk=500, max_bytes=limit)

    assert result.pushed == 40
    assert result.rejected == []
    assert [i["turn_id"] for c in post.chunks for i in c] == [f"t{i}" for i in range(40)]
    sizes = [len(json.dumps(c, ensure_ascii=False, separators=(",", ":")).encode()) for c in post.chunks]
    assert max(sizes) <= limit
    assert len(post.chunks) == 2  # as full as the limit lets them be: 26 long turns, 15 fit in 4 MiB
    # A single turn at the content limit fits however its characters escape (6 bytes per control character).
    escaped = [turn("t1", content="\x01" * MAX_CONTENT_BYTES)]
    assert len(json.dumps(escaped, separators=(",", ":")).encode()) < limit


def test_session_ends_are_pushed_but_are_not_turns(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", [turn("t1"), end(), turn("t2"), end(session_id="sess-2")])
    result, post = ingest(path, 3)
    assert [[i.get("kind", "turn") for i in c] for c in post.chunks] == [
        ["turn", "session_end", "turn"],
        ["session_end"],
    ]
    assert result.pushed == 4
    assert result.turn_ids == ["t1", "t2"]


def test_bad_lines_are_rejected_not_pushed(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", [turn("t1"), "nope", "", turn("t2", content=" "), turn(None)])
    result, post = ingest(path, 100)
    assert len(post.chunks) == 1
    pushed_ids = [i["turn_id"] for i in post.chunks[0]]
    assert pushed_ids[0] == "t1"
    assert pushed_ids[1].startswith("jsonl-")
    assert result.turn_ids == pushed_ids
    assert result.pushed == 2
    assert [n for n, _ in result.rejected] == [2, 4]
    assert result.rejected[0][1].startswith("not valid JSON")
    assert result.rejected[1] == (4, "content: empty")


def test_nothing_to_push(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", ["", "[]"])
    result, post = ingest(path, 5)
    assert post.chunks == []
    assert result.pushed == 0
    assert result.turn_ids == []
    assert result.rejected == [(2, "entry: must be an object, got list")]


def test_ingesting_twice_gives_the_same_ids(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", [turn(None), turn(None, role="assistant")])
    first, _ = ingest(path, 10)
    second, _ = ingest(path, 10)
    assert first.turn_ids == second.turn_ids
    assert len(set(first.turn_ids)) == 2


def test_progress_is_told_the_lines_and_advanced_once_a_line(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", [turn("t1"), "", "nope", turn("t2"), end()])
    seen: list[str] = []

    @contextmanager
    def progress(total: int) -> Iterator[Callable[[], None]]:
        seen.append(f"open {total}")
        yield lambda: seen.append("line")
        seen.append("closed")

    post = FakePost()
    result = ingest_file(path, post=post, chunk=2, progress=progress)
    assert seen == ["open 4", "line", "line", "line", "line", "closed"]
    assert result.pushed == 3


def test_the_cli_shows_a_transient_bar_and_pushes_the_same(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", [turn(f"t{i}") for i in range(5)])
    post = FakePost()
    console = quiet()
    result = ingest_progress.ingest_file(path, post=post, chunk=2, console=console)
    assert [len(c) for c in post.chunks] == [2, 2, 1]
    assert result.turn_ids == [f"t{i}" for i in range(5)]


# -- issue 29: a BOM, an overlong line, a reused id, a refused request --------------------------------


def test_a_utf8_bom_before_line_1_is_not_a_bad_line(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", [b"\xef\xbb\xbf" + json.dumps(turn("t1")).encode(), turn("t2")])
    result, _ = ingest(path, 10)
    assert result.rejected == []
    assert result.turn_ids == ["t1", "t2"]


def test_an_overlong_line_is_refused_by_number_after_reading_at_most_the_cap(tmp_path: Path) -> None:
    import tracemalloc

    huge = json.dumps(turn("big", content="x" * (30 * 1024 * 1024)))  # 30 MB on one line
    path = write(tmp_path / "t.jsonl", [turn("t1"), huge, turn("t3")])
    tracemalloc.start()
    try:
        rows = list(read_jsonl(path, max_line_bytes=64 * 1024))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [(n, item is not None) for n, item, _ in rows] == [(1, True), (2, False), (3, True)]
    assert rows[1][2] == "line longer than 65536 bytes (not read further)"
    assert peak < 4 * 1024 * 1024, peak  # the line was never held whole (it is 30 MB)
    result = ingest_file(path, post=FakePost(), chunk=10, max_bytes=64 * 1024)
    assert result.turn_ids == ["t1", "t3"]
    assert [n for n, _ in result.rejected] == [2]


def test_a_turn_id_reused_for_another_turn_of_the_scope_is_a_bad_line(tmp_path: Path) -> None:
    lines: list[bytes | str | dict[str, Any]] = [
        turn("t1"),
        turn("t1"),  # the same turn again: a retry, fine
        turn("t1", content="something else"),
        turn("t1", agent_id="agent-2", content="another scope's t1"),  # another scope: its own id
    ]
    result, _ = ingest(write(tmp_path / "t.jsonl", lines), 10)
    assert [n for n, _ in result.rejected] == [3]
    assert "turn_id 't1': already used by line 1 for a different turn" in result.rejected[0][1]
    assert result.turns == [("agent-1", "user-1", "t1")] * 2 + [("agent-2", "user-1", "t1")]


class RefusingPost(FakePost):
    """The API's all-or-nothing: a request holding a turn of agent-2 is refused whole (403)."""

    def __call__(self, items: list[dict[str, Any]]) -> None:
        from pipeline.core.errors import Forbidden

        if any(i.get("agent_id") == "agent-2" for i in items):
            raise Forbidden("403 the key may not write the memories of agent 'agent-2'")
        super().__call__(items)


def test_a_refused_request_stores_its_good_lines_and_reports_the_refused_ones(tmp_path: Path) -> None:
    lines: list[bytes | str | dict[str, Any]] = [turn(f"t{i}") for i in range(6)]
    lines.insert(3, turn("foreign", agent_id="agent-2"))
    post = RefusingPost()
    result = ingest_file(write(tmp_path / "t.jsonl", lines), post=post, chunk=500)
    assert result.pushed == 6
    assert [i["turn_id"] for c in post.chunks for i in c] == [f"t{i}" for i in range(6)]
    assert result.rejected == [(4, "403 the key may not write the memories of agent 'agent-2'")]
    assert result.scopes == [("agent-1", "user-1")]
