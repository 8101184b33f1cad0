"""The scheduler process: stream -> episodes -> batches -> Celery. Several may run side by side.

Per loop: take over entries a dead scheduler left unacked (XAUTOCLAIM), read new ones, validate
(bad ones to the dead-letter stream with a reason), insert good ones idempotently, XACK only after
the commit; then, every tick, ask the pure policy what to review and claim+dispatch it. Arrivals that fill a
batch or end a session bring the next tick forward, so the 30th turn is dispatched as soon as it is stored.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from pipeline.adapters.postgres.repository import Repository
from pipeline.adapters.redis_stream import Entry, TurnStream
from pipeline.core.config import Settings
from pipeline.core.errors import InvalidTurn, PermanentError, RetryableError
from pipeline.core.logging import get_logger
from pipeline.core.models import Dispatch, Scope, SessionEnd, Turn
from pipeline.ingest.validation import decode_stream_fields, parse_event
from pipeline.review import injection
from pipeline.review.injection import InjectionThresholds
from scheduler.duplicates import dead_letter_reused_ids
from scheduler.policy import decide

log = get_logger(__name__)
# Longest wait between retries while PostgreSQL or Redis is down. Each retry is one cheap round trip; a longer
# wait only delays recovery (with 30 s, a 30 s outage could leave the scheduler asleep 16 s past its end).
MAX_BACKOFF_S = 10.0

Dispatcher = Callable[[int], None]  # sends review_batch(batch_id)


@dataclass(frozen=True)
class RunnerConfig:
    group: str
    read_count: int
    block_ms: int
    claim_idle_ms: int
    tick_s: float
    batch_size: int
    idle_s: float
    max_batch: int
    trim_every_s: float = 30.0
    # Batches claimed but not yet started that may wait in the review queue. Beyond that the backlog
    # stays as pending episodes in PostgreSQL, where each claim takes the most urgent first; batches
    # claimed eagerly would freeze arrival order into the Celery queue and defeat priorities.
    max_waiting: int = 16
    # Least time between two ticks when arrivals have just filled a batch (or ended a session): such a
    # batch is dispatched at once instead of up to tick_s later, and a flood of arrivals still costs at
    # most one backlog query per this many seconds.
    eager_tick_s: float = 0.05
    # Read your writes (RecallSettings.unreviewed): each turn is screened for prompt injection as it is
    # stored, and one the screen passes is recallable before its review. None: every turn waits for it.
    screen: InjectionThresholds | None = None
    # Full batches' worth (max_batch episodes each) one scope may have claimed, queued or running at once
    # (issue 44): a busy scope gets that many full batches, a scope of short sessions as many small light
    # reviews as add up to the same. The worker's queue is
    # FIFO: with no cap, a scope with thousands of pending statements (always the oldest backlog) filled
    # it, and another scope's review waited behind every one of those batches. Two keeps a busy scope's
    # next batch ready while one runs (its writes serialize on the scope lock anyway); None: no cap.
    # The roles take it from PolicySettings.max_in_flight_per_scope (HINDSIGHT_POLICY__MAX_IN_FLIGHT_PER_SCOPE).
    max_in_flight_per_scope: int | None = 2


def config_from_settings(
    settings: Settings, *, group: str, screen: InjectionThresholds | None
) -> RunnerConfig:
    """The scheduler's configuration from the one Settings (`hindsight scheduler`)."""
    policy = settings.policy
    return RunnerConfig(
        group=group,
        read_count=settings.scheduler_read_count,
        block_ms=settings.scheduler_block_ms,
        claim_idle_ms=settings.scheduler_claim_idle_ms,
        tick_s=settings.scheduler_tick_s,
        batch_size=policy.batch_size,
        idle_s=policy.idle_s,
        max_batch=policy.max_batch,
        max_waiting=settings.scheduler_max_waiting_batches,
        screen=screen,
        max_in_flight_per_scope=policy.max_in_flight_per_scope or None,  # 0: no cap
    )


def consumer_name() -> str:
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


