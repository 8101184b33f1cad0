"""Decay in ranking (issue 40, item 6): is there an exponent at which decay helps the current-versus-stale case
without losing old evidence that is still asked about? Offline, on the same turns as the other benches.

Recall ranks a memory by relevance x base weight x decay ** e (RecallTuning.decay_exponent, 0 by default), with
decay = exp(-0.05 x idle days) (DESIGN §2). Here every turn is idle since it was said (nobody recalled it: the
case where decay says the most), and the question is asked when its conversation ends. The ranker is the
simple hybrid floor (min-max BM25 + min-max MiniLM cosine, equal weights) times decay ** e, so that what is
measured is decay alone, not the pipeline's other rules:

- current-versus-stale: the knowledge-update set (bench/data/sets/updates.json.gz, bench.sets.updates): of
  the update pairs, how often the first hit holding the newer statement ranks above the first holding the
  older one (current-first); of the look-alike pairs (both still true), how often both are in the top 10;
- old evidence still asked about: R@10 on LoCoMo, assistant_help, friends_chat and restated.

`python -m bench.decay_ranking` prints the table and writes its BENCHMARKS.md section.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench.fusion_frontier import minmax
from bench.locomo import turn_text
from bench.locomo_data import DEFAULT_DATA, LocomoTurn, Question, recall_at_k
from bench.report import write_section
from bench.sets.common import SETS_DIR

EXPONENTS = (0.0, 0.1, 0.25, 0.5, 1.0)
LAMBDA = 0.05  # per idle day (DESIGN §2, DecayParams)
K = 10
SETS = (
    ("locomo", DEFAULT_DATA, "prefix"),
    ("assistant_help", SETS_DIR / "assistant_help.json.gz", "none"),
    ("friends_chat", SETS_DIR / "friends_chat.json.gz", "prefix"),
    ("restated", SETS_DIR / "restated.json.gz", "none"),
)


@dataclass
class Ranking:
    """The simple hybrid floor over one conversation, with each turn's idle days at its end."""

    ids: list[str]
    cos: np.ndarray[Any, Any]
    lex: np.ndarray[Any, Any]
    idle_days: np.ndarray[Any, Any]

    def top(self, exponent: float, k: int = K) -> list[tuple[str, ...]]:
        score = 0.5 * minmax(self.lex) + 0.5 * minmax(self.cos)
        score = score * np.exp(-LAMBDA * self.idle_days) ** exponent
        return [(self.ids[j],) for j in np.argsort(-score, kind="stable")[:k]]


@dataclass
class Study:
    r10: dict[str, dict[float, float]] = field(default_factory=dict)  # set -> exponent -> R@10
    questions: dict[str, int] = field(default_factory=dict)
    current_first: dict[float, float] = field(default_factory=dict)
    both_kept: dict[float, float] = field(default_factory=dict)
    pairs: tuple[int, int] = (0, 0)  # update pairs, look-alike pairs
    span_days: dict[str, float] = field(default_factory=dict)  # median conversation span


class Rankings:
    def __init__(self, turns: Sequence[LocomoTurn], speaker: str, embedder: Any) -> None:
        from pipeline.recall import lexical

        self.by_conv: dict[str, list[LocomoTurn]] = {}
        for t in turns:
            self.by_conv.setdefault(t.conversation, []).append(t)
        self.vectors = {
            t.turn_id: v
            for t, v in zip(turns, embedder.embed([turn_text(t, speaker) for t in turns]), strict=True)
        }
        self.bm25: dict[str, Any] = {}
        for conv, members in self.by_conv.items():
            index = self.bm25[conv] = lexical.BM25()
            for t in members:
                index.add_text(t.turn_id, turn_text(t, speaker))
        self.embedder = embedder

    def ranking(self, conversation: str, question: str) -> Ranking:
        members = self.by_conv[conversation]
        ids = [t.turn_id for t in members]
        q = np.asarray(self.embedder.embed([question]))[0]
        cos = np.stack([self.vectors[i] for i in ids]) @ q
        position = {i: j for j, i in enumerate(ids)}
        lex = np.zeros(len(ids), dtype=np.float32)
        for doc, value in self.bm25[conversation].search(question, len(ids)):
            lex[position[str(doc)]] = value
        end = max(t.ts for t in members)
        idle = np.array([(end - t.ts).total_seconds() / 86400 for t in members], dtype=np.float64)
        return Ranking(ids, cos, lex, idle)

    def span(self) -> float:
        spans = [
            (max(t.ts for t in ms) - min(t.ts for t in ms)).total_seconds() / 86400
            for ms in self.by_conv.values()
        ]
        return float(np.median(spans))


