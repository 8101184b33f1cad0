"""`python -m bench.sets.build`: regenerate every evaluation set into bench/data/sets/ (deterministic)."""

from __future__ import annotations

import bench.sets.assistant_help as assistant_help
import bench.sets.bilingual as bilingual
import bench.sets.friends_chat as friends_chat
from bench.sets.common import SETS_DIR, write_json_set, write_set


def main() -> None:
    for name, module in (("assistant_help", assistant_help), ("friends_chat", friends_chat)):
        path = SETS_DIR / f"{name}.json.gz"
        samples = module.generate()
        write_set(path, samples)
        questions = sum(len(s.qa) for s in samples)
        turns = sum(len(t) for s in samples for _, t in s.sessions)
        print(f"{path}: {len(samples)} conversations, {turns:,} turns, {questions:,} questions")
    # the same conversations in Chinese and in English, and the Chinese ones asked in English
    parallel = bilingual.generate()
    for lang, convs in parallel.items():
        write_set(SETS_DIR / f"bilingual_{lang}.json.gz", convs)
    write_json_set(SETS_DIR / "bilingual_cross.json.gz", bilingual.cross(parallel))
    print(f"{SETS_DIR}/bilingual_{{zh,en,cross}}.json.gz: {len(parallel['zh'])} conversations each")


if __name__ == "__main__":
    main()
