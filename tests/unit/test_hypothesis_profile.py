"""CI draws the same property-test examples on every run, a local run new ones (issue 44: `make test` on a
fresh clone failed once on an example no earlier run had drawn). The profile is loaded by tests/conftest.py
from HINDSIGHT_HYPOTHESIS_PROFILE, which .ci/run sets."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import PROFILE_ENV, hypothesis_profile

ROOT = Path(__file__).resolve().parents[2]
# A property test as the suites write them (module-level settings with their own max_examples), run by a
# fresh interpreter that loads the suites' conftest first, as pytest does; it prints what it was given.
DRAWS = """
import tests.conftest  # noqa: F401  (loads the profile, as pytest does before any test module)
from hypothesis import HealthCheck, given, settings, strategies as st

seen = []
OWN = settings(max_examples=25, suppress_health_check=list(HealthCheck))

@OWN
@given(st.text(max_size=20), st.integers())
def prop(s, i):
    seen.append((s, i))

prop()
print(OWN.derandomize, repr(seen))
"""


def _draws(profile: str | None, tmp: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k not in (PROFILE_ENV, "CI")}
    if profile is not None:
        env[PROFILE_ENV] = profile
    out = subprocess.run(
        [sys.executable, "-c", DRAWS],
        cwd=tmp,
        env=env | {"PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_ci_draws_the_same_examples_every_run_and_a_local_run_explores(tmp_path: Path) -> None:
    first, second = _draws("ci", tmp_path), _draws("ci", tmp_path)
    assert first.startswith("True"), first
    assert first == second
    local = [_draws(None, tmp_path) for _ in range(2)]
    assert local[0].startswith("False"), local[0]
    assert local[0] != local[1]  # random exploration: 25 texts and integers drawn alike twice is no chance


def test_the_profile_is_chosen_by_the_environment_and_ci_sets_it() -> None:
    assert hypothesis_profile({}) == "dev"
    assert hypothesis_profile({"CI": "true"}) == "ci"
    assert hypothesis_profile({"CI": "false"}) == "dev"
    assert hypothesis_profile({PROFILE_ENV: "dev", "CI": "1"}) == "dev"
    assert hypothesis_profile({PROFILE_ENV: "ci"}) == "ci"
    assert "export HINDSIGHT_HYPOTHESIS_PROFILE=ci" in (ROOT / ".ci" / "run").read_text().splitlines()


def test_an_unknown_profile_name_is_an_error_not_a_silent_default(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="InvalidArgument"):
        _draws("cii", tmp_path)
