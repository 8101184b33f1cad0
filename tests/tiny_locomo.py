"""A small conversation file in LoCoMo's format, generated, so tests of the benches do not depend on where
the shared LoCoMo copy lives (CI checks out the repository alone)."""

from __future__ import annotations

import json
import random
from pathlib import Path

NAMES = [("Ana", "Bo"), ("Caroline", "Melanie"), ("Dev", "Eli"), ("Fay", "Gus"), ("Hana", "Ivo")]
PLACES = ["Lisbon", "Porto", "Kyoto", "Oslo", "Lima", "Cairo", "Quebec", "Hanoi", "Tallinn", "Perth"]
THINGS = ["a pottery class", "a charity run", "a jazz concert", "a hiking trip", "a book club", "a bakery"]
HOBBIES = ["painting", "climbing", "chess", "gardening", "surfing", "baking", "photography", "violin"]
PETS = ["a cat named Miso", "a dog named Rex", "two parrots", "a rabbit called Snow"]


def _sentence(rng: random.Random, i: int) -> str:
    templates = [
        "I went to {thing} in {place} last weekend and loved it.",
        "My sister just moved to {place} for a new job in nursing.",
        "I have been practising {hobby} every morning since spring.",
        "We adopted {pet} after visiting the shelter in {place}.",
        "Next month I am planning {thing} with my old school friends.",
        "That sounds great! How long have you been into {hobby}?",
        "I finally finished the mural for the library in {place}.",
        "Thanks for asking, the {hobby} workshop was exhausting but fun.",
    ]
    return rng.choice(templates).format(
        thing=rng.choice(THINGS), place=rng.choice(PLACES), hobby=rng.choice(HOBBIES), pet=rng.choice(PETS)
    ) + ("" if i % 3 else f" It was day {i}.")


def write_tiny_locomo(
    path: Path, *, conversations: int = 10, sessions: int = 2, turns: int = 20, seed: int = 7
) -> Path:
    """`conversations` samples of `sessions` sessions of `turns` turns each, with a few questions whose
    evidence names turns of their own conversation; returns `path`."""
    rng = random.Random(seed)
    data = []
    for c in range(conversations):
        a, b = NAMES[c % len(NAMES)]
        conv: dict[str, object] = {"speaker_a": a, "speaker_b": b}
        for s in range(1, sessions + 1):
            conv[f"session_{s}_date_time"] = f"{1 + s}:15 pm on {1 + c} May, 2023"
            conv[f"session_{s}"] = [
                {"speaker": (a, b)[t % 2], "dia_id": f"D{s}:{t + 1}", "text": _sentence(rng, t)}
                for t in range(turns)
            ]
        qa = [
            {
                "question": f"Where did {a} go in session {s}?",
                "answer": "x",
                "evidence": [f"D{s}:{1 + s}"],
                "category": 1 + (s % 5),
            }
            for s in range(1, sessions + 1)
        ]
        qa.append(
            {"question": f"What does {b} practise?", "answer": "x", "evidence": ["D1:2; D1:4"], "category": 4}
        )
        data.append({"sample_id": f"conv-{c + 1}", "conversation": conv, "qa": qa})
    path.write_text(json.dumps(data))
    return path