class SchedulerRunner:
    def __init__(
        self,
        *,
        repo: Repository,
        stream: TurnStream,
        dispatch: Dispatcher,
        config: RunnerConfig,
        clock: Callable[[], datetime],
        consumer: str | None = None,
    ) -> None:
        self.repo = repo
        self.stream = stream
        self.dispatch = dispatch
        self.config = config
        self.clock = clock
        self.consumer = consumer or consumer_name()
        self.stop_event = threading.Event()
        self._last_tick = 0.0
        self._last_claim = 0.0
        self._last_trim = 0.0
        # Episodes waiting for a full review per scope: the last tick's backlog plus what arrived since
        # (an estimate, for bringing the next tick forward; the tick itself reads the real backlog).
        self._pending_full: dict[Scope, int] = {}
        self._due = False  # arrivals since the last tick made a review due

    # -- the loop ---------------------------------------------------------------------------

    def run(self) -> None:
        log.info("scheduler.started", consumer=self.consumer, group=self.config.group)
        backoff = 0.5
        recover_own = True  # after a start or an error, first finish what this consumer was given
        while not self.stop_event.is_set():
            try:
                if recover_own:
                    self.stream.ensure_group(self.config.group)
                    self.process(
                        self.stream.read(
                            self.config.group,
                            self.consumer,
                            count=self.config.read_count,
                            block_ms=0,
                            pending=True,
                        )
                    )
                    recover_own = False
                self.step()
                backoff = 0.5
            except RetryableError as exc:
                log.warning("scheduler.retry", error=str(exc)[:300], backoff_s=backoff)
                recover_own = True
                self.stop_event.wait(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_S)
            except Exception as exc:  # a defect must not stop ingestion for every user
                # Input problems never get here (process() dead-letters them); this is a defect or an
                # unclassified store error. Log it loudly and keep going with the same backoff, rather
                # than exit and have the supervisor restart us into the same state.
                log.exception("scheduler.error", error=str(exc)[:300], backoff_s=backoff)
                recover_own = True
                self.stop_event.wait(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_S)
        log.info("scheduler.stopped", consumer=self.consumer)

    def step(self) -> None:
        now = time.monotonic()
        if now - self._last_claim >= self.config.claim_idle_ms / 2000:
            self._last_claim = now
            claimed = self.stream.autoclaim(
                self.config.group,
                self.consumer,
                min_idle_ms=self.config.claim_idle_ms,
                count=self.config.read_count,
            )
            if claimed:
                log.warning("scheduler.autoclaimed", entries=len(claimed))
                self.process(claimed)
        entries = self.stream.read(
            self.config.group, self.consumer, count=self.config.read_count, block_ms=self.config.block_ms
        )
        self.process(entries)
        now = time.monotonic()
        since_tick = now - self._last_tick
        if since_tick >= self.config.tick_s or (self._due and since_tick >= self.config.eager_tick_s):
            self._last_tick = now
            self.tick()
        if now - self._last_trim >= self.config.trim_every_s:
            self._last_trim = now
            self.stream.trim_acknowledged(self.config.group)

    # -- stages -----------------------------------------------------------------------------

    def process(self, entries: Sequence[Entry]) -> int:
        """Validate and store entries; ack them. Returns the number of new episodes."""
        if not entries:
            return 0
        now = self.clock()
        turns: list[Turn] = []
        ends: list[SessionEnd] = []
        good_ids: list[str] = []
        turn_entries: list[str] = []  # the entry id of each of `turns`
        for entry_id, raw in entries:
            try:
                event = parse_event(decode_stream_fields(raw), now=now, require_ts=True)
            except InvalidTurn as exc:
                self.stream.dead_letter(entry_id, raw, exc.reason)
                self.stream.ack(self.config.group, [entry_id])
                log.warning("scheduler.dead_letter", entry_id=entry_id, reason=exc.reason)
                continue
            if isinstance(event, Turn):
                turns.append(event)
                turn_entries.append(entry_id)
            else:
                ends.append(event)
            good_ids.append(entry_id)
        if not good_ids:
            return 0
        unique = _dedupe(turns)
        try:
            inserted = self.repo.ingest(unique, ends, self._prescreen(unique))
        except PermanentError as exc:
            # The store refused a value the parser let through. One entry must not hold back the
            # others: store them one by one and dead-letter the ones refused on their own.
            if len(good_ids) == 1:
                reason = f"rejected by the store: {exc}"[:500]
                self.stream.dead_letter(good_ids[0], dict(entries)[good_ids[0]], reason)
                self.stream.ack(self.config.group, good_ids)
                log.warning("scheduler.dead_letter", entry_id=good_ids[0], reason=reason)
                return 0
            raw_by_id = dict(entries)
            return sum(self.process([(i, raw_by_id[i])]) for i in good_ids)
        if inserted < len(turns):  # some ids were stored before: a retry, or another turn under a used id
            dead_letter_reused_ids(self.repo.engine, self.stream, entries, turns, turn_entries)
        # Only now is every good entry safe in PostgreSQL; a crash before this line re-delivers them.
        self.stream.ack(self.config.group, good_ids)
        self._note_arrivals(turns, ends)
        log.debug("scheduler.ingested", entries=len(good_ids), new_episodes=inserted)
        return inserted

    def _prescreen(self, turns: Sequence[Turn]) -> list[bool] | None:
        """Which turns may be recalled before their review: those the injection rules find nothing in.

        The uncertain band waits too (the review may ask the LLM), so an instruction aimed at the agent is
        never returned, not even for the seconds before its review. The rules read only the turns that
        hold a literal some pattern needs (review.regex_gate): thousands of turns a second per core.
        """
        if self.config.screen is None:
            return None
        return [
            injection.decide(injection.assess(t.content, role=t.role, source=t.source), self.config.screen)
            == "clean"
            for t in turns
        ]

    def _note_arrivals(self, turns: Sequence[Turn], ends: Sequence[SessionEnd]) -> None:
        # Duplicates of stored turns count too: at worst they bring one tick forward.
        for t in turns:
            scope = Scope(t.agent_id, t.user_id)
            pending = self._pending_full.get(scope, 0) + 1
            self._pending_full[scope] = pending
            self._due = self._due or pending >= self.config.batch_size
        self._due = self._due or bool(ends)

    def tick(self) -> list[int]:
        """Run the policy over the backlog; claim and dispatch what it decides, as far as the review queue
        has room. Returns batch ids."""
        self._due = False  # a full queue leaves the rest to the regular tick, not to one every eager_tick_s
        room = self.config.max_waiting - self.repo.waiting_batches()
        if room <= 0:
            return []
        backlog = self.repo.backlog()
        self._pending_full = {b.scope: b.pending_full for b in backlog}
        cap = self.config.max_in_flight_per_scope
        decisions = decide(
            backlog,
            now=self.clock(),
            batch_size=self.config.batch_size,
            idle_s=self.config.idle_s,
            in_flight=self.repo.in_flight_by_scope() if cap is not None else None,
            # In episodes: `cap` full batches' worth, which a scope of small light reviews shares out.
            per_scope=None if cap is None else cap * self.config.max_batch,
            max_batch=self.config.max_batch,
        )
        dispatched = decisions[:room]
        for d in dispatched:
            if d.kind == "full":  # claimed now, or by another scheduler: either way no longer waiting here
                self._pending_full.pop(d.scope, None)
        return self.claim_and_dispatch(dispatched)

    def claim_and_dispatch(self, decisions: Sequence[Dispatch], *, min_full: int | None = None) -> list[int]:
        batch_ids: list[int] = []
        for d in decisions:
            min_count = (self.config.batch_size if min_full is None else min_full) if d.kind == "full" else 1
            batch_id = self.repo.claim(d, min_count=min_count, limit=self.config.max_batch)
            if batch_id is None:
                continue  # another scheduler got there first
            self.dispatch(batch_id)
            batch_ids.append(batch_id)
            log.info(
                "scheduler.dispatched",
                batch_id=batch_id,
                kind=d.kind,
                trigger=d.trigger,
                agent_id=d.scope.agent_id,
                user_id=d.scope.user_id,
                session_id=d.session_id,
            )
        if batch_ids:
            self.repo.mark_dispatched(batch_ids, self.clock())
        return batch_ids


def _dedupe(turns: list[Turn]) -> list[Turn]:
    # One INSERT cannot touch the same row twice; the first occurrence wins, like ON CONFLICT. A turn id
    # is unique within its scope only: the same id in two scopes is two turns.
    seen: set[tuple[str, str, str]] = set()
    out: list[Turn] = []
    for t in turns:
        key = (t.agent_id, t.user_id, t.turn_id)
        if key not in seen:
            seen.add(key)
            out.append(t)
    return out
