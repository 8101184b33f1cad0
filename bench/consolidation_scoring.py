"""The consolidation set's scores (issue 27), pure: groups of turn ids and each turn's topic in, ratios out.

- pairwise purity: of all pairs of turns that share a group, the share with the same topic (a distractor,
  topic None, pairs impurely with anything);
- completeness: of all pairs of turns with the same topic, the share that share a group (a turn in no group
  is with nobody).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

TARGET_PURITY = 0.95
TARGET_COMPLETENESS = 0.80


@dataclass(frozen=True, slots=True)
class Ratio:
    hits: int
    total: int

    @property
    def value(self) -> float:
        """hits / total; 1.0 when there is nothing to count (no pair to get wrong)."""
        return self.hits / self.total if self.total else 1.0


def distinct_members(group: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(group))


def pairwise_purity(groups: Sequence[Iterable[str]], topic_of: Mapping[str, str | None]) -> Ratio:
    """Of all pairs of turns that share a group (counted once per group), those whose topics are equal and
    not None. A turn missing from `topic_of` counts as a distractor."""
    hits = total = 0
    for group in groups:
        for x, y in combinations([topic_of.get(t) for t in distinct_members(group)], 2):
            total += 1
            hits += x is not None and x == y
    return Ratio(hits, total)


def completeness(groups: Sequence[Iterable[str]], topic_of: Mapping[str, str | None]) -> Ratio:
    """Of all pairs of turns of `topic_of` with the same (non-None) topic, those that share some group."""
    together = {frozenset(pair) for group in groups for pair in combinations(distinct_members(group), 2)}
    by_topic: dict[str, list[str]] = {}
    for turn, topic in topic_of.items():
        if topic is not None:
            by_topic.setdefault(topic, []).append(turn)
    hits = total = 0
    for turns in by_topic.values():
        for pair in combinations(turns, 2):
            total += 1
            hits += frozenset(pair) in together
    return Ratio(hits, total)
