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
CHART_TAG = "<!-- chart -->"  # ends a chart's image line, so the next run replaces it instead of adding one


def machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def _markers(name: str) -> tuple[str, str]:
    return f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"


def write_section(name: str, body: str, path: Path = BENCHMARKS, *, top: bool = False) -> None:
    """Replace the section `name`; a new one goes at the end, or right under the header with `top`."""
    start, end = _markers(name)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    block = f"{start}\n{body.rstrip()}\n\n_Measured {stamp} on {machine()}._\n{end}"
    text = path.read_text() if path.exists() else HEADER
    if start in text and end in text:
        before, rest = text.split(start, 1)
        after = rest.split(end, 1)[1]
        text = before + block + after
    elif top:
        first = text.find("<!-- bench:")
        if first < 0:
            text = text.rstrip() + "\n\n" + block + "\n"
        else:
            text = text[:first] + block + "\n\n" + text[first:]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    path.write_text(text)


def link_chart(name: str, image: str, alt: str, path: Path = BENCHMARKS) -> bool:
    """Show the chart `image` (a path relative to BENCHMARKS.md) under the first heading of section `name`,
    in place of the chart linked there before. False when the file or the section does not exist."""
    start, end = _markers(name)
    text = path.read_text() if path.exists() else ""
    if start not in text or end not in text:
        return False
    before, rest = text.split(start, 1)
    inside, after = rest.split(end, 1)
    lines: list[str] = []
    for line in inside.split("\n"):
        if line.endswith(CHART_TAG):
            if lines and not lines[-1]:
                lines.pop()  # the blank line that came with it
            continue
        lines.append(line)
    heading = next((i for i, line in enumerate(lines) if line.startswith("#")), 0)
    lines[heading + 1 : heading + 1] = ["", f"![{alt}]({image}) {CHART_TAG}"]
    path.write_text(before + start + "\n".join(lines) + end + after)
    return True
