"""The supervisor stops every role it started, whether or not STOP_ORDER names it (issue 44, failure 9)."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from pipeline.runtime.supervisor import STOP_ORDER, Child, Supervisor, stop_order
from tests.helpers import wait_until


def test_the_stop_order_holds_every_role_once_known_ones_in_their_order() -> None:
    roles = ["worker", "brand-new", "api", "mcp", "other", "scheduler"]
    order = stop_order(roles)
    assert sorted(order) == sorted(roles)
    assert order[:4] == [r for r in STOP_ORDER if r in roles]
    assert order[4:] == ["other", "brand-new"]  # the unknown ones, last started first


def test_stop_ends_roles_the_stop_order_does_not_name(tmp_path: Path) -> None:
    sleeper = [sys.executable, "-c", "import time; time.sleep(120)"]
    children = [Child(role, sleeper, {}, tmp_path / f"{role}.log") for role in ("api", "mcp", "not-listed")]
    supervisor = Supervisor(children)
    thread = threading.Thread(target=supervisor.run, daemon=True)
    thread.start()
    wait_until(lambda: all(c.alive() for c in children), timeout=10, what="the roles to start")
    supervisor.stop(timeout_s=5)
    thread.join(5)
    assert {c.role: c.alive() for c in children} == {"api": False, "mcp": False, "not-listed": False}
