"""pipeline.review.passages: the windows of a long turn beyond what its main vector reads. Pure."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.review.passages import DEFAULT_PARAMS, PassageParams, passages, windows

_TOKEN = re.compile(r"\S+")
# The shape the brief named (MiniLM's whole window); the defaults are half of it (see PassageParams).
WIDE = PassageParams(words=180, overlap=30, chars=1_200)


def _words(n: int, prefix: str = "w") -> str:
    return " ".join(f"{prefix}{i}" for i in range(n))


def _token_index(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The windows as (first token, last token + 1)."""
    starts = {m.start(): i for i, m in enumerate(_TOKEN.finditer(text))}
    ends = {m.end(): i for i, m in enumerate(_TOKEN.finditer(text))}
    return [(starts[a], ends[b] + 1) for a, b in spans]


def test_a_turn_one_window_holds_has_no_passages() -> None:
    assert passages("") == []
    assert passages("   \n ") == []
    assert passages("I moved to Lisbon last month") == []
    assert passages(_words(DEFAULT_PARAMS.words)) == []
    assert passages(_words(180), WIDE) == []
    assert windows(_words(180), WIDE) == [(0, len(_words(180)))]


def test_one_word_past_the_first_window_gives_one_passage_overlapping_it() -> None:
    text = _words(181)
    got = _token_index(text, windows(text, WIDE))
    assert got == [(0, 180), (150, 181)]
    assert passages(text, WIDE) == [_words(181)[text.index("w150") :]]


def test_windows_cover_every_word_in_order_with_the_overlap() -> None:
    text = _words(5_000)
    got = _token_index(text, windows(text, WIDE))
    assert got[0] == (0, 180)
    assert got[-1][1] == 5_000
    for (_a0, b0), (a1, b1) in itertools.pairwise(got):
        assert b0 - a1 == WIDE.overlap  # each starts 30 words before the previous one ends
        assert b1 - a1 <= WIDE.words
    assert len(passages(text, WIDE)) == len(got) - 1 == 33


def test_a_window_ends_before_its_character_budget() -> None:
    # Code: few whitespace tokens, many word pieces each. 40-character tokens: 29 of them fit 1,200.
    token = "self._shard.update(UpdateOperation.x(y))"
    text = " ".join([token] * 300)
    spans = windows(text, WIDE)
    assert all(b - a <= WIDE.chars for a, b in spans)
    got = _token_index(text, spans)
    assert got[0] == (0, 29)
    assert got[-1][1] == 300
    assert all(b0 > a1 for (_, b0), (a1, _) in itertools.pairwise(got))  # overlapping


def test_a_token_longer_than_the_budget_is_a_window_of_its_own_and_windows_still_advance() -> None:
    blob = "A" * 50_000
    text = f"start {blob} end " + _words(10)
    got = _token_index(text, windows(text))
    assert got == [(0, 1), (1, 2), (2, 13)]
    texts = passages(text)
    assert len(texts[0]) == 4 * DEFAULT_PARAMS.chars  # cut: the model reads its first pieces only
    assert texts[1].startswith("end w0")


def test_more_windows_than_the_cap_are_spread_evenly_and_keep_the_end() -> None:
    params = PassageParams(words=180, overlap=30, chars=1_200, cap=10)
    text = _words(20_000)
    every = windows(text, params)[1:]
    assert len(every) > 10
    got = passages(text, params)
    assert len(got) == 10
    assert got[0] == text[every[0][0] : every[0][1]]
    assert got[-1] == text[every[-1][0] : every[-1][1]]  # the end of the turn is always read
    starts = [int(p.split()[0][1:]) for p in got]  # the number of each passage's first word
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert min(gaps) > 0
    assert max(gaps) - min(gaps) <= 2 * (params.words - params.overlap)  # even, to a step


def test_the_default_cap_bounds_a_256_kib_turn() -> None:
    text = ("word " * (256 * 1024 // 5))[: 256 * 1024]
    assert len(passages(text)) == DEFAULT_PARAMS.cap == 256


@pytest.mark.parametrize(
    "params",
    [{"words": 0}, {"overlap": 180}, {"overlap": -1}, {"chars": 0}, {"cap": -1}],
)
def test_bad_parameters_are_refused(params: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        PassageParams(**params)


@settings(max_examples=200, deadline=None)
@given(
    words=st.lists(st.text(alphabet="ab界 é\n\t", min_size=0, max_size=30), max_size=400),
    size=st.integers(2, 40),
    overlap=st.integers(0, 39),
    chars=st.integers(1, 300),
)
def test_windows_cover_the_text_whatever_its_shape(
    words: list[str], size: int, overlap: int, chars: int
) -> None:
    params = PassageParams(words=size, overlap=min(overlap, size - 1), chars=chars, cap=10_000)
    text = " ".join(words)
    tokens = [m.span() for m in _TOKEN.finditer(text)]
    spans = windows(text, params)
    if not tokens:
        assert spans == []
        return
    covered = [any(a <= s and e <= b for a, b in spans) for s, e in tokens]
    assert all(covered)
    assert spans == sorted(spans)
    assert all(a1 > a0 for (a0, _), (a1, _) in itertools.pairwise(spans))  # always advancing
    assert len(passages(text, params)) == len(spans) - 1
