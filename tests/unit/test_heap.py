"""The worker's heap trim: callable here (glibc), and hooked to Celery's task_postrun."""

from __future__ import annotations

from celery.signals import task_postrun

from pipeline import heap


def test_trim_runs_on_glibc() -> None:
    bytearray(64 * 2**20)  # a large allocation, freed at once: something to hand back
    assert isinstance(heap.trim(), bool)
    assert heap._glibc() is not None  # the test machine and the images are glibc Linux


def test_trim_after_each_task_connects_a_postrun_handler(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    calls: list[int] = []
    monkeypatch.setattr(heap, "trim", lambda: calls.append(1) or True)
    before = len(task_postrun.receivers)
    heap.trim_after_each_task()
    try:
        assert len(task_postrun.receivers) == before + 1
        task_postrun.send(
            sender=None, task_id="t", task=None, args=(), kwargs={}, retval=None, state="SUCCESS"
        )
        assert calls == [1]
    finally:
        task_postrun.receivers.pop()
