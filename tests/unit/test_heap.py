"""The worker's heap trim: callable here (glibc), set off by growth, and hooked to Celery's task_postrun."""

from __future__ import annotations

from celery.signals import task_postrun

from pipeline.runtime import heap


def test_trim_runs_on_glibc() -> None:
    bytearray(64 * 2**20)  # a large allocation, freed at once: something to hand back
    assert isinstance(heap.trim(), bool)
    assert heap._glibc() is not None  # the test machine and the images are glibc Linux


def test_resident_bytes_reads_this_process() -> None:
    before = heap.resident_bytes()
    block = bytearray(32 * 2**20)  # touched (zeroed) pages count as resident
    assert heap.resident_bytes() >= before + 16 * 2**20
    del block


def test_growth_trim_is_due_first_and_then_only_past_the_slack(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    resident = [500 * 2**20]
    calls: list[int] = []
    monkeypatch.setattr(heap, "resident_bytes", lambda: resident[0])
    monkeypatch.setattr(heap, "trim", lambda: calls.append(resident[0]) or True)
    maybe_trim = heap.GrowthTrim(slack=64 * 2**20)

    assert maybe_trim() is True  # the first call sets the floor with a trim
    resident[0] += 64 * 2**20
    assert maybe_trim() is False  # grown by exactly the slack: not yet
    resident[0] += 1
    assert maybe_trim() is True
    assert maybe_trim() is False  # the floor is what the trim left
    assert calls == [500 * 2**20, 564 * 2**20 + 1]


def test_trim_between_tasks_connects_a_postrun_handler(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    calls: list[int] = []
    monkeypatch.setattr(heap, "trim", lambda: calls.append(1) or True)
    before = len(task_postrun.receivers)
    heap.trim_between_tasks(slack=2**40)
    try:
        assert len(task_postrun.receivers) == before + 1
        for _ in range(3):
            task_postrun.send(
                sender=None, task_id="t", task=None, args=(), kwargs={}, retval=None, state="SUCCESS"
            )
        assert calls == [1]  # the first task trims; no growth of a terabyte after it
    finally:
        task_postrun.receivers.pop()
