"""Fixtures shared by the unit, contract and integration suites."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.adapters.embedder import resolve_model_path
from pipeline.adapters.onnx_export import ensure_exported


@pytest.fixture(scope="session")
def onnx_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A model cache holding the fp32 and int8 ONNX exports of the packaged model, made once per run
    (~30 s) by the real exporter; tests that need a fresh export make their own."""
    cache = tmp_path_factory.mktemp("onnx-cache")
    model_dir = resolve_model_path("all-MiniLM-L6-v2")
    ensure_exported(model_dir, cache, "int8")  # exports fp32 on the way
    return cache
