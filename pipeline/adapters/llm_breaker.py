"""A circuit breaker in front of the optional LLM, so a dead or hanging endpoint costs one timeout, not one per turn.

Without it a review asks the LLM about every user turn and every band-scored episode; with the endpoint
hanging, each ask waits `timeout_s` times (1 + max_retries) before the rules take over, and one batch of a
few hundred turns stalls for hours (found by the fault suite). After `failures` consecutive unavailable
answers the breaker opens: calls fail at once (the callers fall back to rules) for `cooldown_s` seconds,
then one call probes the endpoint again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

from pydantic import BaseModel

from pipeline.adapters.llm import LLMUnavailable
from pipeline.core.logging import get_logger
from pipeline.review.llm_tasks import JSONCompleter

log = get_logger(__name__)
M = TypeVar("M", bound=BaseModel)


class CircuitOpen(LLMUnavailable):
    """The LLM failed repeatedly just now; not asked again until the cooldown ends."""


class BreakerCompleter:
    """Wraps a JSONCompleter. `cooldown_s` is in seconds of `clock` (monotonic by default)."""

    def __init__(
        self,
        client: JSONCompleter,
        *,
        failures: int = 3,
        cooldown_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.failures = failures
        self.cooldown_s = cooldown_s
        self.clock = clock
        self._consecutive = 0
        self._open_until: float | None = None
        self._lock = threading.Lock()

    @property
    def is_open(self) -> bool:
        with self._lock:
            return self._open_until is not None and self.clock() < self._open_until

    def complete_json(self, system: str, user: str, schema: type[M], *, max_tokens: int = 400) -> M:
        with self._lock:
            if self._open_until is not None and self.clock() < self._open_until:
                raise CircuitOpen(f"LLM circuit open for {self._open_until - self.clock():.0f} more s")
        try:
            answer = self.client.complete_json(system, user, schema, max_tokens=max_tokens)
        except LLMUnavailable:
            with self._lock:
                self._consecutive += 1
                if self._consecutive >= self.failures:
                    # Also after a failed probe: a half-open breaker that fails opens again.
                    self._open_until = self.clock() + self.cooldown_s
                    log.warning("llm.circuit_open", failures=self._consecutive, cooldown_s=self.cooldown_s)
            raise
        with self._lock:
            if self._open_until is not None:
                log.info("llm.circuit_closed")
            self._consecutive = 0
            self._open_until = None
        return answer
