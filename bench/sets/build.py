"""`python -m bench.sets.build`: regenerate every evaluation set into bench/data/sets/ (deterministic)."""

from __future__ import annotations

import bench.sets.assistant_help as assistant_help
import bench.sets.friends_chat as friends_chat
from bench.sets.common import SETS_DIR, write_set


def main() -> None:
    for name, module in (("assistant_help", assistant_help), ("friends_chat", friends_chat)):
        path = SETS_DIR / f"{name}.json.gz"
        samples = module.generate()
        write_set(path, samples)
        questions = sum(len(s.qa) for s in samples)
        turns = sum(len(t) for s in samples for _, t in s.sessions)
        print(f"{path}: {len(samples)} conversations, {turns:,} turns, {questions:,} questions")


if __name__ == "__main__":
    main()
