"""`hindsight up` says whether its API wants keys, as the auth mode and the bind address decide."""

from __future__ import annotations

from pipeline.core.config import AuthSettings, Settings
from pipeline.runtime.up import _auth_line


def test_the_embedded_default_on_loopback_needs_no_key() -> None:
    assert _auth_line(Settings()).startswith("not required: bound to 127.0.0.1")


def test_any_other_bind_or_mode_required_says_how_to_get_a_key() -> None:
    for settings in (Settings(api_host="0.0.0.0"), Settings(auth=AuthSettings(mode="required"))):
        line = _auth_line(settings)
        assert line.startswith("required")
        assert "hindsight keys create" in line
