"""`hindsight ingest`'s progress bar: pipeline.ingest.jsonl_file reads, validates and pushes the file, and
shows progress through the callback this module gives it (the domain imports no display library)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from pipeline.ingest import jsonl_file
from pipeline.ingest.jsonl_file import IngestResult, LineProgress


def progress_bar(console: Console) -> LineProgress:
    """A transient bar on `console`: `ingest`, the bar, lines done of all, time remaining."""

    @contextmanager
    def bar(total: int) -> Iterator[Callable[[], None]]:
        columns = (TextColumn("ingest"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
        with Progress(*columns, console=console, transient=True) as progress:
            task = progress.add_task("ingest", total=total)
            yield lambda: progress.advance(task)

    return bar


def ingest_file(
    path: Path,
    *,
    post: Callable[[list[dict[str, Any]]], Any],
    chunk: int,
    max_bytes: int | None = None,
    console: Console,
) -> IngestResult:
    """pipeline.ingest.jsonl_file.ingest_file with the progress bar on `console`."""
    return jsonl_file.ingest_file(
        path, post=post, chunk=chunk, max_bytes=max_bytes, progress=progress_bar(console)
    )
