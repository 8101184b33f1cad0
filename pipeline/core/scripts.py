"""Which writing system a text is mostly written in.

The default embedding model (all-MiniLM-L6-v2) was trained on English: its vectors of Chinese, Japanese or
Korean text say little of what the text means, and such texts all sit close together. What leans on those
vectors (the review's clustering, the dense side of recall) needs to know when it is reading such a text.
"""

from __future__ import annotations

import re

CJK_CLASS = r"\u3400-\u4dbf\u4e00-\u9fff\u3040-\u30ff\uac00-\ud7af\uf900-\ufaff"
CJK = re.compile(f"[{CJK_CLASS}]")
_LATIN_WORD = re.compile(r"[A-Za-z]+")


def mostly_cjk(text: str) -> bool:
    """Written mostly in Chinese, Japanese or Korean: at least as many CJK characters as Latin words (a
    tokenizer reads each CJK character as one token and most Latin words as one or two)."""
    cjk = len(CJK.findall(text))
    return cjk > 0 and cjk >= len(_LATIN_WORD.findall(text))
