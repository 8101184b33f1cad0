"""`hindsight review --wait` waits for the index updates queued up to its batches' end, not for an empty
outbox, which steady traffic never leaves."""

from __future__ import annotations

import pytest
from sqlalchemy import delete, insert

from pipeline.adapters.postgres.repository import Repository
from pipeline.adapters.postgres.tables import index_outbox
from pipeline.core.models import EPISODE

pytestmark = pytest.mark.integration


def _queue(repo: Repository, *refs: int) -> list[int]:
    with repo.engine.begin() as conn:
        rows = conn.execute(
            insert(index_outbox).returning(index_outbox.c.id), [{"kind": EPISODE, "ref_id": r} for r in refs]
        )
        return [int(r[0]) for r in rows]


def _drain(repo: Repository, ids: list[int]) -> None:
    with repo.engine.begin() as conn:
        conn.execute(delete(index_outbox).where(index_outbox.c.id.in_(ids)))


def test_a_watermark_counts_what_was_queued_up_to_it_however_much_comes_after(
    clean: None, repo: Repository
) -> None:
    assert repo.outbox_position() == {"pending": 0, "head": 0}
    ours = _queue(repo, 1, 2, 3)
    head = repo.outbox_position()["head"]
    assert head == max(ours)
    later = _queue(repo, 4, 5)
    _drain(repo, ours[:1])
    assert repo.outbox_position(head) == {"pending": 4, "head": max(later), "through": 2}
    _drain(repo, ours[1:])
    # Ours are written; the queue is not empty, and need not be.
    assert repo.outbox_position(head) == {"pending": 2, "head": max(later), "through": 0}
    # An empty outbox's head is 0: nothing queued then, nothing to wait for.
    _drain(repo, later)
    assert repo.outbox_position(0) == {"pending": 0, "head": 0, "through": 0}
