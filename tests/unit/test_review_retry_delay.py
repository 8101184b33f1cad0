"""The countdown before a failed review is delivered again (tasks/review.py), from settings.celery."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from pipeline.core.config import Settings
from tasks.review import retry_delay


def test_the_default_backoff_doubles_from_one_second_and_stops_at_ten() -> None:
    c = Settings().celery
    delays = [retry_delay(n, base_s=c.retry_base_s, cap_s=c.retry_max_delay_s) for n in range(8)]
    assert delays == [1, 2, 4, 8, 10, 10, 10, 10]


def test_a_smaller_base_scales_every_step_and_the_cap_still_holds() -> None:
    assert [retry_delay(n, base_s=0.25, cap_s=2) for n in range(5)] == [0.25, 0.5, 1, 2, 2]
    # Far past the exponent's own bound, the delay is still the cap, not an overflow.
    assert retry_delay(10_000, base_s=0.25, cap_s=2) == 2


def test_a_cap_above_the_reconciles_lease_grace_is_refused() -> None:
    # A countdown longer than the grace (15 s) would let the reconcile re-send a review still waiting it out.
    with pytest.raises(ValidationError, match="retry_max_delay_s"):
        Settings(celery={"retry_max_delay_s": 30})  # type: ignore[arg-type]
