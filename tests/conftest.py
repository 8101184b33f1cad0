"""Fixtures shared by the unit, contract and integration suites."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import settings

from pipeline.adapters.embedder import resolve_model_path
from pipeline.adapters.onnx_export import ensure_exported

# Property tests (issue 44): CI must be reproducible, a local run should keep exploring. "ci" derives every
# example from the test itself (derandomize) and reads no example database, so a red CI run is red again on
# any checkout; "dev" draws new examples each run and replays the failures it saved in .hypothesis/. Each
# test's own @settings (max_examples, deadline, health checks) is built on top of the profile loaded here:
# this conftest is imported before any test module, so their settings objects inherit it.
PROFILE_ENV = "HINDSIGHT_HYPOTHESIS_PROFILE"
settings.register_profile("ci", derandomize=True, database=None, print_blob=True, deadline=None)
settings.register_profile("dev", derandomize=False)


def hypothesis_profile(environ: Mapping[str, str]) -> str:
    """The profile to load: HINDSIGHT_HYPOTHESIS_PROFILE when set (.ci/run sets "ci"), else "ci" under a CI
    service (which sets CI), else "dev"."""
    chosen = environ.get(PROFILE_ENV, "").strip()
    if chosen:
        return chosen
    return "ci" if environ.get("CI", "").strip().lower() not in ("", "0", "false", "no") else "dev"


settings.load_profile(hypothesis_profile(os.environ))  # an unknown name raises: a typo is not a silent "dev"


@pytest.fixture(scope="session")
def onnx_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A model cache holding the fp32 and int8 ONNX exports of the packaged model, made once per run
    (~30 s) by the real exporter; tests that need a fresh export make their own."""
    cache = tmp_path_factory.mktemp("onnx-cache")
    model_dir = resolve_model_path("all-MiniLM-L6-v2")
    ensure_exported(model_dir, cache, "int8")  # exports fp32 on the way
    return cache
