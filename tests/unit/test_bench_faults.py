"""The fault scenarios write BENCHMARKS.md only when run as `hindsight bench faults`."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from bench import faults
from pipeline.core.errors import ConfigError
from tests.faults.stack import WRITE_ENV, record


def test_a_test_run_prints_but_only_the_benchmark_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "BENCHMARKS.md"
    monkeypatch.delenv(WRITE_ENV, raising=False)
    record("faults", "recovered in 3 s", target)
    assert not target.exists()
    monkeypatch.setenv(WRITE_ENV, "1")
    record("faults", "recovered in 3 s", target)
    assert "<!-- bench:faults -->\nrecovered in 3 s" in target.read_text()


def test_the_bench_and_the_scenarios_agree_on_the_switch() -> None:
    assert faults.WRITE_ENV == WRITE_ENV


def test_without_the_scenarios_the_bench_says_where_it_looked(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(faults, "SUITE", tmp_path / "missing")
    with pytest.raises(ConfigError, match="repository checkout"):
        faults.run_faults_bench(write=False, console=Console(file=None))


def test_a_failing_selection_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    suite = tmp_path / "faults"
    suite.mkdir()
    (suite / "test_one.py").write_text("def test_breaks():\n    assert 1 == 2\n")
    monkeypatch.setattr(faults, "SUITE", suite)
    with pytest.raises(ConfigError, match="pytest exit 1"):
        faults.run_faults_bench(write=False, console=Console(quiet=True))
