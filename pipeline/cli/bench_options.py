"""What the `hindsight bench` commands share: the console they print to and the options several of them take."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pipeline.cli.support import fail
from pipeline.cli.terminal import SafeConsole
from pipeline.core.config import EMBEDDING_BACKENDS

# The benches colour their own reports with markup; what they print is still stripped of terminal controls.
out = SafeConsole(markup=True)

# Options every bench that reads LoCoMo or writes BENCHMARKS.md shares.
LocomoData = Annotated[Path | None, typer.Option(help="LoCoMo locomo10.json (read in place)")]
WriteBenchmarks = Annotated[bool, typer.Option("--write/--no-write", help="update BENCHMARKS.md")]


def checked_backend(value: str | None) -> str | None:
    """An --embedding-backend value, or exit naming the known backends."""
    if value is not None and value not in EMBEDDING_BACKENDS:
        fail(f"unknown embedding backend {value!r}; choose from {', '.join(EMBEDDING_BACKENDS)}")
    return value
