"""BM25's index mechanics: top-k selection, incremental freezes, searches beside a top-up."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from pipeline.recall import lexical


@pytest.mark.parametrize("limit", [1, 3, 10, 49, 50, 51, 400])
def test_best_selects_what_a_stable_sort_of_every_hit_would(limit: int) -> None:
    rng = np.random.default_rng(limit)
    # Few distinct values, so that the limit-th score ties with many others.
    scores = rng.integers(0, 6, size=2000).astype(np.float32) / 4
    hit = np.flatnonzero(scores)
    want = hit[np.argsort(-scores[hit], kind="stable")[:limit]]
    got = lexical._best(scores, hit, limit)
    assert got.tolist() == want.tolist()


def _terms(*words: str) -> dict[str, float]:
    return lexical.weighted_terms(" ".join(words))


def test_a_top_up_after_a_freeze_scores_as_if_indexed_at_once() -> None:
    docs = ["puppy shelter walk", "shelter volunteer", "red ball", "puppy ball"]
    topped, whole = lexical.BM25(), lexical.BM25()
    for i, text in enumerate(docs[:3]):
        topped.add(i, _terms(text))
    topped.freeze()
    # A top-up: the next turn's words reach an earlier document (extend) and a new one arrives.
    topped.extend(0, {"ball": 0.3})
    topped.add(3, _terms(docs[3]))
    topped.freeze()
    for i, text in enumerate(docs):
        whole.add(i, {**_terms(text), **({"ball": 0.3} if i == 0 else {})})
    whole.freeze()
    for query in ("ball", "puppy shelter", "red ball puppy"):
        got, want = topped.search(query, 10), whole.search(query, 10)
        assert [d for d, _ in got] == [d for d, _ in want]
        assert [s for _, s in got] == pytest.approx([s for _, s in want])
    rows = topped._terms["ball"].rows
    assert rows.tolist() == [0, 2, 3]  # one entry per document, ascending, the extension folded in
    assert topped._terms["ball"].tf[0] == pytest.approx(0.3)


class _ToppedUpMidSearch(lexical.BM25):
    """Appends (and freezes) a document the first time search reads a posting, as the lexicon's refresh
    thread may while a recall is searching."""

    fired = False

    def _posting(self, term: str, n: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]] | None:
        if not self.fired:
            self.fired = True
            self.add("late", _terms("puppy puppy puppy"))
            self.freeze()
        return super()._posting(term, n)


def test_a_search_scores_only_the_documents_it_began_with() -> None:
    index = _ToppedUpMidSearch()
    index.add("a", _terms("puppy shelter"))
    index.add("b", _terms("shelter walk"))
    index.freeze()
    got = index.search("puppy shelter", 10)
    assert index.fired
    assert "late" in index
    assert [d for d, _ in got] == ["a", "b"]
    assert index.search("puppy", 1)[0][0] == "late"  # and the next search has it


def test_a_one_character_chinese_word_finds_the_turn_that_says_it_in_other_company() -> None:
    # "我的猫" holds the bigrams 我的 and 的猫; "家里那只猫很胖" holds neither: only the character 猫 matches.
    docs = ["家里那只猫很胖", "我的工作很忙", "我的车坏了", "我的朋友来了", "我的书在桌上", "我的手机没电了"]
    index = lexical.BM25()
    for key, text in enumerate(docs):
        index.add_text(key, text)
    assert next(doc for doc, _ in index.search("我的猫", 3)) == 0
    # Nothing doubled for a lone character; English is unchanged.
    assert lexical.tokens("猫") == ["猫"]
    assert lexical.tokens("Cats 喝水") == ["cat", "喝", "水", "喝水"]


def test_a_number_or_latin_word_against_chinese_is_a_word_of_its_own() -> None:
    # Taken into the CJK run, "3800" was dropped and 租块, never said, became a bigram.
    assert lexical.tokens("房租3800块") == ["房", "租", "房租", "3800", "块"]
    assert "api" in lexical.tokens("API套餐多少钱")
    index = lexical.BM25()
    for key, text in enumerate(["房租3800块", "房租5200块", "API套餐多少钱"]):
        index.add_text(key, text)
    assert next(doc for doc, _ in index.search("3800", 3)) == 0
