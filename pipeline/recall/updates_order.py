"""Knowledge updates in recall (issue 39): a statement a newer one superseded ranks below its successor.

Two sources of links, one rule. Review links pairs (pipeline/review/updates.py, and the rule-table fact
chains) and recall reads the links with each episode (`RecallEpisode.superseded_by`); for the pairs review
has not seen yet (one side still waits for its review: the read-your-writes window), the same rules are
applied here among the first hits. Either way the older statement is demoted, never dropped: it stays in
the list flagged `superseded` with its `valid_to`, below the statement that replaced it, which ranks at
least as high as the older one did (the question was asked in the old value's words). `explain` says which
statement superseded which, and whether review or recall found it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import datetime
from itertools import combinations

import numpy as np

from pipeline.core.models import EPISODE, Hit
from pipeline.core.ports import Vector
from pipeline.core.recall_rows import RecallEpisode
from pipeline.core.review_records import Statement
from pipeline.recall.tuning import RecallTuning
from pipeline.review.claims import claim
from pipeline.review.updates import UpdateParams, same_voice, says_it_changed, verdict

Link = tuple[int, int, str, datetime]  # (old episode id, new episode id, found by: review | recall, since)


def successors(rows: Iterable[RecallEpisode]) -> set[int]:
    """The episode ids that superseded these (review's links), to be made candidates if they are not."""
    return {s for row in rows for s in row.superseded_by}


def order(
    hits: list[Hit],
    rows: dict[int, RecallEpisode],
    tuning: RecallTuning,
    query: str = "",
    k: int = 10,
    vectors: Callable[[list[int]], dict[int, Vector]] | None = None,
) -> list[Hit]:
    """`hits` with every superseded statement below its successor (see the module docstring); unchanged
    when `tuning.updates` is off."""
    if not tuning.updates:
        return hits
    position = {_episode_id(h): i for i, h in enumerate(hits) if h.kind == "episode"}
    links = _review_links(position, rows) + _recall_links(hits, position, rows, tuning.update_window)
    out = _apply(list(hits), position, links, tuning.update_demotion, flag=True)
    if tuning.update_order_reviewed and asks_present(query):
        done = {(o, n) for o, n, *_ in links}
        # Only among the first k: the order changes, the hits returned do not (no evidence leaves the list).
        window = min(tuning.update_window, k)
        cosine = _LazyCosines(out, position, window, vectors)
        soft = _soft_links(out, position, rows, window, done, tuning, cosine)
        out = _apply(out, position, soft, SOFT_DEMOTION, flag=False)
    return _flag_unmatched(out, position, rows)


# A question about the past ("where did she live before", "以前", "一开始") wants the older statement.
_PAST_QUESTION = re.compile(
    r"\b(?:did|was|were|used\s+to|before|previously|originally|at\s+first|first|formerly|earlier|old|"
    r"last\s+time|back\s+then|once)\b|以前|之前|原来|当时|一开始|曾经|最早|过去|上次",
    re.I,
)


def asks_present(query: str) -> bool:
    """Whether the question asks what holds now: it does not ask about the past."""
    return not _PAST_QUESTION.search(query)


def _apply(
    out: list[Hit], position: dict[int, int], links: list[Link], demotion: float, *, flag: bool
) -> list[Hit]:
    """Each link's newer statement at least as high as the older one ranked, the older at `demotion` of
    it; with `flag`, the older one is marked superseded with its valid_to (review's links and the
    read-your-writes window); without, it is only ordered (recall's own reading of reviewed pairs)."""
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
        if flag:
            n = replace(n, score=lifted, supersedes=(*n.supersedes, o.id), explain=n_explain)
            o = replace(
                o,
                score=min(o.score, lifted * demotion),
                superseded=True,
                valid_to=min(since, o.valid_to) if o.valid_to else since,
                superseded_by=(*o.superseded_by, n.id),
                explain=o_explain,
            )
        else:
            # Ordered, not judged: the newer one just above the older (rank_key puts it first on a tie).
            n = replace(n, score=lifted, explain={**(n.explain or {}), "ordered_before": o.id})
            o = replace(
                o, score=min(o.score, lifted * demotion), explain={**(o.explain or {}), "ordered_after": n.id}
            )
        out[position[old]], out[position[new]] = o, n
    return out


def _soft_links(
    hits: list[Hit],
    position: dict[int, int],
    rows: dict[int, RecallEpisode],
    window: int,
    done: set[tuple[int, int]],
    tuning: RecallTuning,
    cosine: _LazyCosines,
) -> list[Link]:
    """Reviewed pairs among the first `window` hits that the loose rules read as an update, for a question
    about the present: ordered newer first. An operator's undo is respected."""
    top = [rows[i] for i in sorted(position, key=lambda i: -hits[position[i]].score)[:window] if i in rows]
    out: list[Link] = []
    for a, b in combinations(top, 2):
        old, new = (a, b) if (a.ts, a.id) < (b.ts, b.id) else (b, a)
        if (old.id, new.id) in done or new.id in old.undone_with or not (a.reviewed and b.reviewed):
            continue
        # Cheapest test last: the vectors are read only for a pair that passes everything else.
        if related(old, new) or (
            _same_answer(old, new, hits[position[old.id]], hits[position[new.id]], tuning.update_answer_ratio)
            and cosine.get(old.id, new.id) >= tuning.update_answer_cosine
        ):
            out.append((old.id, new.id, "recall", new.ts))
    return out


class _LazyCosines:
    """Cosine of two of the first `window` episode hits, from their stored vectors, read on first use (one
    read for all of them): most questions have no pair that needs it."""

    def __init__(
        self,
        hits: list[Hit],
        position: dict[int, int],
        window: int,
        vectors: Callable[[list[int]], dict[int, Vector]] | None,
    ) -> None:
        self._top = sorted(position, key=lambda i: -hits[position[i]].score)[:window]
        self._vectors = vectors
        self._sims: dict[tuple[int, int], float] | None = None

    def get(self, a: int, b: int) -> float:
        if self._sims is None:
            self._sims = self._read()
        return self._sims.get((a, b), 0.0)

    def _read(self) -> dict[tuple[int, int], float]:
        found = self._vectors(self._top) if self._vectors is not None else {}
        ids = [i for i in self._top if i in found]
        if len(ids) < 2:
            return {}
        matrix = np.stack([found[i] for i in ids]).astype(np.float32)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9)
        sims = matrix @ matrix.T
        return {(a, b): float(sims[x, y]) for x, a in enumerate(ids) for y, b in enumerate(ids) if a != b}


def _same_answer(old: RecallEpisode, new: RecallEpisode, old_hit: Hit, new_hit: Hit, ratio: float) -> bool:
    """Two answers to the same question about the present, by the same person, about as relevant (the newer
    at least `ratio` of the older's score): the newer is the better guess at what holds now."""
    return ratio > 0 and new_hit.score >= ratio * old_hit.score and same_voice(_said(old), _said(new))


LOOSE = UpdateParams(loose=True)
# An ordered pair: the older just below the newer, not pushed down the list (nothing says it is stale).
SOFT_DEMOTION = 0.99


def related(old: RecallEpisode, new: RecallEpisode) -> bool:
    """Whether recall reads `new` as a newer statement of what `old` says (the loose rules, or the same
    person saying something changed about a subject they share): enough to order, never to flag."""
    a, b = _said(old), _said(new)
    if verdict(a, b, LOOSE) is not None:
        return True
    o, n = claim(a.text), claim(b.text)
    shares = (o.subject & n.subject) or {v for v in o.values & n.values if v[0] == "p"}
    return bool(shares) and says_it_changed(a, b)


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
