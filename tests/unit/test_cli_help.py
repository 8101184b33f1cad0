"""Every `hindsight` command explains itself with an example, offers --json where it prints data, and
fails with a one-line reason and a non-zero exit."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from pipeline.cli.main import app
from tests.helpers import free_port

ROOT = typer.main.get_command(app)
# Commands that print data (rather than run a role or a benchmark) must offer --json.
DATA_COMMANDS = {
    "ingest",
    "recall",
    "facts",
    "stats",
    "review",
    "decay",
    "forget",
    "update",
    "reindex",
    "memories",
    "memory",
    "reviews",
    "dead-letters",
}


def _walk(group: Any, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    # Typer ships its own click fork: walk anything that has subcommands.
    found = []
    for name, command in group.commands.items():
        path = (*prefix, name)
        found.append((path, command))
        if getattr(command, "commands", None):
            found += _walk(command, path)
    return found


COMMANDS = _walk(ROOT)


def test_the_walk_found_every_command() -> None:
    names = {" ".join(path) for path, _ in COMMANDS}
    assert {"up", "worker", "recall", "memories", "dead-letters", "bench review"} <= names
    assert names >= DATA_COMMANDS


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_command_has_help_with_an_example(path: tuple[str, ...], command: Any) -> None:
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert command.help, f"{' '.join(path)} has no description"
    assert "Example:" in text
    # The example runs this very command (a group's example runs one of its subcommands).
    assert f"hindsight {' '.join(path)}" in text
    if " ".join(path) in DATA_COMMANDS:
        assert "--json" in text


def test_an_unreachable_api_is_a_one_line_error_and_exit_2() -> None:
    env = {**os.environ, "HINDSIGHT_API_URL": f"http://127.0.0.1:{free_port()}", "COLUMNS": "40"}
    result = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "memories", "--agent", "a", "--user", "u"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr  # one line even on a 40-column terminal
    assert lines[0].startswith("error: cannot reach the API at http://127.0.0.1:")
    assert result.stdout == ""


def test_an_unreachable_database_is_a_one_line_error_and_exit_2() -> None:
    env = {
        **os.environ,
        "HINDSIGHT_DATABASE_URL": f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/nope",
        "HINDSIGHT_LOG_JSON": "true",
    }
    result = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "decay"], capture_output=True, text=True, env=env, timeout=60
    )
    assert result.returncode == 2, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error:")
    assert "PostgreSQL" in last
    assert "Traceback" not in result.stderr
