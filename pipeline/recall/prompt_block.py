"""The prompt block (issue 30): what an agent should know now, ranked and cut to a token budget, for its
system prompt. Pure: facts and insights in, text out.

Tokens are estimated as ceil(characters / 4), the usual rule of thumb for English with BPE tokenizers
(OpenAI's and Llama's run ~3.5-4.5 characters per token on prose); it needs no tokenizer and errs on the
side of fewer characters for code and non-Latin scripts, which a caller can allow for in its budget.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

CHARS_PER_TOKEN = 4
PREFERENCE = "preference:"
HEADINGS = {
    "facts": "What is true about the user now:",
    "preferences": "The user's preferences:",
    "tools": "What you have learnt about your tools:",
}


def estimate_tokens(text: str) -> int:
    """ceil(len(text) / CHARS_PER_TOKEN): see the module docstring."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass(frozen=True, slots=True)
class PromptBlock:
    text: str
    tokens: int  # estimated, <= the budget
    included: dict[str, int]  # section -> lines included
    left_out: int  # lines that did not fit


def fact_line(fact: Mapping[str, Any]) -> str:
    """ "home city: Lisbon"; a preference reads "likes: jazz"; another entity than the user is named."""
    attribute, value, entity = str(fact["attribute"]), str(fact["value"]), str(fact["entity"])
    if attribute.startswith(PREFERENCE):
        return f"{value}: {attribute[len(PREFERENCE) :]}"
    label = attribute.replace("_", " ")
    return f"{label}: {value}" if entity in ("user", "") else f"{entity} {label}: {value}"


def _by_recency(facts: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return sorted(facts, key=lambda f: str(f["valid_from"]), reverse=True)


def build(
    facts: Sequence[Mapping[str, Any]], insights: Sequence[Mapping[str, Any]], *, budget_tokens: int
) -> PromptBlock:
    """Current facts (newest first), then preferences, then tool insights (in the order given: the
    caller ranks them), each section under its heading, line by line while the estimate stays within
    `budget_tokens`. Only current values come in: `facts` are open chain versions. A line that does not fit
    is left out and shorter ones after it may still go in."""
    sections = {
        "facts": [fact_line(f) for f in _by_recency([f for f in facts if not _preference(f)])],
        "preferences": [fact_line(f) for f in _by_recency([f for f in facts if _preference(f)])],
        "tools": [str(i["text"]) for i in insights],
    }
    lines: list[str] = []
    used = 0
    included = {name: 0 for name in sections}
    left_out = 0
    for name, items in sections.items():
        heading = HEADINGS[name]
        for item in items:
            line = f"- {item}"
            cost = estimate_tokens(line + "\n") + (0 if included[name] else estimate_tokens(heading + "\n"))
            if used + cost > budget_tokens:
                left_out += 1
                continue
            if not included[name]:
                lines.append(heading)
            lines.append(line)
            used += cost
            included[name] += 1
    text = "\n".join(lines)
    return PromptBlock(text, estimate_tokens(text), included, left_out)


def _preference(fact: Mapping[str, Any]) -> bool:
    return str(fact["attribute"]).startswith(PREFERENCE)
