"""Hand freed heap memory back to the OS after each review.

Embedding batches of varying size and length allocates tensors of ever-different shapes; glibc serves
them from its heap (its mmap threshold rises to 32 MB after the first large free) and the freed pages stay
mapped, fragmented. A worker's memory then climbs with every batch: the embedder alone, in one process,
went from 530 to 1,209 MB over 6,000 LoCoMo sentences in batches of 30–120. `malloc_trim(0)` after each
batch kept it at 600 MB (a lower mmap threshold also bounds it but cost ~19% throughput).

Trimming after every batch has a price of its own: the next batch faults the released pages back in, and
its embedding ran 2–4% slower than with no trims (same process, LoCoMo batches of 30 alternating with
reviews; 0.2% with the rule below). So the worker trims only once its resident memory has grown `slack`
past what the last trim left: memory stays within that bound, and the faults are paid once per several
batches.
No-op where the C library is not glibc.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from typing import Any

from pipeline.core.logging import get_logger

log = get_logger(__name__)

_libc: Any = None


def _glibc() -> Any:
    global _libc
    if _libc is None:
        name = ctypes.util.find_library("c")
        try:
            lib = ctypes.CDLL(name) if name else None
        except OSError:
            lib = None
        _libc = lib if lib is not None and hasattr(lib, "malloc_trim") else False
    return _libc or None


def trim() -> bool:
    """Release free heap pages; True when the C library has malloc_trim (and released anything)."""
    lib = _glibc()
    return bool(lib.malloc_trim(0)) if lib is not None else False


# Growth of a worker's resident memory past its last trim that sets off the next one. Batches of 30 LoCoMo
# turns leave a few MB each unreturned, so this is a trim every ten-odd batches.
TRIM_SLACK_BYTES = 64 * 2**20


def resident_bytes() -> int:
    """This process's resident set size (0 where /proc is not available)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


class GrowthTrim:
    """Trims when resident memory exceeds what the last trim left by `slack` bytes (and on the first call)."""

    def __init__(self, slack: int = TRIM_SLACK_BYTES) -> None:
        self.slack = slack
        self.floor: int | None = None

    def due(self, resident: int) -> bool:
        return self.floor is None or resident > self.floor + self.slack

    def __call__(self) -> bool:
        """Trim if due; True when it trimmed."""
        if not self.due(resident_bytes()):
            return False
        trim()
        self.floor = resident_bytes()
        return True


def trim_between_tasks(slack: int = TRIM_SLACK_BYTES) -> None:
    """In a Celery worker process: after each task (solo pool: between reviews), trim when memory has grown."""
    from celery.signals import task_postrun

    maybe_trim = GrowthTrim(slack)

    def on_postrun(**_kwargs: Any) -> None:
        maybe_trim()

    # weak=False: the handler is a closure and would otherwise be collected at once.
    task_postrun.connect(on_postrun, weak=False)
