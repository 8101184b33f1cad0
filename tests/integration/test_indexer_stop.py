"""The indexer's stop() ends its wait for a NOTIFY at once, not at the end of a poll slice (every API shutdown
waited for it), and leaves no descriptor of its wake-up pipe behind."""

from __future__ import annotations

import os
import time

import pytest

from pipeline.adapters.fakes import InMemoryVectorIndex
from pipeline.adapters.indexer import Indexer
from pipeline.adapters.postgres.engine import libpq_dsn
from pipeline.adapters.postgres.repository import Repository
from tests.helpers import wait_until
from tests.integration.harness import DB_URL

pytestmark = pytest.mark.integration


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_stop_ends_the_wait_at_once_and_closes_the_wake_up_pipe(clean: None, repo: Repository) -> None:
    before = _open_fds()
    stopping = 0.0
    for _ in range(5):  # each a new indexer, as each API process (and each test stack) has its own
        indexer = Indexer(repo, InMemoryVectorIndex(8), dsn=libpq_dsn(DB_URL), poll_s=30.0, batch=100)
        indexer.start()
        # Waiting for a NOTIFY (the outbox is empty): the thread sits in select, with its poll a minute off.
        wait_until(lambda ix=indexer: ix._wake is not None, timeout=10, interval=0.01, what="the wait")
        time.sleep(0.2)
        t0 = time.monotonic()
        indexer.stop()
        stopping += time.monotonic() - t0
        assert indexer.thread is not None
        assert not indexer.thread.is_alive()
    # Ending at the next 0.5 s poll slice instead, five stops take ~1.25 s (each 0-0.5 s).
    assert stopping < 0.6, f"5 stops took {stopping:.2f} s"
    indexer.stop()  # a second stop after the run ended writes nowhere
    assert _open_fds() <= before
