"""Deterministic point ids, so that replaying the outbox rewrites the same point instead of adding one."""

from __future__ import annotations

import uuid

_NAMESPACE = uuid.UUID("6f1d3c1e-9d0b-4f51-8f8e-2b6f0c1a7e55")


def point_id(kind: str, ref_id: int) -> str:
    return str(uuid.uuid5(_NAMESPACE, f"{kind}:{ref_id}"))
