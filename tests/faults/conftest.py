"""Fault-suite fixtures: private servers under the test's tmp dir, torn down whatever happened."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.faults.stack import Servers, Stack


@pytest.fixture
def servers() -> Iterator[Servers]:
    # Not under tmp_path: every pytest session resets /tmp/pytest-of-<user> to 0700, and as root the
    # embedded PostgreSQL runs as another account that must traverse to its data directory.
    root = Path(tempfile.mkdtemp(prefix="hindsight-faults-"))
    s = Servers(root)
    try:
        s.start()
        yield s
    finally:
        s.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def stack(servers: Servers, tmp_path: Path) -> Iterator[Stack]:
    st = Stack(servers, tmp_path)
    try:
        yield st
    finally:
        st.stop_all()
        if st._engine is not None:
            st._engine.dispose()
