"""Conflict resolution over one fact chain (DESIGN §2, conflicts row). Pure: no I/O, no clock.

A chain is every stored version of one (scope, entity, attribute), retracted ones included. Two time axes:

* valid time, [valid_from, valid_to) with None = still true: when a value held in the world;
* system time: what the store believed when. Here it only shows as `retracted`; the repository stamps when.

A state change ("moved to Shanghai") *closes* the version it interrupts in valid time; a correction ("actually it
is Hangzhou, not Suzhou") *retracts* it in system time, because it was never true. Nothing is ever deleted, so
every answer the store once gave can be explained later.

"Live" means not retracted. Every rule below assumes `check_chain(chain) == []`; the functions here keep it so.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from itertools import combinations
from typing import Final

from pipeline.core.models import CorrectionHint, FactCandidate, FactVersion, NewVersion, Resolution

# Tie-break at equal valid_from (DESIGN: user > agent > external). Tool output is as good as the agent's own
# inference: both are machine-produced. An unknown source ranks below everything.
SOURCE_RANK: Final[dict[str, int]] = {"user": 3, "tool": 2, "agent": 2, "external": 1}


def normalise(value: str) -> str:
    """The form values are compared in: case-insensitive, runs of whitespace collapsed, ends trimmed."""
    return " ".join(value.split()).casefold()


def covers(version: FactVersion, instant: datetime) -> bool:
    """Whether `instant` lies in the version's valid interval [valid_from, valid_to)."""
    return version.valid_from <= instant and (version.valid_to is None or instant < version.valid_to)


def current_at(chain: Sequence[FactVersion], instant: datetime) -> FactVersion | None:
    """The live version covering `instant`, if any (at most one in a sound chain)."""
    return next((v for v in chain if not v.retracted and covers(v, instant)), None)


# -- resolve ---------------------------------------------------------------------------------------------


def resolve(chain: Sequence[FactVersion], candidate: FactCandidate) -> Resolution:
    """What to do with `candidate` against its chain. Rules, in order (t = candidate.valid_from):

    1. Replay: a version (live or retracted) already lists every one of the candidate's turn ids -> nothing.
       A candidate without turn ids has no idempotency key and is never treated as a replay.
    2. No live version covers t -> insert [t, start of the next live version), or [t, None) when none starts
       later: a late statement about the past fills the gap before the chain without touching it.
    3. The live version v covering t has the same value -> add the candidate's new turn ids to v, nothing else.
    4. Correction, different value -> v was never true: retract v, insert the candidate over v's exact interval
       with supersedes=v.id.
    5. v.valid_from < t, different value (a state change) -> close v at t, insert [t, v.valid_to). A change in
       the middle of history keeps the later versions; a change after the open version becomes the open one.
    6. v.valid_from == t, different value (a tie) -> the stronger statement wins: source rank, then confidence,
       then the lexicographically larger normalised value (only so the outcome does not depend on order).
       Candidate wins: as rule 4. Candidate loses: insert it over v's interval already retracted, kept for
       history and never current.
    """
    _require_aware(candidate.valid_from, "candidate.valid_from")
    _require_same_key(chain, candidate)
    if _is_replay(chain, candidate):
        return Resolution()
    current = current_at(chain, candidate.valid_from)
    if current is None:
        return _fill_gap(chain, candidate)
    if normalise(current.value) == normalise(candidate.value):
        return _restate(current, candidate)
    if candidate.correction:
        return _supersede(current, candidate)
    if current.valid_from < candidate.valid_from:
        return _state_change(current, candidate)
    return _tie(current, candidate)


def _is_replay(chain: Sequence[FactVersion], candidate: FactCandidate) -> bool:
    wanted = set(candidate.turn_ids)
    return bool(wanted) and any(wanted <= set(v.turn_ids) for v in chain)


