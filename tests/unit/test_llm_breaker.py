"""pipeline.adapters.llm_breaker: a dead LLM endpoint is asked a few times, then skipped until the cooldown ends."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from pipeline.adapters.llm import LLMBadAnswer, LLMUnavailable
from pipeline.adapters.llm_breaker import BreakerCompleter, CircuitOpen


class Answer(BaseModel):
    ok: bool = True


class Endpoint:
    """A scripted completer: raises what `failing` says, counts the calls that reached it."""

    def __init__(self) -> None:
        self.calls = 0
        self.failing: Exception | None = None

    def complete_json(self, system: str, user: str, schema: type[Answer], *, max_tokens: int = 400) -> Answer:
        self.calls += 1
        if self.failing is not None:
            raise self.failing
        return schema()


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def ask(breaker: BreakerCompleter) -> Answer:
    return breaker.complete_json("s", "u", Answer)


def test_opens_after_consecutive_failures_and_skips_the_endpoint() -> None:
    # Regression (fault suite, LLM hanging): every turn waited timeout x retries, stalling reviews for hours.
    endpoint, clock = Endpoint(), Clock()
    breaker = BreakerCompleter(endpoint, failures=3, cooldown_s=60, clock=clock)
    endpoint.failing = LLMUnavailable("timed out")
    for _ in range(3):
        with pytest.raises(LLMUnavailable):
            ask(breaker)
    assert breaker.is_open
    for _ in range(50):
        with pytest.raises(CircuitOpen):
            ask(breaker)
    assert endpoint.calls == 3


def test_probes_after_the_cooldown_and_closes_on_success() -> None:
    endpoint, clock = Endpoint(), Clock()
    breaker = BreakerCompleter(endpoint, failures=2, cooldown_s=60, clock=clock)
    endpoint.failing = LLMUnavailable("500")
    for _ in range(2):
        with pytest.raises(LLMUnavailable):
            ask(breaker)
    clock.t += 59.9
    with pytest.raises(CircuitOpen):
        ask(breaker)
    clock.t += 0.2
    endpoint.failing = None
    assert ask(breaker).ok
    assert not breaker.is_open
    assert endpoint.calls == 3


def test_a_failed_probe_opens_again_at_once() -> None:
    endpoint, clock = Endpoint(), Clock()
    breaker = BreakerCompleter(endpoint, failures=2, cooldown_s=10, clock=clock)
    endpoint.failing = LLMUnavailable("hang")
    for _ in range(2):
        with pytest.raises(LLMUnavailable):
            ask(breaker)
    clock.t += 11
    with pytest.raises(LLMUnavailable):
        ask(breaker)  # the probe reaches the endpoint and fails
    with pytest.raises(CircuitOpen):
        ask(breaker)
    assert endpoint.calls == 3


def test_bad_answers_and_successes_do_not_open_it() -> None:
    endpoint, clock = Endpoint(), Clock()
    breaker = BreakerCompleter(endpoint, failures=2, cooldown_s=10, clock=clock)
    endpoint.failing = LLMBadAnswer("not json")  # the endpoint is up; the answer was bad
    for _ in range(5):
        with pytest.raises(LLMBadAnswer):
            ask(breaker)
    endpoint.failing = LLMUnavailable("once")
    with pytest.raises(LLMUnavailable):
        ask(breaker)
    endpoint.failing = None
    ask(breaker)
    endpoint.failing = LLMUnavailable("once more")
    with pytest.raises(LLMUnavailable):
        ask(breaker)
    assert not breaker.is_open
