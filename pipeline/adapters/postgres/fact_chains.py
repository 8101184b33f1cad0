"""Fact chains in PostgreSQL: read a chain under its lock, let `pipeline.review.conflicts` decide, apply the decision.

Every chain (scope, entity, attribute) is serialised by a transaction-scoped advisory lock, and the
partial unique index `uq_facts_open_version` backs the invariant "at most one current version"
even if some other writer forgot the lock.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, insert, select, text, update
from sqlalchemy.orm import Session

from pipeline.adapters.postgres.tables import facts
from pipeline.core.models import CorrectionHint, FactCandidate, FactVersion, Resolution
from pipeline.review import conflicts


def chain_lock_key(agent_id: str, user_id: str, entity: str, attribute: str) -> int:
    digest = hashlib.blake2b(
        f"{agent_id}\x1f{user_id}\x1f{entity}\x1f{attribute}".encode(), digest_size=8
    ).digest()
    return int.from_bytes(digest, "big", signed=True)


def _version(row: Any) -> FactVersion:
    return FactVersion(
        id=row.id,
        entity=row.entity,
        attribute=row.attribute,
        value=row.value,
        valid_from=row.valid_from,
        valid_to=row.valid_to,
        source=row.source,
        confidence=row.confidence,
        turn_ids=tuple(row.turn_ids or ()),
        retracted=row.retracted_at is not None,
    )


def load_chain(
    s: Session | Connection, agent_id: str, user_id: str, entity: str, attribute: str
) -> list[FactVersion]:
    f = facts
    rows = s.execute(
        select(f)
        .where(
            f.c.agent_id == agent_id, f.c.user_id == user_id, f.c.entity == entity, f.c.attribute == attribute
        )
        .order_by(f.c.valid_from, f.c.id)
    )
    return [_version(r) for r in rows]


def open_facts(s: Session, agent_id: str, user_id: str) -> list[FactVersion]:
    f = facts
    rows = s.execute(
        select(f).where(
            f.c.agent_id == agent_id,
            f.c.user_id == user_id,
            f.c.valid_to.is_(None),
            f.c.retracted_at.is_(None),
        )
    )
    return [_version(r) for r in rows]


@dataclass(frozen=True, slots=True)
class ChainLink:
    """A fact version closed or retracted by a newer one: the turns that stated each (issue 39 links them)."""

    old_turn_ids: tuple[str, ...]
    new_turn_ids: tuple[str, ...]
    reason: dict[str, Any]


def apply_candidates(
    s: Session,
    agent_id: str,
    user_id: str,
    candidates: Sequence[FactCandidate],
    hints: Sequence[CorrectionHint],
    now: datetime,
    links: list[ChainLink] | None = None,
) -> dict[str, int]:
    """Reconcile each candidate with its chain, in order. Returns counts for the audit log; appends to
    `links` what each closed or retracted version's turns were superseded by."""
    counts = {"facts_opened": 0, "facts_closed": 0, "facts_retracted": 0, "facts_confirmed": 0}
    if hints:
        current = open_facts(s, agent_id, user_id)
        for hint in hints:
            resolved = conflicts.resolve_hint(current, hint)
            if resolved is not None:
                candidates = [*candidates, resolved]
    for candidate in candidates:
        s.execute(
            text("SELECT pg_advisory_xact_lock(:k)"),
            {"k": chain_lock_key(agent_id, user_id, candidate.entity, candidate.attribute)},
        )
        chain = load_chain(s, agent_id, user_id, candidate.entity, candidate.attribute)
        resolution = conflicts.resolve(chain, candidate)
        if not resolution.empty:
            _apply(s, agent_id, user_id, resolution, now, counts)
            if links is not None:
                links.extend(_links(chain, resolution))
    return counts


def _links(chain: Sequence[FactVersion], r: Resolution) -> list[ChainLink]:
    live = [n for n in r.insert if not n.retracted]
    if not live:
        return []
    new = live[0].candidate
    ended = {vid: "closed" for vid, _ in r.close} | {vid: "corrected" for vid in r.retract}
    ended |= {n.supersedes: "corrected" for n in r.insert if n.supersedes is not None}
    out = []
    for v in chain:
        if v.id in ended:
            reason = {
                "rule": f"fact_{ended[v.id]}",
                "fact": f"{v.entity}/{v.attribute}",
                "old": [v.value],
                "new": [new.value],
            }
            out.append(ChainLink(v.turn_ids, new.turn_ids, reason))
    return out


