"""Writing one benchmark's section of BENCHMARKS.md without touching the others."""

from __future__ import annotations

import os
import platform
from datetime import UTC, datetime
from pathlib import Path

BENCHMARKS = Path("BENCHMARKS.md")
HEADER = (
    "# Benchmarks\n\nFigures written by `hindsight bench …`; each section is replaced by its own command.\n"
)


def machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def write_section(name: str, body: str, path: Path = BENCHMARKS) -> None:
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    block = f"{start}\n{body.rstrip()}\n\n_Measured {stamp} on {machine()}._\n{end}"
    text = path.read_text() if path.exists() else HEADER
    if start in text and end in text:
        before, rest = text.split(start, 1)
        after = rest.split(end, 1)[1]
        text = before + block + after
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    path.write_text(text)
