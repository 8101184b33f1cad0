"""Deterministic point ids, so that replaying the outbox rewrites the same point instead of adding one."""

from __future__ import annotations

import uuid

_NAMESPACE = uuid.UUID("6f1d3c1e-9d0b-4f51-8f8e-2b6f0c1a7e55")


def point_id(kind: str, ref_id: int) -> str:
    return str(uuid.uuid5(_NAMESPACE, f"{kind}:{ref_id}"))


def passage_point_id(episode_id: int, n: int) -> str:
    """The point of passage `n` (1, 2, ...) of a long episode (pipeline/review/passages.py); its main
    vector stays point_id("episode", episode_id)."""
    if n < 1:
        raise ValueError(f"passages are numbered from 1, got {n}")
    return str(uuid.uuid5(_NAMESPACE, f"episode:{episode_id}:passage:{n}"))


def passage_point_ids(episode_id: int, count: int) -> list[str]:
    return [passage_point_id(episode_id, n) for n in range(1, count + 1)]
