"""pipeline.cli.terminal: what the CLI prints of stored text is shown, never obeyed as Rich markup or as
terminal controls (issue 29: `[/bold]` crashed `recall`, `[link=...]` became a live link, escapes reached
the terminal raw)."""

from __future__ import annotations

import io
import re

import pytest
from rich.table import Table

from pipeline.cli.terminal import SafeConsole, plain, safe

HOSTILE = (
    "notes in [/bold] and [link=http://evil.example/phish]a page[/link] :thumbs_up: "
    "\x1b[2J\x1b]0;pwned-title\x07\x1b]8;;http://evil.example/raw\x1b\\raw link\x1b]8;;\x1b\\ \x9b31m\x7f\r end"
)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("clear\x1b[2Jscreen", "clearscreen"),
        ("\x1b]0;a title\x07x", "x"),
        ("\x1b]8;;http://e.example\x1b\\link\x1b]8;;\x1b\\", "link"),
        ("\x1bPq#0;2;0;0;0\x1b\\dcs", "dcs"),
        ("8-bit \x9b31m csi", "8-bit 31m csi"),
        ("bell\x07 back\x08 cr\r del\x7f", "bell back cr del"),
        ("keeps\nlines\tand tabs, 中文, émoji 🙂", "keeps\nlines\tand tabs, 中文, émoji 🙂"),
    ],
)
def test_plain_strips_terminal_controls_and_keeps_text(text: str, shown: str) -> None:
    assert plain(text) == shown


def _console(**kwargs: object) -> tuple[SafeConsole, io.StringIO]:
    buffer = io.StringIO()
    return SafeConsole(file=buffer, force_terminal=True, width=300, **kwargs), buffer  # type: ignore[arg-type]


def _visible(output: str) -> str:
    """Without the colours Rich's highlighter adds itself (SGR sequences only)."""
    return re.sub(r"\x1b\[[0-9;]*m", "", output)


def _assert_shown_not_obeyed(output: str) -> None:
    for control in ("\x1b]8;", "\x1b[2J", "\x1b]0;", "pwned-title", "\x9b", "\x07", "\x7f"):
        assert control not in output, (control, output)
    output = _visible(output)
    assert "[/bold]" in output
    assert "[link=http://evil.example/phish]a page[/link]" in output
    assert ":thumbs_up:" in output  # not an emoji either


def test_a_table_of_stored_text_is_shown_as_text() -> None:
    console, buffer = _console()
    table = Table("id", "text")
    table.add_row("episode:1", HOSTILE)
    console.print(table)  # a plain Console raises MarkupError on the stray [/bold]
    _assert_shown_not_obeyed(buffer.getvalue())


def test_json_and_plain_prints_are_cleaned_too() -> None:
    console, buffer = _console()
    console.print(HOSTILE)
    console.print_json(data={"text": HOSTILE.replace("\x1b", "").replace("\x07", "")})
    output = buffer.getvalue()
    assert "\x9b" not in output
    assert "\x7f" not in output
    assert _visible(output).count("[/bold]") == 2


def test_safe_puts_stored_text_into_a_markup_template() -> None:
    console, buffer = _console()
    console.print(f"[red]error:[/red] {safe(HOSTILE)}", markup=True)
    output = buffer.getvalue()
    _assert_shown_not_obeyed(output)
    assert "\x1b[31merror:" in output  # the template's own markup still works


def test_print_wide_never_cuts_a_value_at_80_columns() -> None:
    console, buffer = _console()
    console = SafeConsole(file=buffer, width=80)
    table = Table("prefix", "agent", "perms", "created", "revoked", "last used", "note")
    stamp = "2026-12-04T02:00:01.418615+00:00"
    table.add_row("fd18c296", "alpha", "-", stamp, "", stamp, "a note")
    console.print_wide(table)
    assert buffer.getvalue().count(stamp) == 2


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("I live in \x1b]RED and blue", "I live in RED and blue"),  # unterminated OSC: only ESC ] goes
        ("I live in \x1b]0;t\x9cRED and blue", "I live in RED and blue"),  # 8-bit ST ends an OSC
        ("I live in \x1b_RED and blue", "I live in RED and blue"),
        ("see \u202egnp.exe and \u2066x\u2069 \u200fy", "see gnp.exe and x y"),  # bidi controls go
    ],
)
def test_only_the_sequence_goes_and_the_text_stays(text: str, shown: str) -> None:
    assert plain(text) == shown
