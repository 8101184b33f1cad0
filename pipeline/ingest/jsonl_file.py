"""Reading a JSONL file of turns (DESIGN §3): validate each line, report bad ones by number, push the rest."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from pipeline.core.errors import Forbidden, InvalidTurn
from pipeline.ingest.validation import RepeatedTurnIds, parse_event, utcnow

# How a caller shows progress: given the number of lines to read, a context (open while they are read and
# pushed) that yields what to call after each line. The CLI's is a rich bar (pipeline/cli/ingest_progress.py).
LineProgress = Callable[[int], AbstractContextManager[Callable[[], None]]]


@contextmanager
def no_progress(total: int) -> Iterator[Callable[[], None]]:
    """Shows nothing."""
    yield lambda: None


# The longest line read: a line holds one turn of at most 256 KiB (1.5 MiB if every character is a control
# character JSON escapes in 6 bytes), and a request body is at most the API's limit (4 MiB by default),
# so no longer line could be pushed. Reading stops there, so a 100 MB line costs 4 MiB, not 100 MB.
MAX_LINE_BYTES = 4 * 1024 * 1024
_BOM = b"\xef\xbb\xbf"  # a UTF-8 byte order mark some editors put before the first line


@dataclass
class IngestResult:
    pushed: int = 0
    turn_ids: list[str] = field(default_factory=list)
    # (agent_id, user_id, turn_id) of each pushed turn: a turn id is unique only within its scope.
    turns: list[tuple[str, str, str]] = field(default_factory=list)
    rejected: list[tuple[int, str]] = field(default_factory=list)  # (line number, reason)

    @property
    def scopes(self) -> list[tuple[str, str]]:
        """The (agent_id, user_id) scopes of the pushed turns, in order of first appearance."""
        return list(dict.fromkeys((a, u) for a, u, _ in self.turns))


def _lines(fh: BinaryIO, cap: int) -> Iterator[bytes | None]:
    """Each line of `fh` (its newline included), or None for one longer than `cap` bytes, whose rest is
    skipped `cap` bytes at a time: memory stays bounded whatever the file holds."""
    while line := fh.readline(cap + 1):
        if len(line) <= cap or line.endswith(b"\n"):
            yield line
            continue
        while line and not line.endswith(b"\n"):
            line = fh.readline(cap)
        yield None


def count_lines(path: Path, max_line_bytes: int = MAX_LINE_BYTES) -> int:
    """The lines read_jsonl will report on: the non-blank ones, too-long ones included."""
    with path.open("rb") as fh:
        return sum(
            1
            for line_no, line in enumerate(_lines(fh, max_line_bytes), start=1)
            if line is None or (line.removeprefix(_BOM) if line_no == 1 else line).strip()
        )


def read_jsonl(
    path: Path, *, max_line_bytes: int = MAX_LINE_BYTES
) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    """(line number, item, None) for a good line, (line number, None, reason) for a bad one.

    A turn id that an earlier line used for a different turn of the same scope is a bad line: the store
    would keep only the first of the two."""
    now = utcnow()
    repeats = RepeatedTurnIds()
    with path.open("rb") as fh:
        for line_no, raw in enumerate(_lines(fh, max_line_bytes), start=1):
            if raw is None:
                yield line_no, None, f"line longer than {max_line_bytes} bytes (not read further)"
                continue
            if line_no == 1:
                raw = raw.removeprefix(_BOM)
            if not raw.strip():
                continue
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                yield line_no, None, "not valid UTF-8"
                continue
            try:
                item = json.loads(line)
            except (ValueError, RecursionError) as exc:
                yield line_no, None, f"not valid JSON: {str(exc)[:120]}"
                continue
            if isinstance(item, dict) and item.get("kind", "turn") == "turn" and not item.get("turn_id"):
                # Same file, same ids: ingesting it twice stores each turn once.
                item["turn_id"] = "jsonl-" + hashlib.sha256(f"{line_no}:{line}".encode()).hexdigest()[:24]
            try:
                repeats.check(parse_event(item, now=now), f"line {line_no}")
            except InvalidTurn as exc:
                yield line_no, None, exc.reason
                continue
            yield line_no, item, None


def request_bytes(item: dict[str, Any]) -> int:
    """What `item` adds to a JSON array body as httpx encodes it (compact, UTF-8), its comma included."""
    encoded = json.dumps(item, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return len(encoded.encode("utf-8", "surrogatepass")) + 1


def ingest_file(
    path: Path,
    *,
    post: Callable[[list[dict[str, Any]]], Any],
    chunk: int,
    max_bytes: int | None = None,
    progress: LineProgress = no_progress,
) -> IngestResult:
    """Push the file's good lines, `chunk` at a time, through `post`; the bad ones are reported by number.

    With `max_bytes` (the API's request-body limit) a request also ends before its body would pass it:
    500 turns of up to 256 KiB each would otherwise be refused whole with a 413.

    `post` raises Forbidden or InvalidTurn when the API refuses a request, which it does whole (one line
    for an agent the key may not write refuses them all): the lines of a refused request are then pushed
    one by one, so each good one goes in and each refused one is reported with its number and reason.
    """
    result = IngestResult()
    max_line = max_bytes or MAX_LINE_BYTES
    total = count_lines(path, max_line)
    pending: list[tuple[int, dict[str, Any]]] = []
    pending_bytes = 2  # the brackets

    def flush() -> None:
        nonlocal pending_bytes
        _push(pending, post, result)
        pending.clear()
        pending_bytes = 2

    with progress(total) as advance:
        for line_no, item, reason in read_jsonl(path, max_line_bytes=max_line):
            if item is None:
                result.rejected.append((line_no, reason or "invalid"))
            else:
                size = request_bytes(item) if max_bytes is not None else 0
                if max_bytes is not None and pending and pending_bytes + size > max_bytes:
                    flush()
                pending.append((line_no, item))
                pending_bytes += size
                if len(pending) >= chunk:
                    flush()
            advance()
        flush()
    result.rejected.sort()  # a refused request's lines are reported after later bad lines were read
    return result


def _push(
    lines: list[tuple[int, dict[str, Any]]], post: Callable[[list[dict[str, Any]]], Any], result: IngestResult
) -> None:
    """Post `lines` as one request; if the API refuses it, each line alone (see ingest_file)."""
    if not lines:
        return
    try:
        post([item for _, item in lines])
    except (Forbidden, InvalidTurn) as exc:
        if len(lines) == 1:
            result.rejected.append((lines[0][0], _reason(exc)))
        else:
            for line in lines:
                _push([line], post, result)
        return
    result.pushed += len(lines)
    for _, item in lines:
        if item.get("kind", "turn") == "turn":
            result.turn_ids.append(item["turn_id"])
            result.turns.append((item["agent_id"], item["user_id"], item["turn_id"]))


def _reason(exc: Exception) -> str:
    return exc.reason if isinstance(exc, InvalidTurn) else str(exc)
