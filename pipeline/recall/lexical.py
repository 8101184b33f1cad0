"""BM25 over short texts: the lexical half of hybrid recall, and the bench's floor.

Pure and in-memory. Why not PostgreSQL full-text: `ts_rank` has no inverse document frequency, so in an
OR query a turn that only repeats a speaker's name ranks with one that shares the rare word the question
is about; and ranking every match of an OR query over 100,000 rows of one scope costs PostgreSQL more
than the whole latency budget of a recall (BENCHMARKS.md, `hindsight bench recall`). Postings are numpy
arrays, so a query costs a few vector operations per query term.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import numpy.typing as npt
import Stemmer

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CJK_CHARS = "\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af"
_CJK = re.compile(f"[{_CJK_CHARS}]")
# Runs of CJK characters, and runs of the other word characters between them.
_RUN = re.compile(f"[{_CJK_CHARS}]+|[^\\W_{_CJK_CHARS}]+")
# Function words carry no topic; without them BM25 stops matching "what did she do" to every turn.
_STOP_TEXT = """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most my
    myself no nor not now of off on once only or other our ours ourselves out over own same she should so
    some such than that the their theirs them themselves then there these they this those through to too
    under until up very was we were what when where which while who whom why will with would you your
    yours yourself yourselves s t don ve ll re m d also yes yeah oh wow hey hi really got get go went
    gonna im thats it's"""
STOPWORDS = frozenset(_STOP_TEXT.split())
_stemmer = Stemmer.Stemmer("english")


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return str(_stemmer.stemWord(word))


def words(text: str) -> list[str]:
    """The words of a text, as written."""
    return _WORD.findall(text)


def tokens(text: str) -> list[str]:
    """Lower-cased, stemmed content words; CJK text (no spaces) becomes its characters and their
    overlapping bigrams. Bigrams alone miss a one-character word in new company: "我的猫" holds 我的 and
    的猫, "家里那只猫很胖" neither, and Chinese says much in one character (猫, 车, 书, 药). The characters
    match it; BM25's idf keeps the common ones (的, 我, 是) from counting (bench: bilingual_zh BM25 R@10
    0.548 -> 0.696, English untouched)."""
    out: list[str] = []
    # A number or a Latin word written against Chinese ("房租3800块", "API套餐") is a word of its own: taken
    # into the CJK run, it was dropped and made a bigram that was never said (租块).
    for word in _RUN.findall(text.lower()):
        if _CJK.match(word):
            out += word
            out += [word[i : i + 2] for i in range(len(word) - 1)]
        elif word not in STOPWORDS:
            out.append(_stem(word))
    return out


