"""The claim bound (issue 44): a scope with a large backlog is reviewed in consecutive short batches, at most
`policy.max_in_flight_per_scope` at once, so another scope's review waits behind one short batch, not
behind the busy scope's whole backlog. The scheduler's tick on an in-memory store; the SQL of the claim
itself (ORDER BY priority, id LIMIT) is exercised by tests/integration/test_scheduler_backlog.py."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from pipeline.core.config import PolicySettings, Settings, get_settings
from pipeline.core.errors import ConfigError
from pipeline.core.models import Dispatch, Scope, ScopeBacklog, SessionBacklog
from scheduler.runner import RunnerConfig, SchedulerRunner, config_from_settings

NOW = datetime(2025, 1, 1, 12, 0, tzinfo=UTC)
BUSY = Scope("a", "weight-log")
OTHER = Scope("a", "neighbour")


class Store:
    """Pending episodes per scope (ids ascending: oldest first) and the batches claimed from them."""

    def __init__(self, pending: dict[Scope, list[int]], ended: set[Scope]) -> None:
        self.pending = pending
        self.ended = ended
        self.batches: list[tuple[Scope, str, list[int], int]] = []  # scope, kind, ids, limit asked
        self.done: set[int] = set()

    def backlog(self) -> list[ScopeBacklog]:
        return [
            ScopeBacklog(
                scope,
                len(ids),
                (SessionBacklog("s", len(ids), NOW, scope in self.ended, 1, ids[0]),),
            )
            for scope, ids in self.pending.items()
            if ids
        ]

    def claim(self, d: Dispatch, *, min_count: int, limit: int) -> int | None:
        ids = self.pending[d.scope][:limit]
        if len(ids) < max(min_count, 1):
            return None
        del self.pending[d.scope][:limit]
        self.batches.append((d.scope, d.kind, ids, limit))
        return len(self.batches) - 1

    def in_flight_by_scope(self) -> dict[Scope, int]:
        """Episodes in unfinished batches, per scope (as the SQL store counts them)."""
        out: dict[Scope, int] = {}
        for i, (scope, _kind, ids, _limit) in enumerate(self.batches):
            if i not in self.done:
                out[scope] = out.get(scope, 0) + len(ids)
        return out

    def waiting_batches(self) -> int:
        return 0

    def mark_dispatched(self, batch_ids: list[int], now: datetime) -> None:
        pass


def runner(store: Store, settings: Settings, queue: list[int]) -> SchedulerRunner:
    config = config_from_settings(settings, group="scheduler", screen=None)
    return SchedulerRunner(
        repo=store,  # type: ignore[arg-type]
        stream=None,  # type: ignore[arg-type]  # tick() reads no stream
        dispatch=queue.append,
        config=config,
        clock=lambda: NOW,
    )


@pytest.fixture(autouse=True)
def fresh_settings() -> Iterator[None]:
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_a_large_backlog_is_claimed_in_consecutive_bounded_batches_and_another_scope_waits_behind_one() -> (
    None
):
    settings = Settings()
    bound, cap = settings.policy.max_batch, settings.policy.max_in_flight_per_scope
    store = Store({BUSY: list(range(1, 2001)), OTHER: [5000]}, ended={OTHER})
    queue: list[int] = []  # the worker's FIFO queue
    r = runner(store, settings, queue)

    for _ in range(3):
        r.tick()
    # The busy scope's oldest episodes go first, but it gets at most `cap` batches of `bound`: the other
    # scope's light review is queued behind at most those, not behind the 2,000 statements.
    kinds = [(store.batches[b][0], store.batches[b][1]) for b in queue]
    assert kinds.count((BUSY, "full")) == cap
    other_at = kinds.index((OTHER, "light"))
    ahead = sum(len(store.batches[b][2]) for b in queue[:other_at])
    assert ahead <= cap * bound < 2000

    # A worker finishes one batch at a time; each tick then claims the next short batch, until all are claimed.
    while any(store.pending.values()) or len(store.done) < len(store.batches):
        running = min(set(range(len(store.batches))) - store.done)
        store.done.add(running)
        r.tick()
        assert all(n <= cap * bound for n in store.in_flight_by_scope().values())
    busy = [ids for scope, _, ids, _ in store.batches if scope == BUSY]
    assert all(len(ids) <= bound for ids in busy)
    assert all(limit == bound for *_, limit in store.batches)
    assert sorted(i for ids in busy for i in ids) == list(range(1, 2001))  # every episode claimed once
    assert len(busy) == -(-2000 // bound)


def test_the_default_bound_keeps_a_batch_short() -> None:
    # 500 made one batch of the busy scope up to ~15 s of one worker, and the other scope waited behind two.
    policy = PolicySettings()
    assert policy.batch_size <= policy.max_batch <= 100
    assert 1 <= policy.max_in_flight_per_scope <= 2


def test_the_caps_come_from_the_one_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HINDSIGHT_POLICY__MAX_BATCH", "250")
    monkeypatch.setenv("HINDSIGHT_POLICY__MAX_IN_FLIGHT_PER_SCOPE", "0")  # 0: no cap
    config = config_from_settings(get_settings(), group="g", screen=None)
    assert isinstance(config, RunnerConfig)
    assert (config.max_batch, config.max_in_flight_per_scope) == (250, None)


def test_a_bound_below_the_batch_size_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # A full review claims at least batch_size episodes: a smaller bound would never fill one, silently.
    monkeypatch.setenv("HINDSIGHT_POLICY__BATCH_SIZE", "50")
    monkeypatch.setenv("HINDSIGHT_POLICY__MAX_BATCH", "40")
    with pytest.raises(ConfigError, match="HINDSIGHT_POLICY__MAX_BATCH"):
        get_settings()
