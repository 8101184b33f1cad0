"""The review's view of the optional LLM: the OpenAI-compatible client behind the `ReviewLLM` port."""

from __future__ import annotations

from pipeline.adapters.postgres.review_writes import BatchEpisode
from pipeline.llm_tasks import JSONCompleter, extract_facts, judge_quality
from pipeline.models import FactCandidate, QualityScore


class ClientReviewLLM:
    def __init__(self, client: JSONCompleter) -> None:
        self.client = client

    def judge(self, content: str, role: str, rule: QualityScore, stats: dict[str, int]) -> float | None:
        verdict = judge_quality(self.client, content, role, rule, stats=stats)
        return None if verdict is None else verdict.score

    def facts(self, episode: BatchEpisode, stats: dict[str, int]) -> list[FactCandidate] | None:
        return extract_facts(
            self.client,
            episode.content,
            role=episode.role,
            source=episode.source,
            ts=episode.ts,
            turn_id=episode.turn_id,
            stats=stats,
        )