@dataclass
class BM25:
    """An append-only BM25 index; document ids are whatever the caller uses (memory ids).

    `add` takes per-document term weights, so one document can hold fields of different weight
    (a turn's own words at 1.0, the turn before it at a fraction).
    """

    # Turns are short and of similar length: less length normalisation and earlier term saturation than
    # the textbook 1.2 / 0.75 (+0.01 R@5 on LoCoMo 1-5).
    # No pseudo-relevance feedback: RM3-style expansion (the 10 best idf-weighted terms of the 3 best
    # matches at 0.3, participants' names left out) took hybrid recall's R@5 / R@10 on LoCoMo 1-5 from
    # 0.723 / 0.796 to 0.708 / 0.788 (held out 0.699 / 0.776 -> 0.695 / 0.772): one conversation is one
    # web of topics, and its best matches' other words lead away from the question.
    k1: float = 0.9
    b: float = 0.5
    _ids: list[object] = field(default_factory=list)
    _rows: dict[object, int] = field(default_factory=dict)
    # Document lengths by row, in an array grown by doubling (the first `len(_ids)` are in use). They were
    # a Python list, which cost 18 ms to turn into an array at 100,000 documents, with the GIL held, at
    # every top-up: the recalls running beside it stalled (`hindsight bench recall` p95 ratio 1.59 with a
    # top-up a second, 1.33 with none).
    _lengths: npt.NDArray[np.float32] = field(default_factory=lambda: np.zeros(64, dtype=np.float32))
    _terms: dict[str, _Posting] = field(default_factory=dict)
    _stale: set[str] = field(default_factory=set)  # terms with pending postings
    postings: int = 0  # (term, document) entries appended: what the index's memory grows with

    def __len__(self) -> int:
        return len(self._ids)

    @property
    def vocabulary(self) -> int:
        """Distinct terms indexed."""
        return len(self._terms)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._rows

    def add(self, doc_id: object, weighted_terms: dict[str, float]) -> None:
        row = len(self._ids)
        if row == self._lengths.size:
            grown = np.zeros(2 * row, dtype=np.float32)
            grown[:row] = self._lengths
            self._lengths = grown
        # The length's slot exists before the document does: a search running beside this sees
        # `len(_ids)` documents and at least as many lengths.
        self._ids.append(doc_id)
        self._rows[doc_id] = row
        self._append(row, weighted_terms)

    def extend(self, doc_id: object, weighted_terms: dict[str, float]) -> bool:
        """Add terms to a document already indexed (False if it is not): its term frequencies and length
        grow as if they had been there from the start."""
        row = self._rows.get(doc_id)
        if row is None:
            return False
        self._append(row, weighted_terms)
        return True

    def _append(self, row: int, weighted_terms: dict[str, float]) -> None:
        self._lengths[row] += sum(weighted_terms.values())
        self.postings += len(weighted_terms)
        for term, tf in weighted_terms.items():
            posting = self._terms.get(term)
            if posting is None:
                posting = self._terms[term] = _Posting()
            posting.pending.append((row, tf))
        self._stale.update(weighted_terms)

    def freeze(self) -> None:
        """Fold the postings appended since the last freeze into their terms' search arrays. Work in
        proportion to what was appended, not to the index: a top-up adding a frequent word extends its
        arrays rather than rebuilding them from every (row, tf) pair.

        Only the caller that appends may freeze (the lexicon's refresh thread, under its scope's lock);
        searches beside it read the terms' arrays as they were or as they are, never half of either.
        Until then, search merges a term's pending postings for itself, without keeping them."""
        for term in self._stale:
            self._terms[term] = self._terms[term].merged()
        self._stale.clear()

    def add_text(self, doc_id: object, text: str, *, context: str = "", context_weight: float = 0.0) -> None:
        self.add(doc_id, weighted_terms(text, context=context, context_weight=context_weight))

    def search(self, query: str, limit: int, *, shares: bool = False) -> list[tuple[object, float]]:
        """The `limit` best (doc id, BM25 score) pairs, best first; only documents sharing a query term. With
        `shares`, each score over the query's `ceiling` (computed in the same pass), in [0, 1]."""
        terms = list(dict.fromkeys(tokens(query)))
        n = len(self._ids)
        if not terms or n == 0:
            return []
        # A view: a top-up beside this search may grow a document's length (`extend`), which moves its
        # score a little, and may replace the array when it grows, which leaves this one as it was.
        lengths = self._lengths[:n]
        avg = float(lengths.mean()) or 1.0
        scores = np.zeros(n, dtype=np.float32)
        ceiling = 0.0
        for term in terms:
            posting = self._posting(term, n)
            if posting is None:
                continue
            rows, tf = posting
            idf = _idf(n, len(rows))
            ceiling += idf * (self.k1 + 1.0)
            norm = self.k1 * (1.0 - self.b + self.b * lengths[rows] / avg)
            scores[rows] += idf * tf * (self.k1 + 1.0) / (tf + norm)
        hit = np.flatnonzero(scores)
        if hit.size == 0:
            return []
        top = _best(scores, hit, limit)
        scale = 1.0 / ceiling if shares else 1.0
        return [(self._ids[int(i)], float(scores[int(i)]) * scale) for i in top]

    def ceiling(self, query: str) -> float:
        """The most any document could score for `query`: Σ idf × (k1 + 1) over its indexed terms (each term's
        part tends to that as its frequency grows). A score over this is the share of the query a document
        matches, comparable across queries and scopes, which a raw BM25 score is not. 0 when no term of the
        query is indexed."""
        n = len(self._ids)
        postings = (self._posting(term, n) for term in dict.fromkeys(tokens(query)))
        return sum(_idf(n, len(p[0])) * (self.k1 + 1.0) for p in postings if p is not None)

    def _posting(self, term: str, n: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]] | None:
        """The term's rows below `n` (the documents the search began with) and their frequencies: a
        top-up running beside a search may append or freeze documents it has no score slot for."""
        posting = self._terms.get(term)
        if posting is None:
            return None
        if posting.pending:
            posting = posting.merged()
        rows, tf = posting.rows, posting.tf
        if rows.size and rows[-1] >= n:
            cut = int(np.searchsorted(rows, n))
            rows, tf = rows[:cut], tf[:cut]
        return (rows, tf) if rows.size else None


