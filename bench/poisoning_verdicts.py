"""Every turn the poisoning bench screens, with the screen's verdict: written to a file and compared with a later
run, so a change meant to be verdict-neutral (a faster screen) is shown to be, turn by turn, and the speed of the
two screens is measured side by side.

    python -m bench.poisoning_verdicts dump BEFORE.jsonl     # with the old screen checked out
    python -m bench.poisoning_verdicts compare BEFORE.jsonl  # with the new one: exits 1 on any difference

A row is (id, decision, score, features): the decision is what must not move; score and features are compared
too, so a change that only happens not to cross a threshold is caught as well.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from bench import poisoning_data as data
from pipeline.review import injection


def samples(locomo: Path | None = None) -> Iterator[tuple[str, list[data.Sample]]]:
    """(set name, its turns) for every set the bench screens: attacks, hard negatives, look-alikes, every
    conversation set (and its assistant turns with their own `Assistant:` prefix)."""
    from bench.quality import builtin_sets

    yield "attacks", data.attack_samples()
    yield "hard_negatives", data.hard_negative_samples()
    yield "lookalikes", data.lookalike_samples()
    for es in builtin_sets(locomo):
        turns = data.conversation_samples(es.name, es.path, es.speaker)
        yield es.name, turns
        prefixed = data.with_own_prefix(turns, "Assistant")
        if prefixed:
            yield f"{es.name}_prefixed", prefixed


def verdicts(turns: list[data.Sample]) -> tuple[list[dict[str, object]], float]:
    """Each turn's verdict, and the screen's turns/s over the set (`assess` + `decide`, one core)."""
    t = injection.InjectionThresholds()
    rows = []
    started = time.perf_counter()
    for s in turns:
        v = injection.assess(s.content, role=s.role, source=s.source)
        rows.append(
            {"id": s.id, "decision": injection.decide(v, t), "score": v.score, "features": list(v.features)}
        )
    elapsed = time.perf_counter() - started
    return rows, len(turns) / elapsed


def dump(path: Path) -> None:
    with path.open("w", encoding="utf-8") as out:
        for name, turns in samples():
            rows, speed = verdicts(turns)
            print(f"{name}: {len(rows)} turns, {speed:,.0f} turns/s")
            for r in rows:
                out.write(json.dumps(r, ensure_ascii=False) + "\n")


def compare(path: Path) -> int:
    before = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        before[r["id"]] = r
    differ = 0
    seen = 0
    for name, turns in samples():
        rows, speed = verdicts(turns)
        changed = [r for r in rows if r["id"] in before and before[str(r["id"])] != r]
        seen += sum(r["id"] in before for r in rows)
        differ += len(changed)
        print(f"{name}: {len(rows)} turns, {speed:,.0f} turns/s, {len(changed)} verdicts differ")
        for r in changed[:5]:
            print(f"  {r['id']}: {before[str(r['id'])]} -> {r}")
    print(f"{seen} of {len(before)} turns compared, {differ} differ")
    return 1 if differ or seen != len(before) else 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("dump", "compare"):
        sys.exit(__doc__)
    if sys.argv[1] == "dump":
        dump(Path(sys.argv[2]))
    else:
        sys.exit(compare(Path(sys.argv[2])))
