"""The CLI shows stored text without its terminal controls, and keeps the text (issue 44, CLI concern).

Before: an escape sequence without its terminator took all the text after it ("I live in RED and ..."
showed "I live in RED"), and a bidi override (U+202E) reached the terminal, which then showed the rest of
the line backwards.
"""

from __future__ import annotations

import os
import re

import pytest

from tests.helpers import wait_until
from tests.integration.harness import DB_URL, REDIS_URL, Stack
from tests.integration.live_api import live as live  # the fixture
from tests.pty_cli import run_cli

pytestmark = pytest.mark.integration
CONTENT = "I live in \x1b[31mRED\x1b[0m and \x1b]the blue tiles\x1b_ of zanzibarcity, see \u202egnp.exe"
_RICH_STYLING = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")


def test_recall_shows_the_text_between_and_after_escapes_and_no_bidi_override(live: Stack) -> None:
    live.start_scheduler()
    turn = {
        "turn_id": "esc-1",
        "agent_id": "agent-t",
        "user_id": "ana",
        "session_id": "s1",
        "role": "user",
        "content": CONTENT,
    }
    assert live.api.post("/v1/turns", json=[turn]).status_code == 202
    params = {"q": "zanzibarcity blue tiles", "agent_id": "agent-t", "user_id": "ana"}
    wait_until(
        lambda: "zanzibarcity" in live.api.get("/v1/recall", params=params).text,
        timeout=60,
        what="the turn recallable",
    )
    env = {
        **os.environ,
        "HINDSIGHT_API_URL": live.settings.api_url,
        "HINDSIGHT_DATABASE_URL": DB_URL,
        "HINDSIGHT_REDIS_URL": REDIS_URL,
        "HINDSIGHT_LOG_JSON": "true",
    }
    code, output = run_cli(
        ["recall", "zanzibarcity blue tiles", "--agent", "agent-t", "--user", "ana"], env, columns=400
    )
    assert code == 0, output[-3000:]
    for control in ("\x1b]", "\x1b_", "\u202e"):
        assert control not in output, (control, output[-3000:])
    shown = _RICH_STYLING.sub("", output)
    assert "I live in RED and the blue tiles of zanzibarcity, see gnp.exe" in shown, shown[-3000:]
