"""The layout's promise at run time: the product's processes never load the benchmark harness.

`make lint` checks the import graph statically (import-linter, pyproject.toml); this checks what a real
process actually imports, lazy imports included, for each entry point a role starts from.
"""

import subprocess
import sys

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
