"""The multilingual models read Chinese: a Chinese query finds the English sentence that says the same, and
an English query the Chinese one, among 20 parallel pairs (what all-MiniLM-L6-v2 cannot do). Both
multilingual-e5-small and the all-MiniLM-L6-v2+use-m pair (USE multilingual v3 beside MiniLM)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pipeline.adapters.embedder import make_embedder
from pipeline.core.config import Settings
from pipeline.core.ports import WarmEmbedder, embed_queries

PAIRS = [
    ("我下个月要搬到里斯本。", "I am moving to Lisbon next month."),
    ("我妹妹五月来看我。", "My sister is visiting me in May."),
    ("我对花生过敏。", "I am allergic to peanuts."),
    ("我们周末去爬山了。", "We went hiking on the weekend."),
    ("我的狗叫豆豆，它三岁了。", "My dog is called Doudou and he is three years old."),
    ("我在一家医院当护士。", "I work as a nurse in a hospital."),
    ("明天的会议改到下午三点。", "Tomorrow's meeting moved to 3 pm."),
    ("我正在学弹吉他。", "I am learning to play the guitar."),
    ("我最喜欢的菜是红烧肉。", "My favourite dish is braised pork belly."),
    ("我女儿今年上小学一年级。", "My daughter started first grade this year."),
    ("我的车昨天坏在高速公路上了。", "My car broke down on the highway yesterday."),
    ("我每天早上六点起床跑步。", "I get up at six every morning to go running."),
    ("我们打算明年夏天去日本旅行。", "We plan to travel to Japan next summer."),
    ("我的手机屏幕摔碎了。", "I cracked my phone screen."),
    ("我奶奶下周过八十岁生日。", "My grandmother turns eighty next week."),
    ("我刚刚换了一份新工作，做软件工程师。", "I just started a new job as a software engineer."),
    ("我不喝咖啡，只喝绿茶。", "I don't drink coffee, only green tea."),
    ("我们家的猫丢了，找了三天。", "Our cat went missing and we searched for three days."),
    ("我在准备下个月的马拉松比赛。", "I am training for a marathon next month."),
    ("我的房东要涨房租了。", "My landlord is raising the rent."),
]


MODELS = [("multilingual-e5-small", "onnx-int8"), ("all-MiniLM-L6-v2+use-m", "onnx")]


@pytest.fixture(scope="module", params=MODELS, ids=[m for m, _ in MODELS])
def e5(onnx_cache: Path, request: pytest.FixtureRequest) -> WarmEmbedder:
    model, backend = request.param
    settings = Settings(embedding={"model": model, "backend": backend, "cache_dir": onnx_cache})
    embedder = make_embedder(settings)
    embedder.warm_up()
    return embedder


@pytest.mark.parametrize("direction", ["zh->en", "en->zh"])
def test_a_query_in_one_language_finds_its_counterpart_in_the_other(e5: WarmEmbedder, direction: str) -> None:
    chinese, english = [p[0] for p in PAIRS], [p[1] for p in PAIRS]
    queries, stored = (chinese, english) if direction == "zh->en" else (english, chinese)
    top = np.argmax(embed_queries(e5, queries) @ e5.embed(stored).T, axis=1)
    hits = int(np.sum(top == np.arange(len(PAIRS))))
    assert hits >= 17, f"{hits}/20 at top-1"


@pytest.mark.parametrize("model", [m for m, _ in MODELS])
def test_the_settings_say_it_reads_cjk(model: str) -> None:
    assert Settings(embedding={"model": model}).embedding.reads_cjk
    assert not Settings(embedding={"model": "all-MiniLM-L6-v2"}).embedding.reads_cjk
