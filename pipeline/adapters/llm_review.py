"""The review's view of the optional LLM: the OpenAI-compatible client behind the `ReviewLLM` port."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from pipeline.core.errors import HindsightError
from pipeline.core.logging import get_logger
from pipeline.core.models import FactCandidate, InjectionVerdict, QualityScore
from pipeline.core.review_records import BatchEpisode
from pipeline.review.llm_tasks import JSONCompleter, extract_facts, judge_injection, judge_quality
from pipeline.review.summarise import llm_summary_prompt

log = get_logger(__name__)
MAX_SUMMARY_CHARS = 600


class _Summary(BaseModel):
    model_config = ConfigDict(extra="ignore")
    summary: str = Field(min_length=1, max_length=MAX_SUMMARY_CHARS)


class ClientReviewLLM:
    def __init__(self, client: JSONCompleter) -> None:
        self.client = client

    def judge(self, content: str, role: str, rule: QualityScore, stats: dict[str, int]) -> float | None:
        verdict = judge_quality(self.client, content, role, rule, stats=stats)
        return None if verdict is None else verdict.score

    def injection(
        self, content: str, role: str, verdict: InjectionVerdict, stats: dict[str, int]
    ) -> float | None:
        answer = judge_injection(
            self.client,
            content,
            role=role,
            source=verdict.source,
            detector_score=verdict.score,
            features=list(verdict.features),
            stats=stats,
        )
        return None if answer is None else answer.score

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

    def summarise(self, texts: list[str], stats: dict[str, int]) -> str | None:
        system, user = llm_summary_prompt(texts)
        stats["llm_calls"] = stats.get("llm_calls", 0) + 1
        try:
            answer = self.client.complete_json(system, user, _Summary, max_tokens=200)
        except HindsightError as exc:
            stats["llm_failures"] = stats.get("llm_failures", 0) + 1
            stats["llm_fallbacks"] = stats.get("llm_fallbacks", 0) + 1
            log.warning("llm.summarise_failed", error=type(exc).__name__)
            return None
        text = " ".join(answer.summary.split())
        return text or None
