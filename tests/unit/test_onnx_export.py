"""The ONNX export cache: idempotent, one export when several workers start at once, never a partial
file under the final name; and a bad backend setting is a ConfigError."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from pipeline.adapters import onnx_export
from pipeline.adapters.embedder import make_embedder, resolve_model_path
from pipeline.adapters.onnx_export import ensure_exported, exported_path, fingerprint
from pipeline.core.config import Settings
from pipeline.core.errors import ConfigError


@pytest.fixture
def model_dir(tmp_path: Path) -> Path:
    d = tmp_path / "model"
    d.mkdir()
    (d / "model.safetensors").write_bytes(b"weights v1")
    (d / "config.json").write_text("{}")
    return d


def _forbid(*_: object) -> None:
    raise AssertionError("exported again")


def test_a_second_call_reuses_the_real_export(onnx_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = resolve_model_path("all-MiniLM-L6-v2")
    int8 = exported_path(model, onnx_cache, "int8")
    fp32 = exported_path(model, onnx_cache, "fp32")
    before = {p: p.stat().st_mtime_ns for p in (int8, fp32)}
    monkeypatch.setattr(onnx_export, "export_fp32", _forbid)
    monkeypatch.setattr(onnx_export, "quantise_int8", _forbid)
    assert ensure_exported(model, onnx_cache, "int8") == int8
    assert ensure_exported(model, onnx_cache, "fp32") == fp32
    assert {p: p.stat().st_mtime_ns for p in (int8, fp32)} == before
    assert int8.stat().st_size < fp32.stat().st_size  # int8 weights really are smaller
    assert not list(int8.parent.glob("*.tmp"))


def test_workers_starting_together_export_once(
    model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Path] = []

    def slow_export(_model: Path, out: Path) -> None:
        calls.append(out)
        out.write_bytes(b"half")
        time.sleep(0.3)  # long enough that every other thread arrives while this one writes
        out.write_bytes(b"onnx model")

    monkeypatch.setattr(onnx_export, "export_fp32", slow_export)
    cache = tmp_path / "cache"
    results: list[Path] = []
    threads = [
        threading.Thread(target=lambda: results.append(ensure_exported(model_dir, cache, "fp32")))
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(calls) == 1
    assert len(set(results)) == 1
    assert len(results) == 4
    assert results[0].read_bytes() == b"onnx model"
    assert results[0].stat().st_mode & 0o777 == 0o644
    assert not list(results[0].parent.glob("*.tmp"))


def test_a_failed_export_leaves_no_file_and_is_retried(
    model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(_model: Path, out: Path) -> None:
        out.write_bytes(b"trunc")
        raise RuntimeError("killed mid-export")

    monkeypatch.setattr(onnx_export, "export_fp32", broken)
    cache = tmp_path / "cache"
    with pytest.raises(RuntimeError, match="mid-export"):
        ensure_exported(model_dir, cache, "fp32")
    target = exported_path(model_dir, cache, "fp32")
    assert not target.exists()
    assert not list(target.parent.glob("*.tmp"))

    monkeypatch.setattr(onnx_export, "export_fp32", lambda _m, out: out.write_bytes(b"ok"))
    assert ensure_exported(model_dir, cache, "fp32").read_bytes() == b"ok"


def test_new_weights_get_a_new_cache_entry(model_dir: Path) -> None:
    before = fingerprint(model_dir)
    (model_dir / "model.safetensors").write_bytes(b"weights v2")
    assert fingerprint(model_dir) != before
    assert fingerprint(model_dir) == fingerprint(model_dir)


@pytest.mark.parametrize("bad", ["tensorflow", "ONNX-fp16", "", "torch "])
def test_an_unknown_backend_is_a_config_error(bad: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if bad.strip().lower() == "torch":  # surrounding blanks and case are forgiven, the name is not
        assert Settings(embedding={"backend": bad}).embedding.backend == "torch"  # type: ignore[arg-type]
        return
    with pytest.raises(ConfigError, match="unknown embedding backend") as info:
        Settings(embedding={"backend": bad})  # type: ignore[arg-type]
    assert "torch, onnx, onnx-int8" in str(info.value)
    monkeypatch.setenv("HINDSIGHT_EMBEDDING__BACKEND", bad)
    with pytest.raises(ConfigError, match="HINDSIGHT_EMBEDDING__BACKEND"):
        Settings()


def test_a_corrupt_cached_model_is_a_config_error(tmp_path: Path) -> None:
    model = resolve_model_path("all-MiniLM-L6-v2")
    target = exported_path(model, tmp_path, "fp32")
    target.parent.mkdir(parents=True)
    target.write_bytes(b"not an onnx file")
    embedder = make_embedder(Settings(embedding={"backend": "onnx", "cache_dir": tmp_path}))  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="cannot load ONNX model"):
        embedder.warm_up()


def test_the_cache_is_the_users_shared_by_every_data_dir_unless_configured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    shared = tmp_path / "xdg" / "hindsight" / "models"
    assert Settings(data_dir=tmp_path / "one").embedding_cache_dir == shared
    assert Settings(data_dir=tmp_path / "two").embedding_cache_dir == shared
    assert shared.is_dir()
    other = tmp_path / "elsewhere"
    settings = Settings(data_dir=tmp_path, embedding={"cache_dir": other})  # type: ignore[arg-type]
    assert settings.embedding_cache_dir == other


def test_without_a_writable_home_the_cache_falls_back_to_data_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would go")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert Settings(data_dir=tmp_path / "data").embedding_cache_dir == tmp_path / "data" / "models"


def test_the_default_backend_is_onnx_fp32() -> None:
    assert Settings().embedding.backend == "onnx"


def test_an_unwritable_cache_is_a_config_error_naming_the_setting(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would go")
    model = resolve_model_path("all-MiniLM-L6-v2")
    with pytest.raises(ConfigError, match="HINDSIGHT_EMBEDDING__CACHE_DIR") as info:
        ensure_exported(model, blocker / "models", "fp32")
    assert str(blocker) in str(info.value)


def test_export_configured_exports_the_configured_backends_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipeline.adapters.embedding_export import export_configured
    from pipeline.core.config import get_settings

    monkeypatch.setenv("HINDSIGHT_EMBEDDING__CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("HINDSIGHT_EMBEDDING__BACKEND", "torch")
    get_settings.cache_clear()
    try:
        assert export_configured() is None
        monkeypatch.setenv("HINDSIGHT_EMBEDDING__BACKEND", "onnx")
        get_settings.cache_clear()
        path = export_configured()
    finally:
        get_settings.cache_clear()
    model = resolve_model_path("all-MiniLM-L6-v2")
    assert path == exported_path(model, tmp_path, "fp32")
    assert path is not None
    assert path.stat().st_size > 0
