"""Passages: the windows of a long turn beyond what its main embedding reads. Pure.

MiniLM reads 256 word pieces, about the first 180 words of prose: a fact deep in a long assistant reply is
invisible to the turn's one vector. A turn longer than one window therefore also gets a vector per window
of the rest, each a point of its own in the vector index that maps back to the episode (payload `passage`),
so a query about that fact finds the episode. The main vector stays what it was: dedup, clustering and the
quality score use it alone.

Windows are counted in whitespace tokens (`words`, `overlap` between neighbours) and also end before they
pass `chars` characters: a whitespace token of code (`self._shard.update(UpdateOperation.upsert(...))`) is
a dozen word pieces, and a window the model truncates would leave a gap. A turn needing more than `cap`
passages gets `cap` of them spread evenly over its length (gaps between them, the end always read), so that
the cost of a turn is bounded: 256 KiB of prose is ~620 windows of 90 words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(r"\S+")


@dataclass(frozen=True, slots=True)
class PassageParams:
    """The window is half what MiniLM could read (180 words, ~240 word pieces): its vector is the mean of
    its tokens', and one sentence among 180 words of something else barely moves it. A 45-word fact 5,000
    words into a 60 KB reply of mixed technical prose, against a question about it: the window holding it
    scored cosine 0.25 at 180 words (the best unrelated window 0.25: not found, tests/integration/
    test_long_turns.py), 0.41 at 120 (0.26), 0.56 at 90 (0.30), 0.69 at 60 (0.30). 90 words cost 256
    passages at ~18,000 words (~110 KB of prose; beyond, they are spread) and embed ~1.3x the text."""

    words: int = 90  # whitespace tokens per window
    overlap: int = 20  # tokens each window shares with the one before, so a sentence across a cut is whole
    chars: int = 600  # a window also ends before this many characters (code is many pieces per token)
    cap: int = 256  # at most this many passages per turn

    def __post_init__(self) -> None:
        if self.words < 1 or self.chars < 1 or self.cap < 0 or not 0 <= self.overlap < self.words:
            raise ValueError(f"bad passage parameters: {self}")


DEFAULT_PARAMS = PassageParams()


def windows(text: str, params: PassageParams = DEFAULT_PARAMS) -> list[tuple[int, int]]:
    """The windows that cover `text`, as (start, end) character offsets, in order, uncapped. The first is
    what the main vector reads; together they cover every token; each after the first starts `overlap`
    tokens (at most half the window before it) before the previous one ends. Empty for a blank text."""
    spans = [m.span() for m in _TOKEN.finditer(text)]
    n = len(spans)
    out: list[tuple[int, int]] = []
    start = 0
    while start < n:
        end = start + 1  # a window holds at least one token, however long
        limit = min(n, start + params.words)
        first = spans[start][0]
        while end < limit and spans[end][1] - first <= params.chars:
            end += 1
        out.append((first, spans[end - 1][1]))
        if end >= n:
            break
        # Step back at most half the window, so that a window of a few very long tokens still advances.
        start = end - min(params.overlap, (end - start) // 2)
    return out


def passages(text: str, params: PassageParams = DEFAULT_PARAMS) -> list[str]:
    """The texts to embed beside the main vector: every window after the first, at most `params.cap` of
    them (spread evenly over the text when there are more, the last one always among them). Empty for a
    turn that fits in one window."""
    spans = windows(text, params)[1:]
    if len(spans) > params.cap:
        if params.cap == 0:
            return []
        if params.cap == 1:
            spans = [spans[-1]]
        else:
            last = len(spans) - 1
            spans = [spans[round(i * last / (params.cap - 1))] for i in range(params.cap)]
    # A window of one huge token (a base64 blob) is cut: the model reads its first pieces only anyway.
    return [text[a : min(b, a + 4 * params.chars)] for a, b in spans]
