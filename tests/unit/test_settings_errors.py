"""A bad setting is one clear line naming the environment variable the user set, not a traceback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pipeline.core.config import get_settings
from pipeline.core.errors import ConfigError


@pytest.fixture(autouse=True)
def fresh_settings() -> Iterator[None]:
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_an_out_of_range_and_an_unparsable_setting_are_both_named_as_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HINDSIGHT_DECAY__PARALLEL", "0")
    monkeypatch.setenv("HINDSIGHT_POLICY__BATCH_SIZE", "thirty")
    with pytest.raises(ConfigError) as caught:
        get_settings()
    message = str(caught.value)
    assert message.startswith("invalid setting: ")
    assert "HINDSIGHT_DECAY__PARALLEL='0': Input should be greater than or equal to 1" in message
    assert "HINDSIGHT_POLICY__BATCH_SIZE='thirty'" in message


def test_valid_settings_still_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HINDSIGHT_DECAY__PARALLEL", "3")
    assert get_settings().decay.parallel == 3
