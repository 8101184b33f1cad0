"""Ctrl-C on `hindsight up` stops every role it started, the MCP server included (issue 44, failure 9)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from tests.e2e.test_up import UpProcess
from tests.e2e.test_up import up as up  # the fixture, shared
from tests.helpers import free_port, wait_until

pytestmark = pytest.mark.e2e


def _children(pid: int) -> set[int]:
    """The processes whose parent is `pid` (the roles `up` started), read from /proc."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name (field 2) may hold spaces: the parent pid is the 2nd field after its ')'.
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.add(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone in every way that matters (it holds no port), but `up` reaps its children.
    return "Z" not in (Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0])


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_ctrl_c_stops_every_role_and_frees_the_mcp_port(up: UpProcess) -> None:
    mcp_port = free_port()
    up.env["HINDSIGHT_MCP_PORT"] = str(mcp_port)
    up.start()
    wait_until(lambda: _listening(mcp_port), timeout=60, what="the MCP server to listen")
    assert up.process is not None
    roles = _children(up.process.pid)
    # scheduler, worker, beat, api, flower and mcp (the embedded servers are children too)
    assert len(roles) >= 6, roles

    assert up.interrupt() == 0, up.output()[-4000:]

    assert [pid for pid in roles if _alive(pid)] == []
    assert not _listening(mcp_port)
    with socket.socket() as s:  # the next `up` can bind it
        s.bind(("127.0.0.1", mcp_port))
