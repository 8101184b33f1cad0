"""Near-duplicate detection within a scope. Pure: vectors and texts in, merge decisions out.

A turn whose embedding has cosine >= threshold with a kept memory, and which says the same words, is the
same memory said again: the newer text survives (it is the more current wording), the older one is folded
into it and hands over its provenance and access count (DESIGN §2).

Why the words too: a merged turn leaves the index, and only its survivor can be found. On short chat
messages the embedding alone is no evidence of sameness: with the sender's name in the content, MiniLM put
1,834 of 6,295 messenger turns at cosine >= 0.95 with another ("Mei: the blue one" / "Mei: yes!! twice"),
and their own words were no longer searchable.

Why the values too: "the hotel room is 105 on the fourth floor, ..." and the same sentence with 106 share
every word but one (Jaccard 0.9) and sit at cosine 0.98, yet they state two different rooms. A merge would
leave only the newer value searchable, so texts whose values differ (numbers, dates, times, amounts,
versions, spelled-out numbers) are never the same memory.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pipeline.core.review_records import Memory

# Two texts say the same words when the Jaccard overlap of their word sets reaches this. Strict on purpose:
# a sender's name in both ("Mei: the blue one" / "Mei: the red one") already makes 0.6, and a missed merge
# costs a near-copy in the list while a wrong one loses a memory. Verbatim repeats, and a changed word in
# a long turn, still merge.
SAME_WORDS = 0.8
TEXT_CHARS = 4000  # of a long text, the words compared (enough to tell a different text)
_WORD = re.compile(r"[\u3400-\u9fff]|[^\W_]+", re.UNICODE)  # a CJK character is a word of its own
# A value: a token with a digit in it, with its separators, sign and unit ("$40", "10:30", "2026-03-04",
# "v1.2.3", "5pm", "40mg", "3,5%", "covid19"), a spelled-out English number ("second" and "once" left out:
# "a second opinion", "once upon"), or a run of Chinese numerals (the lone "一" excepted: it is "a" as often
# as "one").
_DIGITS = r"[$€£¥#+-]?[a-z]*\d(?:[a-z\d%]|[.,:/-](?=[a-z\d]))*"
_EN_NUMBER = (
    r"zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen"
    r"|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
    r"|hundred|thousand|million|billion|dozen|first|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth"
)
_ZH_NUMBER = "[零〇一二三四五六七八九十百千万亿两]"
_VALUE = re.compile(rf"{_DIGITS}|\b(?:{_EN_NUMBER})\b|{_ZH_NUMBER}{{2,}}|(?!一){_ZH_NUMBER}")


def values(text: str) -> frozenset[str]:
    """The values a text states (see _VALUE), normalised: NFKC (full-width digits), case-folded."""
    folded = unicodedata.normalize("NFKC", text[:TEXT_CHARS]).casefold()
    return frozenset(_VALUE.findall(folded))


def same_words(a: str, b: str) -> bool:
    """Whether two texts say (nearly) the same words, by the Jaccard overlap of their word sets, and state
    the same values: one changed number makes another statement however few words it changes."""
    if values(a) != values(b):
        return False
    wa, wb = set(_WORD.findall(a[:TEXT_CHARS].casefold())), set(_WORD.findall(b[:TEXT_CHARS].casefold()))
    if not wa or not wb:
        return wa == wb
    return len(wa & wb) / len(wa | wb) >= SAME_WORDS


@dataclass(frozen=True, slots=True)
class Merge:
    loser: int
    survivor: int
    similarity: float


@dataclass(frozen=True, slots=True)
class DedupPlan:
    max_similarity: dict[int, float]  # batch id -> highest cosine with anything kept before it
    merges: tuple[Merge, ...]


def _newer(a: Memory, b: Memory) -> bool:
    return (a.ts, a.id) > (b.ts, b.id)


def plan(batch: Sequence[Memory], kept: Sequence[Memory], *, threshold: float) -> DedupPlan:
    """Compare each batch memory (oldest first) against the kept ones and the batch members before it.

    A batch member that is merged away does not stay a comparison target; a survivor does.
    """
    targets: list[Memory] = list(kept)
    matrix = np.stack([m.vector for m in targets]) if targets else np.zeros((0, 0), dtype=np.float32)
    alive: dict[int, int] = {m.id: i for i, m in enumerate(targets)}  # id -> row in matrix
    max_sim: dict[int, float] = {}
    merges: list[Merge] = []
    for m in sorted(batch, key=lambda x: (x.ts, x.id)):
        best_row, best = -1, 0.0
        if alive:
            rows = np.fromiter(alive.values(), dtype=np.int64)
            sims = matrix[rows] @ m.vector
            k = int(np.argmax(sims))
            best_row, best = int(rows[k]), float(sims[k])
        max_sim[m.id] = best
        if best >= threshold and same_words(m.text, targets[best_row].text):
            other = targets[best_row]
            survivor, loser = (m, other) if _newer(m, other) else (other, m)
            merges.append(Merge(loser=loser.id, survivor=survivor.id, similarity=best))
            if loser.id in alive:
                row = alive.pop(loser.id)
                if survivor.id == m.id:  # the newcomer takes the loser's place as a target
                    targets[row] = m
                    matrix[row] = m.vector
                    alive[m.id] = row
            continue
        targets.append(m)
        matrix = np.vstack([matrix, m.vector[None, :]]) if matrix.size else m.vector[None, :].copy()
        alive[m.id] = len(targets) - 1
    return DedupPlan(max_similarity=max_sim, merges=tuple(merges))


def resolve_chains(merges: Sequence[Merge]) -> dict[int, int]:
    """loser -> final survivor, following chains (a merged into b, b merged into c => a into c)."""
    into = {m.loser: m.survivor for m in merges}
    final: dict[int, int] = {}
    for loser in into:
        seen = {loser}
        target = into[loser]
        while target in into and target not in seen:
            seen.add(target)
            target = into[target]
        final[loser] = target
    return final