def _first(ranked: list[tuple[str, ...]], turns: frozenset[str]) -> int | None:
    return next((i for i, ids in enumerate(ranked) if turns.intersection(ids)), None)


def run(embedder: Any) -> Study:
    from bench import updates
    from bench.quality import load_set

    study = Study()
    for name, path, speaker in SETS:
        _, turns, questions, _ = load_set(Path(path))
        r = Rankings(turns, speaker, embedder)
        study.span_days[name] = r.span()
        study.questions[name] = len(questions)
        study.r10[name] = _r10(r, questions)
    _, conversations = updates.load()
    turns, ids = updates.to_turns(conversations)
    pairs = updates.pairs_of(conversations, ids)
    r = Rankings(turns, "metadata", embedder)
    study.span_days["updates"] = r.span()
    ups = [p for p in pairs if p.label == "update"]
    looks = [p for p in pairs if p.label == "lookalike"]
    study.pairs = (len(ups), len(looks))
    ranked_ups = [(p, r.ranking(p.conversation, p.question)) for p in ups]
    ranked_looks = [(p, r.ranking(p.conversation, p.question)) for p in looks]
    for e in EXPONENTS:
        first_ok = both = 0
        for p, ranking in ranked_ups:
            ranked = ranking.top(e)
            new, old = _first(ranked, p.new), _first(ranked, p.old)
            first_ok += int(new is not None and (old is None or new <= old))
        for p, ranking in ranked_looks:
            top = {t for ids_ in ranking.top(e) for t in ids_}
            both += int(p.evidence <= top)
        study.current_first[e] = first_ok / max(len(ups), 1)
        study.both_kept[e] = both / max(len(looks), 1)
    return study


def _r10(r: Rankings, questions: Sequence[Question]) -> dict[float, float]:
    out = {}
    cache = {q: r.ranking(q.conversation, q.text) for q in questions}
    for e in EXPONENTS:
        out[e] = sum(recall_at_k(cache[q].top(e), q.evidence, K) for q in questions) / max(len(questions), 1)
    return out


def report_lines(s: Study) -> list[str]:
    head = " | ".join(f"e = {e:g}" for e in EXPONENTS)
    lines = [
        "## Decay in ranking (issue 40): `python -m bench.decay_ranking`",
        "",
        "The simple hybrid floor (min-max BM25 + min-max MiniLM cosine) times decay^e, decay = exp(−0.05 × days "
        "a turn has been idle), every turn idle since it was said (the case where decay says the most), the "
        "question asked at the end of its conversation. Nothing tuned: the exponents are a grid; 0 is the "
        "default (RecallTuning.decay_exponent).",
        "",
        f"| measure | {head} | median conversation span |",
        "|---|" + "---:|" * (len(EXPONENTS) + 1),
        f"| updates: current-first ({s.pairs[0]} update pairs) | "
        + " | ".join(f"{s.current_first[e]:.3f}" for e in EXPONENTS)
        + f" | {s.span_days.get('updates', 0):.0f} days |",
        f"| updates: both look-alikes in the top 10 ({s.pairs[1]} pairs, both still true) | "
        + " | ".join(f"{s.both_kept[e]:.3f}" for e in EXPONENTS)
        + " | |",
    ]
    for name, by_e in s.r10.items():
        lines.append(
            f"| {name}: R@10 ({s.questions[name]:,} questions) | "
            + " | ".join(f"{by_e[e]:.3f}" for e in EXPONENTS)
            + f" | {s.span_days[name]:.0f} days |"
        )
    best = max(EXPONENTS, key=lambda e: s.current_first[e])
    lost = {n: by_e[0.0] - by_e[best] for n, by_e in s.r10.items()}
    lines += [
        "",
        f"Best current-first at e = {best:g} ({s.current_first[best]:.3f} against {s.current_first[0.0]:.3f} at 0); "
        "R@10 there minus at 0: " + ", ".join(f"{n} {-d:+.3f}" for n, d in lost.items()) + ".",
    ]
    return lines


def main() -> None:
    from pipeline.adapters.embedder import make_embedder
    from pipeline.core.config import Settings

    settings = Settings()
    embedder = make_embedder(settings)
    study = run(embedder)
    lines = report_lines(study)
    print("\n".join(lines))
    write_section("decay_ranking", "\n".join(lines))


if __name__ == "__main__":
    main()
