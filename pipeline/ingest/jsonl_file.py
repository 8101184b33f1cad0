"""Reading a JSONL file of turns (DESIGN §3): validate each line, report bad ones by number, push the rest."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.core.errors import InvalidTurn
from pipeline.ingest.validation import parse_event, utcnow

# How a caller shows progress: given the number of lines to read, a context (open while they are read and
# pushed) that yields what to call after each line. The CLI's is a rich bar (pipeline/cli/ingest_progress.py).
LineProgress = Callable[[int], AbstractContextManager[Callable[[], None]]]


@contextmanager
def no_progress(total: int) -> Iterator[Callable[[], None]]:
    """Shows nothing."""
    yield lambda: None


@dataclass
class IngestResult:
    pushed: int = 0
    turn_ids: list[str] = field(default_factory=list)
    rejected: list[tuple[int, str]] = field(default_factory=list)  # (line number, reason)


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    """(line number, item, None) for a good line, (line number, None, reason) for a bad one."""
    now = utcnow()
    with path.open("rb") as fh:
        for line_no, raw in enumerate(fh, start=1):
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
                parse_event(item, now=now)
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
    """
    result = IngestResult()
    total = sum(1 for line in path.open("rb") if line.strip())
    pending: list[dict[str, Any]] = []
    pending_bytes = 2  # the brackets

    def flush() -> None:
        nonlocal pending_bytes
        if pending:
            post(pending)
            result.pushed += len(pending)
            result.turn_ids.extend(i["turn_id"] for i in pending if i.get("kind", "turn") == "turn")
            pending.clear()
            pending_bytes = 2

    with progress(total) as advance:
        for line_no, item, reason in read_jsonl(path):
            if item is None:
                result.rejected.append((line_no, reason or "invalid"))
            else:
                size = request_bytes(item) if max_bytes is not None else 0
                if max_bytes is not None and pending and pending_bytes + size > max_bytes:
                    flush()
                pending.append(item)
                pending_bytes += size
                if len(pending) >= chunk:
                    flush()
            advance()
        flush()
    return result
