"""A worker SIGKILLed in the middle of a review: with the default settings its batch runs again within
2 minutes (issue 29 saw ~19), and nothing is lost or doubled.

The review is held mid-way by an LLM that does not answer (the worker waits in its call, as it would on a
slow model), so the kill lands while the batch is `running`. Only the fault suite's speed-ups that bear on
redelivery are removed: the visibility timeout, the reconcile interval and the stuck-batch age are the
defaults of pipeline/core/config.py.
"""

from __future__ import annotations

import time

import pytest

from tests.faults.stack import Stack, Traffic, push, record
from tests.helpers import wait_until
from tests.llm_stub import Reply, StubLLM

BOUND_S = 120.0
GOOD = Reply.good({"score": 0.8, "reason": "stub judge", "facts": []})
# The fault suite's fast settings that decide how soon a dead worker's batch comes back: not here.
DEFAULTS_ONLY = (
    "HINDSIGHT_CELERY__VISIBILITY_TIMEOUT_S",
    "HINDSIGHT_CELERY__RESTORE_INTERVAL_S",
    "HINDSIGHT_RECONCILE_EVERY_S",
    "HINDSIGHT_BATCH_STUCK_S",
)


@pytest.mark.timeout(900)
def test_a_sigkilled_workers_batch_runs_again_within_two_minutes_by_default(stack: Stack) -> None:
    with StubLLM(default=Reply.hang(3600)) as llm:
        stack.extra_env.update(
            {"HINDSIGHT_LLM__BASE_URL": llm.url, "HINDSIGHT_LLM__TIMEOUT_S": "3600", "HINDSIGHT_LLM__MAX_RETRIES": "0"}
        )  # fmt: skip
        for name in ("worker-0", "worker-1"):
            stack.add(name, "worker", "--loglevel=INFO")
        stack.add("scheduler", "scheduler")
        stack.add("beat", "beat")
        for role in stack.roles.values():
            for key in DEFAULTS_ONLY:
                role.env.pop(key, None)
        stack.start("worker-0", "scheduler", "beat")
        stack.roles["worker-0"].wait_ready()
        traffic = Traffic.generate(60, seed=29, agents=1, users=1, session_len=(30, 30), prefix="redeliver")
        push(stack.stream(), traffic.entries)

        # worker-0 is inside a review, waiting on the LLM.
        wait_until(
            lambda: len(llm.requests) > 0, timeout=180, interval=0.2, what="the review to call the LLM"
        )
        held = stack.rows("SELECT id, attempts FROM batches WHERE status = 'running'")
        assert len(held) == 1, held
        batch_id, attempts = held[0]
        stack.roles["worker-0"].kill()
        killed_at = time.monotonic()
        llm.default = GOOD  # the next delivery's review can finish
        stack.start("worker-1")  # as `hindsight up` or an orchestrator would restart it

        def started_again() -> bool:
            row = stack.rows("SELECT status, attempts FROM batches WHERE id = :id", id=batch_id)[0]
            return row.status == "done" or row.attempts > attempts

        wait_until(started_again, timeout=BOUND_S + 60, interval=0.5, what=f"batch {batch_id} to run again")
        redelivered_s = time.monotonic() - killed_at
        wait_until(
            lambda: (
                stack.scalar("SELECT count(*) FROM batches WHERE status <> 'done'") == 0
                and stack.scalar("SELECT count(*) FROM episodes WHERE reviewed_at IS NULL") == 0
            ),
            timeout=300,
            interval=1.0,
            what="every batch to be done",
        )
    assert redelivered_s <= BOUND_S, f"batch {batch_id} ran again {redelivered_s:.0f} s after the SIGKILL"
    stack.assert_nothing_lost(traffic)
    assert stack.scalar("SELECT count(*) FROM reviews WHERE batch_id = :id", id=batch_id) == 1
    record(
        "faults-redelivery",
        "## Faults: a SIGKILLed worker's batch (`pytest tests/faults/test_redelivery.py`)\n\n"
        f"A worker SIGKILLed mid-review (held in an LLM call): with the default settings its batch ran again "
        f"{redelivered_s:.0f} s after the kill (bound {BOUND_S:.0f} s; it is beat's reconcile interval, "
        "30 s, plus a 15 s grace, once the dead worker's lease is gone); 0 lost or doubled episodes, "
        "every batch reviewed once.",
    )
