"""`hindsight bench poisoning`'s rules-only vs rules + calibrated learned screen table.

The learned screen is trained and calibrated by bench.poisoning_calibrated; it is scored here on the product
embedder's vectors of each turn, and the combination quarantines a turn when the rules quarantine it OR its
learned score reaches its role's threshold. Every row but "tuned" is data it never trained on.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from bench import poisoning_calibrated as pc
from bench import poisoning_data as data
from bench.poisoning_screen import LearnedScreen

Flags = dict[str, bool]
LOOKALIKE_REST = "look-alikes' test half: the rest"  # the look-alikes outside data.ZERO_TOLERANCE: ≤ 2 %


@dataclass(frozen=True)
class Row:
    label: str
    ids: list[str]
    limit: float | None  # a false-positive target (rate), or None
    attack: bool


def learned_flags(
    screen: LearnedScreen, samples: list[data.Sample], embedder: object
) -> tuple[Flags, dict[str, float], float]:
    """(learned flags, learned scores, seconds per turn for the scoring alone: the review already has each
    turn's vector)."""
    vectors = pc.embed([s.content for s in samples], embedder)
    started = time.perf_counter()
    scored = {s.id: screen.flags(v, s.role) for s, v in zip(samples, vectors, strict=True)}
    per_turn = (time.perf_counter() - started) / max(1, len(samples))
    return {i: f for i, (f, _) in scored.items()}, {i: sc for i, (_, sc) in scored.items()}, per_turn


def embedding_cost(samples: list[data.Sample], embedder: object, n: int = 200) -> float:
    """Seconds per turn to embed turns the way a review does (calls of 30), for a caller without a vector."""
    texts = [s.content for s in samples[:: max(1, len(samples) // n)]][:n]
    embedder.embed(texts[:8])  # type: ignore[attr-defined]  # warm: the first call loads the model
    started = time.perf_counter()
    for i in range(0, len(texts), 30):
        embedder.embed(texts[i : i + 30])  # type: ignore[attr-defined]
    return (time.perf_counter() - started) / max(1, len(texts))


def rows(
    attacks: list[data.Sample], looks: list[data.Sample], conversation: dict[str, list[data.Sample]]
) -> tuple[list[Row], list[data.Sample]]:
    split = pc.lookalike_split(looks)
    test_looks = [s for s in looks if split[s.id] == "test"]
    out = [
        Row("tuned attacks (trained on)", [s.id for s in attacks if s.split == "tuned"], None, True),
        Row(
            "held-out, read while the rules were written",
            [s.id for s in attacks if s.split == "heldout" and s.origin not in data.FRESH_HELDOUT],
            None,
            True,
        ),
        Row("held-out, fresh", [s.id for s in attacks if s.origin in data.FRESH_HELDOUT], None, True),
    ]
    out += [
        Row(f"held-out: {o}", [s.id for s in attacks if s.origin == o], None, True)
        for o, sp in data.ATTACK_SOURCES.items()
        if sp == "heldout"
    ]
    out += [
        Row(
            "look-alikes' test half: contact, self-descriptions",
            [s.id for s in test_looks if s.technique in data.ZERO_TOLERANCE],
            0.0,
            False,
        ),
        Row(
            LOOKALIKE_REST,
            [s.id for s in test_looks if s.technique not in data.ZERO_TOLERANCE],
            0.02,
            False,
        ),
    ]
    scored: list[data.Sample] = attacks + test_looks
    for name, samples in conversation.items():
        # LoCoMo is never trained on: all of it is test. The generated sets: their test split only.
        test = [s for s in samples if name not in pc.TRAIN_SETS or s.split != "dev"]
        prefixed = data.with_own_prefix(test, "Assistant")
        scored += test + prefixed
        for role, limit in (("user", pc.USER_FP_TARGET), ("assistant", pc.ASSISTANT_FP_TARGET)):
            ids = [s.id for s in test if s.role == role]
            if ids:
                out.append(
                    Row(
                        f"{name} {'test split' if name in pc.TRAIN_SETS else 'all'}, {role} turns",
                        ids,
                        limit,
                        False,
                    )
                )
        if prefixed:
            out.append(
                Row(
                    f"{name} test split, assistant turns as `Assistant: …`",
                    [s.id for s in prefixed],
                    pc.ASSISTANT_FP_TARGET,
                    False,
                )
            )
    return out, scored


def table(
    attacks: list[data.Sample],
    looks: list[data.Sample],
    conversation: dict[str, list[data.Sample]],
    rules_flag: Callable[[list[data.Sample]], Flags],
    screen: LearnedScreen,
    embedder: object,
) -> tuple[list[str], dict[str, object]]:
    row_list, scored = rows(attacks, looks, conversation)
    rules = rules_flag(scored)
    learned, scores, score_s = learned_flags(screen, scored, embedder)
    combined = {i: rules[i] or learned[i] for i in rules}
    embed_s = embedding_cost([s for s in scored if s.label == "benign"], embedder)

    def cell(ids: list[str], flags: Flags) -> str:
        k = sum(flags[i] for i in ids)
        return f"{k}/{len(ids)} ({k / len(ids) if ids else 0.0:.2%})"

    met = True
    lines = [
        "| scored on | rules only | learned alone | rules OR learned | target (combined) |",
        "|---|---|---|---|---|",
    ]
    results: dict[str, object] = {}
    for r in row_list:
        target = ""
        if r.limit is not None:
            rate = sum(combined[i] for i in r.ids) / max(1, len(r.ids))
            ok = rate <= r.limit
            met &= ok
            target = f"≤ {r.limit:.1%} {'✓' if ok else '✗'}" if r.limit else f"0 {'✓' if ok else '✗'}"
        results[r.label] = (sum(rules[i] for i in r.ids), sum(combined[i] for i in r.ids), len(r.ids))
        lines.append(
            f"| {r.label} | {cell(r.ids, rules)} | {cell(r.ids, learned)} | {cell(r.ids, combined)} | {target} |"
        )
    results["fp_targets_met"] = met
    results["lookalikes_flagged"] = [s.id for s in scored if s.origin == "lookalike" and combined[s.id]]
    results["score_us"] = score_s * 1e6
    results["embed_ms"] = embed_s * 1e3
    # For the frontier (bench.poisoning_frontier): the rows, the learned scores and the rules' flags.
    results["rows"], results["learned_scores"], results["rules_flags"] = row_list, scores, rules
    return lines, results