def _fill_gap(chain: Sequence[FactVersion], candidate: FactCandidate) -> Resolution:
    t = candidate.valid_from
    # The next live version bounds the new one so two live versions never overlap; with none later the
    # candidate is the latest word and stays open.
    valid_to = min((v.valid_from for v in chain if not v.retracted and v.valid_from > t), default=None)
    return Resolution(insert=(NewVersion(candidate, t, valid_to),))


def _restate(current: FactVersion, candidate: FactCandidate) -> Resolution:
    new_ids = tuple(tid for tid in dict.fromkeys(candidate.turn_ids) if tid not in current.turn_ids)
    if not new_ids:
        return Resolution()
    return Resolution(add_provenance=((current.id, new_ids),))


def _supersede(current: FactVersion, candidate: FactCandidate) -> Resolution:
    # The replacement inherits the whole interval: it is what should have been stored in the first place.
    new = NewVersion(candidate, current.valid_from, current.valid_to, supersedes=current.id)
    return Resolution(retract=(current.id,), insert=(new,))


def _state_change(current: FactVersion, candidate: FactCandidate) -> Resolution:
    t = candidate.valid_from
    return Resolution(close=((current.id, t),), insert=(NewVersion(candidate, t, current.valid_to),))


def _tie(current: FactVersion, candidate: FactCandidate) -> Resolution:
    if _strength(candidate.source, candidate.confidence, candidate.value) > _strength(
        current.source, current.confidence, current.value
    ):
        return _supersede(current, candidate)
    loser = NewVersion(candidate, current.valid_from, current.valid_to, retracted=True)
    return Resolution(insert=(loser,))


def _strength(source: str, confidence: float, value: str) -> tuple[int, float, str]:
    # The value is last and only there to make the order total: equal normalised values never get here.
    return (SOURCE_RANK.get(source, 0), confidence, normalise(value))


def _require_aware(instant: datetime, what: str) -> None:
    # A naive datetime cannot be compared with the stored (aware) ones; fail with a reason, not a TypeError.
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise ValueError(f"{what} must be timezone-aware, got {instant!r}")


def _require_same_key(chain: Sequence[FactVersion], candidate: FactCandidate) -> None:
    key = (normalise(candidate.entity), normalise(candidate.attribute))
    for v in chain:
        if (normalise(v.entity), normalise(v.attribute)) != key:
            raise ValueError(
                f"candidate {candidate.entity!r}/{candidate.attribute!r} does not belong to the chain of "
                f"{v.entity!r}/{v.attribute!r}"
            )


# -- correction hints ------------------------------------------------------------------------------------


def resolve_hint(open_facts: Sequence[FactVersion], hint: CorrectionHint) -> FactCandidate | None:
    """Which fact a bare correction ("不对，是杭州不是苏州") refers to, as a correction candidate, or None.

    The target is the live open fact whose value equals hint.old_value (normalised). None when:
    old_value is None (without the old value any pick is a guess, and a wrong correction retracts a true fact);
    no open fact has that value; open facts of more than one (entity, attribute) have it (ambiguous);
    or new_value equals old_value (nothing to correct).
    The candidate's valid_from is max(hint.valid_from, target.valid_from) so that `resolve` finds the very
    version the hint matched, even if the correcting turn's clock is behind the fact's.
    """
    if hint.old_value is None:
        return None
    old = normalise(hint.old_value)
    if normalise(hint.new_value) == old:
        return None
    matches = [f for f in open_facts if not f.retracted and f.valid_to is None and normalise(f.value) == old]
    if len({(f.entity, f.attribute) for f in matches}) != 1:
        return None
    target = max(matches, key=lambda f: f.valid_from)
    return FactCandidate(
        entity=target.entity,
        attribute=target.attribute,
        value=hint.new_value,
        valid_from=max(hint.valid_from, target.valid_from),
        source=hint.source,
        confidence=hint.confidence,
        turn_ids=hint.turn_ids,
        correction=True,
    )


# -- apply / check ---------------------------------------------------------------------------------------


