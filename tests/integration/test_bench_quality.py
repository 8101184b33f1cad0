"""`hindsight bench quality` through the real pipeline on a small set written here: roles, the speaker
modes, the floors and the evidence review left recallable are what the report says."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console

from bench import quality, vector_cache
from bench.sets.common import Conversation, write_set
from pipeline.core.config import Settings

pytestmark = pytest.mark.integration

DAY = datetime(2025, 3, 4, 18, 30, tzinfo=UTC)


def _tiny_set(path: Path) -> None:
    conv = Conversation("help-x", "test", "Ana", "Assistant")
    conv.new_session(DAY)
    conv.say("Ana", "hi!")
    conv.say("Assistant", "Hello! What can I do for you?", "assistant")
    pet = conv.say("Ana", "My corgi Biscuit chewed through the charger cable again")
    conv.say("Assistant", "Oh no. Keep cables in a cord protector; corgis chew when bored.", "assistant")
    db = conv.say("Ana", "our staging database runs postgres 15 btw")
    cmd = conv.say(
        "Assistant",
        "Then rotate the logs with `logrotate -f /etc/logrotate.d/app` and check disk usage with `df -h`.",
        "assistant",
    )
    conv.say("Ana", "thanks!!")
    conv.ask("What kind of dog does the user have?", "a corgi", [pet], "single-hop")
    conv.ask("Which engine backs the pre-production environment?", "Postgres 15", [db], "single-hop")
    conv.ask("How did the assistant say to force log rotation?", "logrotate -f", [cmd], "assistant")
    write_set(path, [conv])


def test_bench_quality_scores_the_product_beside_the_floors_on_the_same_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A Redis db of its own: the bench's default one may be in use by a developer's bench run.
    monkeypatch.setattr(quality, "REDIS_URL", "redis://127.0.0.1:6379/11")
    # The floors' vectors are embedded, not read from a developer's bench cache.
    monkeypatch.setattr(vector_cache, "VECTOR_CACHE", tmp_path / "vectors")
    data = tmp_path / "tiny.json.gz"
    _tiny_set(data)
    (eval_set,) = quality.sets_from_paths([data], "none")
    out = io.StringIO()
    (result,) = quality.run_quality_bench(
        Settings(),
        sets=[eval_set],
        reuse=False,
        variants=["no-speaker"],
        write=False,
        console=Console(file=out, width=200),
    )
    names = [t.name for t in result.tables]
    assert names[:3] == ["BM25 (floor)", "dense (floor)", "simple hybrid (floor)"]
    assert "hybrid, no-speaker" in names
    assert names[-1] == "**product (GET /v1/recall)**"
    assert result.questions == 3
    assert result.conversations == 1
    # Rules-only review sends only what carries nothing cold: every evidence turn stays recallable.
    assert result.kept == 1.0
    assert result.ingested.counts.get("cold", 0) == 3  # "hi!", the greeting back and "thanks!!"
    # Seven turns, k = 10: whatever ranks every turn finds every evidence turn of so small a scope; BM25
    # returns only turns sharing a word with the question, and two of the three are paraphrased.
    for table in result.tables[1:]:
        assert table.total().at10 == pytest.approx(1.0), table.name
    assert result.tables[0].total().at10 < 1.0
    assert result.figures["tiny_kept"] == 1.0
    # The fusion bound reads the floors' arrays of every question: α = 0.5 is the simple hybrid floor, so
    # the best fixed weight can never do worse than it, nor the per-question oracle worse than that.
    assert result.fusion is not None
    assert result.fusion.questions == 3
    assert result.fusion.r10 >= result.tables[2].total().at10
    assert result.fusion.oracle_r10 >= result.fusion.r10
    report = out.getvalue()
    assert "| tiny | 3 (3) |" in report
    assert "evidence kept recallable by review 1.000" in report
    # The floors embedded the set's turns once and left them in the vector cache for the next run.
    assert result.figures["tiny_embed_texts_per_s"] > 0
    assert list((tmp_path / "vectors").rglob("*.npz"))
