"""`hindsight bench month` end to end on a tiny month (2 days x 60 turns): its figures match the stores."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from sqlalchemy import text

from bench.month import AGENT, run_month_bench, section_lines
from pipeline.adapters.postgres.repository import Repository
from pipeline.core.ports import WarmEmbedder
from tests.integration.harness import DB_URL, REDIS_URL, make_settings
from tests.tiny_locomo import write_tiny_locomo


def test_a_tiny_month_reports_what_the_stores_hold(
    repo: Repository, embedder: WarmEmbedder, tmp_path: Path
) -> None:
    settings = make_settings(tmp_path)
    console = Console(record=True, width=200)
    figures = run_month_bench(
        settings,
        days=2,
        turns_per_day=60,
        data=write_tiny_locomo(tmp_path / "locomo.json"),
        review_database_url=DB_URL,  # both sides in the test database, each under its own agent
        raw_database_url=DB_URL,
        redis_url=REDIS_URL,
        write=False,
        console=console,
        work_dir=tmp_path,
        embedder=embedder,
        check=False,
    )
    raw_agent = f"{AGENT}-raw"
    with repo.engine.connect() as conn:

        def count(sql: str, agent: str) -> int:
            return int(conn.scalar(text(sql), {"a": agent}) or 0)

        episodes = "SELECT count(*) FROM episodes WHERE agent_id = :a"
        kept = episodes + " AND status = 'kept'"
        open_semantic = "SELECT count(*) FROM semantic_memories WHERE agent_id = :a AND status = 'kept' AND valid_to IS NULL"
        # Every turn went into both sides; the review side reviewed all of them.
        assert count(episodes, AGENT) == 120
        assert count(episodes, raw_agent) == 120
        assert count(episodes + " AND status = 'pending'", AGENT) == 0
        assert count(kept, raw_agent) == 120
        review_active = count(kept, AGENT) + count(open_semantic, AGENT)
        not_indexed = int(conn.scalar(text("SELECT count(*) FROM index_outbox")) or 0)

    per_day = figures["per_day"]
    assert [d["day"] for d in per_day] == [1, 2]
    assert [d["active_raw"] for d in per_day] == [60, 120]
    assert figures["active_raw"] == 120
    hot = sum(per.get("hot", 0) + per.get("hot, folded", 0) for per in figures["breakdown_review"].values())
    assert figures["active_review"] == per_day[-1]["active_review"] == hot + per_day[-1]["semantic_review"]
    # The store now holds the what-if's state (folded episodes sent cold last).
    assert figures["what_if_folded_cold"]["active"] == review_active
    # Review sends the greetings and acks cold: fewer memories stay active than turns came in.
    assert 0 < figures["active_review"] < 120
    assert sum(n for per in figures["breakdown_review"].values() for n in per.values()) == 120
    assert figures["breakdown_review"]["greeting"].get("hot", 0) < sum(
        figures["breakdown_review"]["greeting"].values()
    )
    assert not_indexed == 0
    assert all(d["recall_p95_ms_review"] >= d["recall_p50_ms_review"] > 0 for d in per_day)
    assert all(d["recall_p95_ms_raw"] >= d["recall_p50_ms_raw"] > 0 for d in per_day)
    # The LoCoMo questions whose evidence is among the 24 LoCoMo turns that went in, asked of both sides.
    assert figures["questions"] > 0
    assert 0 < figures["recall_at_10_raw"] <= 1
    assert 0 <= figures["recall_at_10_review"] <= 1
    assert 0 < figures["evidence_hot_review"] <= 1
    # At most the 24 LoCoMo turns that went in are cited; the hot ones among them cannot outnumber them.
    assert 0 < figures["evidence_turns_hot_review"] <= figures["evidence_turns"] <= 24
    assert abs(figures["recall_ratio"] - figures["recall_at_10_review"] / figures["recall_at_10_raw"]) < 1e-9
    assert "active, review" in console.export_text()
    # The what-if runs last, on the review side's final state: fewer active memories, recall still asked.
    what_if = figures["what_if_folded_cold"]
    assert what_if["active"] <= figures["active_review"]
    assert 0 <= what_if["recall_at_10"] <= 1


def test_the_section_names_the_targets() -> None:
    from bench.month import Day, MonthResult
    from bench.month_traffic import Traffic

    result = MonthResult(
        days=[Day(1, 100, 40, 5, 100, 10.0, 20.0, 9.0, 18.0, 0, 1.0)],
        questions=10,
        review_r10=0.5,
        raw_r10=0.6,
        evidence=(1_200, 1_100, 3_000),
    )
    lines = "\n".join(section_lines(result, Traffic(1, 100, (), ("u",), ())))
    assert "<!--" not in lines  # the markers are write_section's
    assert "45 with review vs 100 raw" in lines
    assert "ratio **0.833**" in lines
    assert "**missed**" in lines
    assert "cite 1,200 distinct turns; 1,100 of them are among the review side's 3,000 hot episodes" in lines
    assert "80% of the 1,500 target, which leaves 300" in lines