def apply(chain: Sequence[FactVersion], resolution: Resolution, *, next_id: int) -> list[FactVersion]:
    """The chain after `resolution`, as the repository would store it (system-time stamps aside).

    Existing versions keep their order and ids: closed ones get valid_to, retracted ones (resolution.retract
    and every insert's supersedes) get retracted=True, provenance is merged without duplicates. Inserted
    versions follow, with ids next_id, next_id + 1, ... Raises ValueError for an id not in the chain.
    """
    known = {v.id for v in chain}
    closes = dict(resolution.close)
    retracts = set(resolution.retract) | {n.supersedes for n in resolution.insert if n.supersedes is not None}
    provenance: dict[int, tuple[str, ...]] = {}
    for vid, turn_ids in resolution.add_provenance:
        provenance[vid] = provenance.get(vid, ()) + turn_ids
    unknown = (set(closes) | retracts | set(provenance)) - known
    if unknown:
        raise ValueError(f"resolution names versions not in the chain: {sorted(unknown)}")

    def updated(v: FactVersion) -> FactVersion:
        return replace(
            v,
            valid_to=closes.get(v.id, v.valid_to),
            retracted=v.retracted or v.id in retracts,
            turn_ids=_merge(v.turn_ids, provenance.get(v.id, ())),
        )

    inserted = [_stored(n, next_id + i) for i, n in enumerate(resolution.insert)]
    return [updated(v) for v in chain] + inserted


def _merge(old: Iterable[str], new: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*old, *new]))


def _stored(new: NewVersion, version_id: int) -> FactVersion:
    c = new.candidate
    return FactVersion(
        id=version_id,
        entity=c.entity,
        attribute=c.attribute,
        value=c.value,
        valid_from=new.valid_from,
        valid_to=new.valid_to,
        source=c.source,
        confidence=c.confidence,
        turn_ids=_merge(c.turn_ids, ()),
        retracted=new.retracted,
    )


def check_chain(chain: Sequence[FactVersion]) -> list[str]:
    """Invariant violations of one chain, [] when sound:

    ids unique; one (entity, attribute) (normalised); datetimes timezone-aware; valid_from < valid_to when
    closed; live versions' intervals do not overlap; at most one live open version.
    """
    problems = _identity_problems(chain)
    naive = [v.id for v in chain if not _all_aware(v)]
    if naive:
        # Interval checks would compare naive with aware datetimes; report the cause instead.
        return [*problems, f"versions {naive} have naive datetimes"]
    problems += [
        f"version {v.id}: valid_from {v.valid_from} >= valid_to {v.valid_to}" for v in chain if not _proper(v)
    ]
    live = [v for v in chain if not v.retracted]
    open_ids = [v.id for v in live if v.valid_to is None]
    if len(open_ids) > 1:
        problems.append(f"more than one live open version: {open_ids}")
    problems += [
        f"live versions {a.id} and {b.id} overlap" for a, b in combinations(live, 2) if _overlap(a, b)
    ]
    return problems


def _identity_problems(chain: Sequence[FactVersion]) -> list[str]:
    problems: list[str] = []
    ids = [v.id for v in chain]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        problems.append(f"duplicate version ids: {duplicated}")
    keys = {(normalise(v.entity), normalise(v.attribute)) for v in chain}
    if len(keys) > 1:
        problems.append(f"more than one (entity, attribute) in the chain: {sorted(keys)}")
    return problems


def _all_aware(v: FactVersion) -> bool:
    return all(
        d.tzinfo is not None and d.utcoffset() is not None
        for d in (v.valid_from, v.valid_to)
        if d is not None
    )


def _proper(v: FactVersion) -> bool:
    return v.valid_to is None or v.valid_from < v.valid_to


def _overlap(a: FactVersion, b: FactVersion) -> bool:
    a_before_b_ends = b.valid_to is None or a.valid_from < b.valid_to
    b_before_a_ends = a.valid_to is None or b.valid_from < a.valid_to
    return a_before_b_ends and b_before_a_ends