@dataclass(frozen=True, slots=True)
class _Posting:
    """One term's documents: rows ascending with their term frequencies, and what was appended since
    (in order; `BM25.extend` may revisit an earlier row)."""

    rows: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    tf: npt.NDArray[np.float32] = field(default_factory=lambda: np.zeros(0, dtype=np.float32))
    pending: list[tuple[int, float]] = field(default_factory=list)

    def merged(self) -> _Posting:
        """The same postings with nothing pending: one entry per row, frequencies summed."""
        if not self.pending:
            return self
        pending = self.pending[:]  # a search may merge while the writer appends
        new_rows = np.fromiter((r for r, _ in pending), dtype=np.int64, count=len(pending))
        new_tf = np.fromiter((w for _, w in pending), dtype=np.float32, count=len(pending))
        rows, tf = np.concatenate((self.rows, new_rows)), np.concatenate((self.tf, new_tf))
        in_order = (self.rows.size == 0 or new_rows[0] > self.rows[-1]) and bool(
            np.all(np.diff(new_rows) > 0)
        )
        if not in_order:
            rows, inverse = np.unique(rows, return_inverse=True)
            tf = np.bincount(inverse, weights=tf).astype(np.float32)
        return _Posting(rows, tf)


def _idf(n: int, df: int) -> float:
    """BM25's idf of a term found in `df` of `n` documents (never negative)."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def _best(scores: npt.NDArray[np.float32], hit: npt.NDArray[np.int64], limit: int) -> npt.NDArray[np.int64]:
    """The `limit` best of the rows `hit` (ascending), best first, ties in row order.

    A query sharing one frequent word ("share" is in 40% of a LoCoMo scope) hits tens of thousands of
    documents, and a stable sort of them all was most of a search (1.2 of 1.9 ms at 100,000 documents).
    Only the scores reaching the `limit`-th best are sorted: the same rows, in the same order."""
    values = scores[hit]
    if hit.size > limit:
        kth = np.partition(values, hit.size - limit)[hit.size - limit]
        reach = values >= kth  # more than `limit` only when the limit-th score ties
        hit, values = hit[reach], values[reach]
    return hit[np.argsort(-values, kind="stable")[:limit]]


def weighted_terms(text: str, *, context: str = "", context_weight: float = 0.0) -> dict[str, float]:
    """Term frequencies of `text`, plus those of `context` scaled by `context_weight`. (A context capped at the
    text's own length was measured by issue 45 and not taken: LongMemEval R@10 -0.050.)"""
    counts: dict[str, float] = dict(Counter(tokens(text)))
    if context and context_weight > 0:
        for term, tf in Counter(tokens(context)).items():
            counts[term] = counts.get(term, 0.0) + tf * context_weight
    return counts


def build(docs: Iterable[tuple[object, str]]) -> BM25:
    index = BM25()
    for doc_id, text in docs:
        index.add_text(doc_id, text)
    index.freeze()
    return index
