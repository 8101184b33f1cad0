"""Shared test helpers. Integration fixtures live in tests/integration/conftest.py."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable
from typing import TypeVar

# Nothing in the tests may reach for a model hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

T = TypeVar("T")


def wait_until(
    predicate: Callable[[], T], *, timeout: float, interval: float = 0.1, what: str = "condition"
) -> T:
    """Poll `predicate` until it returns something truthy; fail the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last: T = predicate()
    while not last:
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}; last value: {last!r}")
        time.sleep(interval)
        last = predicate()
    return last


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# One preference said four ways (they should become one semantic memory), and turns unrelated to it and to
# each other (they should stay apart).
PARAPHRASES = [
    "I don't like long answers.",
    "Please keep it short.",
    "Your replies are too wordy.",
    "Just get to the point.",
]
UNRELATED = [
    "I'm flying to Kyoto on the 14th of April.",
    "My dentist appointment moved to Tuesday at 3pm.",
    "Our cat is called Miso and she is twelve.",
    "I bought tickets for a jazz concert at the Blue Note.",
    "How do I deduct home office costs from my taxes?",
    "The lasagne recipe needs 500 grams of ricotta.",
]
