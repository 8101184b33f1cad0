"""The layout's promise at run time: the product's processes never load the benchmark harness.

`make lint` checks the import graph statically (import-linter, pyproject.toml); this checks what a real
process actually imports, lazy imports included, for each entry point a role starts from. And no runtime
module (pipeline/, tasks/, scheduler/) reaches 600 lines.
"""

import subprocess
import sys
from pathlib import Path

import pytest

ENTRY_POINTS = [
    "pipeline.cli.main",
    "pipeline.api.app",
    "pipeline.mcp.server",
    "tasks.review",
    "scheduler.runner",
]


@pytest.mark.parametrize("module", ENTRY_POINTS)
def test_an_entry_point_loads_no_bench_module(module: str) -> None:
    probe = (
        f"import sys, {module}\n"
        "print(','.join(sorted(m for m in sys.modules if m == 'bench' or m.startswith('bench.'))))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def test_the_cli_help_loads_no_bench_module() -> None:
    probe = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from pipeline.cli.main import app\n"
        "result = CliRunner().invoke(app, ['--help'])\n"
        "assert result.exit_code == 0, result.output\n"
        "print(','.join(sorted(m for m in sys.modules if m == 'bench' or m.startswith('bench.'))))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


RUNTIME_PACKAGES = ("pipeline", "tasks", "scheduler")
MAX_MODULE_LINES = 600


def test_every_runtime_module_is_under_600_lines() -> None:
    """A module that outgrows this is split by what its parts hold (pipeline/cli/bench_*.py, review/injection_*.py)."""
    root = Path(__file__).resolve().parents[2]
    too_long = {
        str(path.relative_to(root)): lines
        for package in RUNTIME_PACKAGES
        for path in sorted((root / package).rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) >= MAX_MODULE_LINES
    }
    assert not too_long, f"modules of {MAX_MODULE_LINES} lines or more: {too_long}"
