"""Recall hits refresh last_accessed and access_count, batched off the request path.

Recall only adds to an in-memory tally (O(k), no I/O); a background thread writes the tallies with
one set-based UPDATE per kind every `flush_s` seconds and on stop.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from datetime import datetime

from pipeline.core.errors import HindsightError
from pipeline.core.logging import get_logger

log = get_logger(__name__)

Writer = Callable[[str, dict[int, int], datetime], None]


class AccessRecorder:
    def __init__(self, write: Writer, clock: Callable[[], datetime], *, flush_s: float = 2.0) -> None:
        self._write = write
        self._clock = clock
        self._flush_s = flush_s
        self._lock = threading.Lock()
        self._pending: dict[str, Counter[int]] = {"episode": Counter(), "semantic": Counter()}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def record(self, kind: str, ids: list[int]) -> None:
        with self._lock:
            self._pending.setdefault(kind, Counter()).update(ids)

    def flush(self) -> int:
        with self._lock:
            pending, self._pending = self._pending, {"episode": Counter(), "semantic": Counter()}
        now = self._clock()
        written = 0
        for kind, counts in pending.items():
            if not counts:
                continue
            try:
                self._write(kind, dict(counts), now)
                written += len(counts)
            except HindsightError as exc:
                # Put them back: a later flush writes them once the store is reachable again.
                with self._lock:
                    self._pending.setdefault(kind, Counter()).update(counts)
                log.warning("access.flush_failed", kind=kind, error=str(exc)[:200])
        return written

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="access-recorder", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
        self.flush()

    def _run(self) -> None:
        while not self._stop.wait(self._flush_s):
            self.flush()