def _apply(
    s: Session, agent_id: str, user_id: str, r: Resolution, now: datetime, counts: dict[str, int]
) -> None:
    f = facts
    # Close and retract first: the unique index allows one current version at a time.
    for version_id, valid_to in r.close:
        s.execute(update(f).where(f.c.id == version_id).values(valid_to=valid_to))
        counts["facts_closed"] += 1
    if r.retract:
        s.execute(update(f).where(f.c.id.in_(r.retract)).values(retracted_at=now))
        counts["facts_retracted"] += len(r.retract)
    for new in r.insert:
        c = new.candidate
        new_id = s.execute(
            insert(f)
            .values(
                agent_id=agent_id,
                user_id=user_id,
                entity=c.entity,
                attribute=c.attribute,
                value=c.value,
                valid_from=new.valid_from,
                valid_to=new.valid_to,
                recorded_at=now,
                retracted_at=now if new.retracted else None,
                source=c.source,
                confidence=c.confidence,
                turn_ids=list(c.turn_ids),
            )
            .returning(f.c.id)
        ).scalar_one()
        if new.supersedes is not None:
            s.execute(update(f).where(f.c.id == new.supersedes).values(superseded_by=new_id))
        if not new.retracted:
            counts["facts_opened"] += 1
    for version_id, turn_ids in r.add_provenance:
        # Append, keeping first-seen order and dropping repeats.
        s.execute(
            text(
                "UPDATE facts SET turn_ids = ARRAY("
                " SELECT x FROM unnest(turn_ids || CAST(:new AS text[])) WITH ORDINALITY AS t(x, n)"
                " GROUP BY x ORDER BY min(n)) WHERE id = :id"
            ),
            {"new": list(turn_ids), "id": version_id},
        )
        counts["facts_confirmed"] += 1


def reopen_for_undo(
    s: Session, agent_id: str, user_id: str, old_turn_id: str, new_turn_id: str, now: datetime
) -> dict[str, list[int]]:
    """An operator undid "the new turn superseded the old one" (issue 44): the fact chain versions that link
    came from are put back. The version only the new turn stated is retracted (it was never the user's
    value: a quotation, another person's statement) and the version of the old turn it ended holds again,
    until whatever ended the retracted one, so /v1/facts and /v1/prompt agree with recall. A version other
    turns stated as well is left alone: those turns still say it."""
    f = facts
    reopened: list[int] = []
    retracted: list[int] = []
    newer = s.execute(
        select(f).where(
            f.c.agent_id == agent_id,
            f.c.user_id == user_id,
            f.c.retracted_at.is_(None),
            f.c.turn_ids.contains([new_turn_id]),  # the GIN index ix_facts_turn_ids
        )
    ).all()
    for n in newer:
        if list(n.turn_ids or ()) != [new_turn_id]:
            continue
        s.execute(
            text("SELECT pg_advisory_xact_lock(:k)"),
            {"k": chain_lock_key(agent_id, user_id, n.entity, n.attribute)},
        )
        chain = load_chain(s, agent_id, user_id, n.entity, n.attribute)
        # What it ended: the version of the old turn it closed (valid_to = its start) or corrected.
        ended = [
            v
            for v in chain
            if old_turn_id in v.turn_ids
            and v.id != n.id
            and (
                (not v.retracted and v.valid_to is not None and v.valid_to == n.valid_from)
                or (v.retracted and _superseded_by(s, v.id) == n.id)
            )
        ]
        if not ended:
            continue
        # Retract first: the unique index allows one current version at a time.
        s.execute(update(f).where(f.c.id == n.id).values(retracted_at=now))
        retracted.append(n.id)
        for v in ended:
            s.execute(
                update(f)
                .where(f.c.id == v.id)
                .values(valid_to=n.valid_to, retracted_at=None, superseded_by=None)
            )
            reopened.append(v.id)
    return {"facts_reopened": reopened, "facts_retracted": retracted}


def _superseded_by(s: Session, version_id: int) -> int | None:
    value: int | None = s.execute(
        select(facts.c.superseded_by).where(facts.c.id == version_id)
    ).scalar_one_or_none()
    return value


def query_facts(
    conn: Connection,
    agent_id: str,
    user_id: str,
    *,
    entity: str | None,
    attribute: str | None,
    as_of: datetime | None,
    history: bool,
) -> list[dict[str, Any]]:
    """Current facts (or those true at `as_of`); with `history`, every version ever recorded."""
    f = facts
    q = select(f).where(f.c.agent_id == agent_id, f.c.user_id == user_id)
    if entity is not None:
        q = q.where(f.c.entity == entity)
    if attribute is not None:
        q = q.where(f.c.attribute == attribute)
    if not history:
        q = q.where(f.c.retracted_at.is_(None))
        if as_of is None:
            q = q.where(f.c.valid_to.is_(None))
        else:
            q = q.where(f.c.valid_from <= as_of, (f.c.valid_to.is_(None)) | (f.c.valid_to > as_of))
    rows = conn.execute(q.order_by(f.c.entity, f.c.attribute, f.c.valid_from, f.c.recorded_at, f.c.id))
    return [
        {
            "id": r.id,
            "entity": r.entity,
            "attribute": r.attribute,
            "value": r.value,
            "valid_from": r.valid_from.isoformat(),
            "valid_to": r.valid_to.isoformat() if r.valid_to else None,
            "recorded_at": r.recorded_at.isoformat(),
            "retracted_at": r.retracted_at.isoformat() if r.retracted_at else None,
            "superseded_by": r.superseded_by,
            "source": r.source,
            "confidence": r.confidence,
            "turn_ids": list(r.turn_ids or ()),
        }
        for r in rows
    ]
