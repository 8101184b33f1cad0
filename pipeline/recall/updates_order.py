"""Knowledge updates in recall (issue 39): a statement a newer one superseded ranks below its successor.

Two sources of links, one rule. Review links pairs (pipeline/review/updates.py, and the rule-table fact
chains) and recall reads the links with each episode (`RecallEpisode.superseded_by`); for the pairs review
has not seen yet (one side still waits for its review: the read-your-writes window), the same rules are
applied here among the first hits. Either way the older statement is demoted, never dropped: it stays in
the list flagged `superseded` with its `valid_to`, below the statement that replaced it, which ranks at
least as high as the older one did (the question was asked in the old value's words). `explain` says which
statement superseded which, and whether review or recall found it. For a question about the previous
value or about how it changed, the links flag the older statement but do not push it down.

Then the question decides the order among the first k hits (issue 46, `pipeline.recall.value_order`): when
it asks a value and several of those hits state one for its subject, the newest comes first (the older ones
follow it, flagged `earlier_value` in `explain`), or the oldest for "previous", or time order for "how has
it changed". This reads the hits themselves, so it needs no link and holds for turns review has not seen.
It replaced issue 39's looser pairwise rules for reviewed pairs (one shared word, or two answers that read
alike by their vectors), which ordered the echo and left the original first.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, datetime
from itertools import combinations

from pipeline.core.models import EPISODE, Hit
from pipeline.core.recall_rows import RecallEpisode
from pipeline.core.review_records import Statement
from pipeline.recall import value_order
from pipeline.recall.hits import rank_key
from pipeline.recall.tuning import RecallTuning
from pipeline.review.updates import verdict

Link = tuple[int, int, str, datetime]  # (old episode id, new episode id, found by: review | recall, since)


def successors(rows: Iterable[RecallEpisode]) -> set[int]:
    """The episode ids that superseded these (review's links), to be made candidates if they are not."""
    return {s for row in rows for s in row.superseded_by}


def order(
    hits: list[Hit], rows: dict[int, RecallEpisode], tuning: RecallTuning, query: str = "", k: int = 10
) -> list[Hit]:
    """`hits` with every superseded statement below its successor, then, for a question that asks a value,
    the statements of it among the first `k` in the order the question wants (see the module docstring);
    unchanged when `tuning.updates` is off."""
    if not tuning.updates:
        return hits
    asked = value_order.asks(query)
    position = {_episode_id(h): i for i, h in enumerate(hits) if h.kind == "episode"}
    links = _review_links(position, rows) + _recall_links(hits, position, rows, tuning.update_window)
    # A question about the previous value, or about how it changed, asks for the older statement too: the
    # links flag it, they do not push it down.
    keep = asked is not None and asked.ordering != value_order.CURRENT
    out = _apply(list(hits), position, links, 1.0 if keep else tuning.update_demotion)
    if tuning.value_order and asked is not None:
        out = _by_question(out, rows, query, k, lead=tuning.value_lead)
    return _flag_unmatched(out, position, rows)


def _by_question(
    hits: list[Hit], rows: dict[int, RecallEpisode], query: str, k: int, *, lead: bool
) -> list[Hit]:
    """The first `k` hits reordered by `value_order.order`: the hits that state the value asked for trade
    places (and scores) among themselves, the wanted one first of all with `lead` (the hits above it move
    one down); no hit enters or leaves the first `k`."""
    top = sorted(range(len(hits)), key=lambda i: rank_key(hits[i]), reverse=True)[:k]
    said = [_as_said(hits[i], rows) for i in top]
    new_order, notes = value_order.order(query, said, lead=lead)
    if not notes:
        return hits
    out = list(hits)
    for slot, j in enumerate(new_order):
        src, dst = top[j], top[slot]
        h = hits[src]
        explain = {**(h.explain or {}), **notes.get(j, {})}
        # The slot's score, a hair above the next slot's: the sort after this keeps the new order.
        score = hits[dst].score + (k - slot) * 1e-9 if src != dst else h.score
        out[src] = replace(h, score=score, explain=explain)
    return out


def _as_said(hit: Hit, rows: dict[int, RecallEpisode]) -> value_order.Said:
    row = rows.get(_episode_id(hit)) if hit.kind == "episode" else None
    if row is None:
        # A semantic memory (or a turn not hydrated): it keeps its place.
        return value_order.Said(-1, hit.event_time or datetime.min.replace(tzinfo=UTC), "memory", hit.text)
    return value_order.Said(row.id, row.ts, row.role or "user", row.content)


def _apply(out: list[Hit], position: dict[int, int], links: list[Link], demotion: float) -> list[Hit]:
    """Each link's newer statement at least as high as the older one ranked, the older flagged superseded
    with its valid_to, at `demotion` of the newer one's score (1.0: flagged only)."""
    for old, new, found_by, since in sorted(links, key=lambda x: x[3]):
        o, n = out[position[old]], out[position[new]]
        lifted = max(n.score, o.score)
        n_explain = {**(n.explain or {}), "supersedes": [*(n.explain or {}).get("supersedes", []), o.id]}
        o_explain = {
            **(o.explain or {}),
            "superseded_by": [*(o.explain or {}).get("superseded_by", []), n.id],
            "superseded_found_by": found_by,
            "update_demotion": demotion,
        }
        n = replace(n, score=lifted, supersedes=(*n.supersedes, o.id), explain=n_explain)
        o = replace(
            o,
            score=min(o.score, lifted * demotion),
            superseded=True,
            valid_to=min(since, o.valid_to) if o.valid_to else since,
            superseded_by=(*o.superseded_by, n.id),
            explain=o_explain,
        )
        out[position[old]], out[position[new]] = o, n
    return out


def _episode_id(hit: Hit) -> int:
    return int(hit.id.partition(":")[2])


def _review_links(position: dict[int, int], rows: dict[int, RecallEpisode]) -> list[Link]:
    out: list[Link] = []
    for old_id in position:
        row = rows.get(old_id)
        if row is None:
            continue
        for new_id in row.superseded_by:
            if new_id in position and (new := rows.get(new_id)) is not None:
                out.append((old_id, new_id, "review", new.ts))
    return out


def _recall_links(
    hits: list[Hit], position: dict[int, int], rows: dict[int, RecallEpisode], window: int
) -> list[Link]:
    """Pairs among the first `window` episode hits of which one side waits for its review."""
    top = [rows[i] for i in sorted(position, key=lambda i: -hits[position[i]].score)[:window] if i in rows]
    out: list[Link] = []
    for a, b in combinations(top, 2):
        if a.reviewed and b.reviewed:
            continue  # review has judged this pair: its links (or their absence, or an undo) stand
        old, new = (a, b) if (a.ts, a.id) < (b.ts, b.id) else (b, a)
        if new.id in old.superseded_by or new.id in old.undone_with:
            continue
        if verdict(_said(old), _said(new)) is not None:
            out.append((old.id, new.id, "recall", new.ts))
    return out


def _said(row: RecallEpisode) -> Statement:
    return Statement(row.id, row.ts, row.role or "user", row.speaker, row.content)


def _flag_unmatched(hits: list[Hit], position: dict[int, int], rows: dict[int, RecallEpisode]) -> list[Hit]:
    """A statement whose successor is not in the list (forgotten, cold, or past `as_of`... ) is still flagged
    with when it stopped holding; it is not demoted: nothing in the list replaces it."""
    out = list(hits)
    for episode_id, i in position.items():
        row = rows.get(episode_id)
        h = out[i]
        if row is None or not row.superseded_by or h.superseded_by:
            continue
        out[i] = replace(
            h,
            superseded=True,
            valid_to=row.superseded_at,
            superseded_by=tuple(f"{EPISODE}:{s}" for s in row.superseded_by),
        )
    return out
