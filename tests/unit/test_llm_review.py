"""The review's LLM port over the real OpenAI-compatible client and the local stub server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pipeline.adapters.llm import InMemoryBudget, OpenAICompatibleClient
from pipeline.adapters.llm_review import ClientReviewLLM
from pipeline.core.config import LLMSettings
from tests.llm_stub import Reply, StubLLM


@pytest.fixture
def stub() -> Iterator[StubLLM]:
    with StubLLM() as server:
        yield server


def _llm(stub: StubLLM) -> ClientReviewLLM:
    settings = LLMSettings(base_url=stub.url, timeout_s=1.0, max_retries=0)
    return ClientReviewLLM(
        OpenAICompatibleClient(settings, InMemoryBudget(100, 100_000), sleep=lambda _s: None)
    )


def test_a_cluster_summary_comes_from_the_llm(stub: StubLLM) -> None:
    stub.good({"summary": "  The user   prefers short, direct answers. "})
    stats: dict[str, int] = {}
    text = _llm(stub).summarise(["Keep it short.", "Too wordy.", "Just the point."], stats)
    assert text == "The user prefers short, direct answers."
    assert stats["llm_calls"] == 1
    # The texts go to the model as data, with the instructions from the design.
    sent = str(stub.requests[0]["messages"])
    assert "Too wordy." in sent
    assert "50 words" in sent


@pytest.mark.parametrize(
    "reply",
    [
        Reply.raw("not json at all"),
        Reply.good({"summary": ""}),
        Reply.good({"summary": "x" * 5000}),
        Reply.error(500),
    ],
    ids=["malformed", "empty", "too-long", "server-error"],
)
def test_a_bad_or_failed_summary_falls_back_to_none(stub: StubLLM, reply: Reply) -> None:
    stub.script(reply)
    stats: dict[str, int] = {}
    assert _llm(stub).summarise(["a", "b", "c"], stats) is None
    assert stats["llm_failures"] == 1
    assert stats["llm_fallbacks"] == 1
