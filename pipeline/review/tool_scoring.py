"""How a tool call is scored: on its own dimensions, not the conversational ones (issue 30).

A call record is kept whatever it scores: it is evidence for the tool insights of its group (a timeout
with no message carries no "information density" but counts all the same). The score is its importance:
what it tells the agent about its tools. Pure.
"""

from __future__ import annotations

import re
from typing import Any

from pipeline.core.tool_calls import ToolCall

# An error or timeout teaches something; a success is the expected case.
OUTCOME = {"ok": 1.0, "error": 0.5, "timeout": 0.3}
LATENCY_HALF_S = 2.0  # a call this slow scores 0.5 on latency; 0 ms scores 1
ERROR_WORDS_FULL = 6  # distinct words an error message needs to count as fully informative
WEIGHTS = {"outcome": 0.5, "latency": 0.2, "error_info": 0.3}
_WORD = re.compile(r"[^\W_]+")


def error_information(call: ToolCall) -> float:
    """How much a failed call's error says, in [0, 1]: 1 for a success (nothing to explain), 0 for a
    failure without a message, rising with the distinct words of the message ("HTTP 429 rate limited,
    retry after 30 s" says what to do; "error" does not)."""
    if call.ok:
        return 1.0
    if call.error is None:
        return 0.0
    words = {w.lower() for w in _WORD.findall(call.error)}
    return min(1.0, len(words) / ERROR_WORDS_FULL)


def latency_score(latency_ms: float | None) -> float:
    """1 / (1 + s / LATENCY_HALF_S) for a latency of s seconds; 0.5 when the call did not say."""
    if latency_ms is None:
        return 0.5
    return 1.0 / (1.0 + latency_ms / 1000.0 / LATENCY_HALF_S)


def score_call(call: ToolCall, *, trust: float) -> dict[str, Any]:
    """The quality record of a call (episodes.quality): its three dimensions, their weighted mean times
    the source's trust as `total`, and why it was kept."""
    dims = {
        "outcome": OUTCOME.get(call.status, 0.0),
        "latency": latency_score(call.latency_ms),
        "error_info": error_information(call),
    }
    weighted = sum(WEIGHTS[k] * v for k, v in dims.items()) / sum(WEIGHTS.values())
    return {
        **{k: round(v, 4) for k, v in dims.items()},
        "trust": trust,
        "total": round(weighted * trust, 4),
        "why": "tool_call",
    }
