"""What the CLI prints: stored and user-supplied text is shown as text, never obeyed.

A memory, a dead letter's role, a key's note or an API error may hold anything a caller once wrote. Printed
through Rich as it is, `[/bold]` is read as markup (and crashes the command), `[link=...]` becomes a live
terminal link, and escape sequences clear the screen or retitle the window. So:

- `SafeConsole` is every console the CLI prints on. Markup and emoji codes are off unless a call asks for
  them, and every piece of text it writes (strings, tables, JSON, progress) loses its terminal controls
  on the way out (`plain`). Rich's own control segments (a progress bar's cursor moves) are kept.
- `safe(text)` is for the few places that put text into a markup template on purpose (`[red]error:[/red]
  {safe(message)}`): it escapes the markup as well.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType
from rich.markup import escape
from rich.measure import Measurement
from rich.segment import Segment, Segments
from rich.text import Text

# Whole escape sequences, so that no fragment of one ("]0;title") is left behind as text: CSI (colours,
# cursor, clear screen), OSC (window title, OSC 8 hyperlinks) up to BEL or ST, DCS/SOS/PM/APC strings up
# to ST, and two-character escapes. A string (OSC, DCS, ...) is one only with its terminator and nothing
# but printable characters before it: an unterminated one used to take all the text after it ("I live in
# \x1b]RED and ..." showed "I live in "), so then only its introducer goes and the text stays. Then any
# other C0 control but newline and tab, DEL, and the C1 controls (U+0080-U+009F: 8-bit CSI and OSC, which
# some terminals obey too).
_ST = r"(?:\x07|\x1b\\|\x9c)"
_ESCAPE_SEQUENCE = re.compile(
    rf"""
      \x1b\[[0-?]*[ -/]*[@-~]?
    | \x1b\][^\x00-\x1f\x7f-\x9f]*{_ST}
    | \x1b[PX^_][^\x00-\x1f\x7f-\x9f]*{_ST}
    | \x1b[ -/]*[0-~]?
    """,
    re.VERBOSE,
)
# Bidi controls too (embeddings, overrides, isolates, marks): U+202E shows "gnp.exe" as "exe.png" and
# can make a line read backwards; the text around them stays.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def plain(text: object) -> str:
    """`text` without terminal controls: escape sequences and control characters removed; newlines and
    tabs kept."""
    return _CONTROL.sub("", _ESCAPE_SEQUENCE.sub("", str(text)))


def safe(text: object) -> str:
    """`text` to put inside a Rich markup template: controls removed and markup escaped."""
    return escape(plain(text))


class SafeConsole(Console):
    """A rich Console that never obeys what it prints (see the module docstring)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("markup", False)
        kwargs.setdefault("emoji", False)
        super().__init__(**kwargs)

    def render_str(self, text: str, **kwargs: Any) -> Text:
        # Cleaned before Rich reads it: Rich drops BEL and CR itself, and an OSC that lost its BEL
        # terminator that way would no longer be recognised whole below (its title would show as text).
        return super().render_str(plain(text), **kwargs)

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        # Every print, table cell, JSON document and log line is rendered through here.
        for segment in super().render(renderable, options):
            if segment.control or not _needs_cleaning(segment.text):
                yield segment
            else:
                yield Segment(plain(segment.text), segment.style)

    def print_wide(self, renderable: RenderableType) -> None:
        """Print at the renderable's full width even past the console's (80 columns when not a terminal):
        for tables of values that must not be cut, like timestamps. A narrower terminal wraps the lines
        itself; nothing is cut."""
        needed = Measurement.get(self, self.options.update(max_width=10_000), renderable).maximum
        if needed <= self.width:
            self.print(renderable)
            return
        # print() never renders wider than the console, so render the lines at the needed width here.
        lines = self.render_lines(renderable, self.options.update_width(needed), pad=False)
        segments = [segment for line in lines for segment in (*line, Segment.line())]
        self.print(Segments(segments), crop=False, soft_wrap=True, end="")


def _needs_cleaning(text: str) -> bool:
    return _CONTROL.search(text) is not None
