from tests.faults.stack import Stack, Traffic, push
from tests.helpers import wait_until
import time

def test_smoke(stack: Stack) -> None:
    t0=time.monotonic()
    stack.add("worker", "worker", "--loglevel=INFO")
    stack.add("scheduler", "scheduler")
    stack.add("indexer", "indexer", "--embedded")
    stack.add("beat", "beat")
    stack.start("worker", "scheduler", "indexer", "beat")
    traffic = Traffic.generate(300, seed=1)
    push(stack.stream(), traffic.entries)
    stack.roles["worker"].wait_ready()
    print("ready", time.monotonic()-t0)
    ids = sorted(traffic.unique_turn_ids)
    wait_until(lambda: stack.caught_up(ids), timeout=300, interval=0.5, what="caught up")
    print("caught up", time.monotonic()-t0)
    stack.roles["indexer"].stop()
    stack.assert_nothing_lost(traffic)
    stack.assert_no_overlapping_facts()
    print(stack.assert_index_agrees())
    print(stack.repo.stats())
