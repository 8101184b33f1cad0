"""How deep recall's fusion reads each list (`RecallTuning.candidates`), offline, against the floors.

Recall fuses the vector search's first n hits and BM25's first n matches, each list min-maxed over its own n
(`ranking.normalised`); a candidate only one list found counts 0 on the other. The simple hybrid floor
min-maxes over every turn instead. The depth sets where each list's zero lies: at 50, the 50th cosine of a
500-turn haystack is already close to the first, so small cosine differences were stretched over the whole
[0, 1] and a turn BM25 ranked high but the vector search ranked 51st got nothing for its cosine.

Measured on raw turns (no review, no time window, no speaker, no passages: the fusion alone), with the
configured embedder and the lexicon's own document shape (a turn's words, the previous turn's at
`CONTEXT_WEIGHT`, the next turn's at `NEXT_WEIGHT`):
- LongMemEval S questions that no bench samples and nobody read: outside `bench longmemeval`'s sample and
  outside the knowledge-update half `bench updates --longmemeval` reads (`--per-type` of each type, seeded);
- the quality sets (LoCoMo and this project's generated sets).

`python -m bench.fusion_depth` prints the table and writes its BENCHMARKS.md section. Vectors come from the
bench's vector cache, so a second run embeds nothing.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console

from bench.fusion_frontier import minmax
from bench.locomo import turn_text
from bench.longmemeval import DEFAULT_DATA as LME_DATA
from bench.longmemeval import PER_TYPE, SEED, load_questions, sample
from bench.quality import builtin_sets, load_set
from bench.report import write_section
from bench.updates_lme import select
from bench.vector_cache import cached_vectors, embedder_name
from pipeline.adapters.lexicon_cache import CONTEXT_WEIGHT, NEXT_WEIGHT
from pipeline.recall import lexical, ranking
from pipeline.recall.tuning import DEFAULT_TUNING

DEPTHS = (50, 100, 200)
K = 10
LME_PER_TYPE = 8
LME_SEED = 2026
Array = np.ndarray[Any, Any]


@dataclass
class Asked:
    """One question over its conversation: each turn's cosine, BM25 (plain and as the lexicon indexes it),
    and whether it is evidence."""

    cos: Array
    bm25: Array
    lexicon: Array
    evidence: Array


class Vectors:
    """The configured embedder behind the bench's vector cache (`bench.vector_cache`)."""

    def __init__(self) -> None:
        from pipeline.adapters.embedder import make_embedder
        from pipeline.core.config import Settings

        settings = Settings()
        self.embedder = make_embedder(settings)
        self.name = embedder_name(settings)

    def passages(self, texts: Sequence[str]) -> Array:
        return _unit(cached_vectors(texts, self.embedder.embed, self.name).vectors)

    def queries(self, texts: Sequence[str]) -> Array:
        from pipeline.core.ports import embed_queries

        return _unit(np.asarray(embed_queries(self.embedder, list(texts)), dtype=np.float32))


def _unit(m: Array) -> Array:
    return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)


Indexes = tuple[lexical.BM25, lexical.BM25]


def indexes(texts: Sequence[str], sessions: Sequence[object]) -> Indexes:
    """Plain BM25 over the turns, and BM25 over them as the lexicon indexes them (`sessions[i]` groups turn i
    with its neighbours, whose words are its context)."""
    plain, lexicon = lexical.BM25(), lexical.BM25()
    n = len(texts)
    for i, text in enumerate(texts):
        plain.add_text(i, text)
        before = texts[i - 1] if i > 0 and sessions[i - 1] == sessions[i] else ""
        terms = lexical.weighted_terms(text, context=before, context_weight=CONTEXT_WEIGHT)
        if i + 1 < n and sessions[i + 1] == sessions[i]:
            after = lexical.weighted_terms("", context=texts[i + 1], context_weight=NEXT_WEIGHT)
            for term, tf in after.items():
                terms[term] = terms.get(term, 0.0) + tf
        lexicon.add(i, terms)
    return plain, lexicon


def asked(question: str, index: Indexes, evidence: Array, vectors: Array, q: Array) -> Asked:
    n = len(evidence)

    def scores(bm25: lexical.BM25) -> Array:
        out = np.zeros(n, dtype=np.float32)
        for doc, s in bm25.search(question, n):
            out[int(str(doc))] = s
        return out

    return Asked(vectors @ q, scores(index[0]), scores(index[1]), evidence)


def fused(a: Asked, depth: int, *, context: bool = True) -> Array:
    """Recall's fusion at this depth (`ranking.normalised` over each list's first `depth`); -inf off both.
    `context`: BM25 as the lexicon indexes turns (their neighbours' words), else over each turn alone."""
    bm25 = a.lexicon if context else a.bm25
    dense = [(int(i), max(float(a.cos[i]), 0.0)) for i in np.argsort(-a.cos, kind="stable")[:depth]]
    lex = [(int(i), float(bm25[i])) for i in np.argsort(-bm25, kind="stable")[:depth] if bm25[i] > 0]
    out = np.full(len(a.cos), -np.inf)
    weights = {"dense": DEFAULT_TUNING.dense_weight, "lexical": DEFAULT_TUNING.lexical_weight}
    for i, value in ranking.normalised({"dense": dense, "lexical": lex}, weights=weights).items():
        out[i] = value
    return out


RANKERS: dict[str, Callable[[Asked], Array]] = {
    "BM25 (floor)": lambda a: a.bm25,
    "dense (floor)": lambda a: a.cos,
    "simple hybrid (floor)": lambda a: 0.5 * minmax(a.bm25) + 0.5 * minmax(a.cos),
    # The lexicon context (issue 45 kept it against its rule on the sample's figures), checked held out too.
    f"recall's fusion, depth {DEPTHS[0]}, no lexicon context": lambda a: fused(a, DEPTHS[0], context=False),
    **{f"recall's fusion, depth {d}": (lambda a, d=d: fused(a, d)) for d in DEPTHS},  # type: ignore[misc]
}


def recall_at(a: Asked, scores: Array, k: int) -> float:
    first = np.argsort(-scores, kind="stable")[:k]
    return float(a.evidence[first].sum() / a.evidence.sum())


def unread_longmemeval(path: Path, per_type: int, seed: int) -> list[dict[str, Any]]:
    """Per type, `per_type` questions with turn-level evidence (drawn as `bench longmemeval` draws its sample)
    among those no bench samples or reads: outside that bench's sample and the dev half of `bench updates
    --longmemeval` (`updates_lme.select`)."""
    questions = load_questions(path)
    taken = {q["question_id"] for _, q in sample(questions, PER_TYPE, SEED)}
    taken |= {q["question_id"] for split, q in select(questions, None) if split == "dev"}
    unread = [q for q in questions if q["question_id"] not in taken]
    return [q for _, q in sample(unread, per_type, seed)]


def longmemeval_questions(
    vectors: Vectors, chosen: Sequence[dict[str, Any]], console: Console
) -> list[Asked]:
    out: list[Asked] = []
    for n, q in enumerate(chosen, start=1):
        dated = sorted(zip(q["haystack_dates"], q["haystack_sessions"], strict=True), key=lambda p: str(p[0]))
        turns = [(s, t) for s, (_, session) in enumerate(dated) for t in session]
        texts = [str(t["content"]) for _, t in turns]
        evidence = np.array([bool(t.get("has_answer")) for _, t in turns])
        qv = vectors.queries([q["question"]])[0]
        index = indexes(texts, [s for s, _ in turns])
        out.append(asked(q["question"], index, evidence, vectors.passages(texts), qv))
        console.print(f"  LongMemEval {n} / {len(chosen)}: {len(texts)} turns")
    return out


def set_questions(vectors: Vectors, name: str) -> list[Asked]:
    eval_set = {s.name: s for s in builtin_sets()}[name]
    _, turns, questions, _ = load_set(eval_set.path)
    texts = [turn_text(t, eval_set.speaker) for t in turns]
    v = vectors.passages(texts)
    qv = vectors.queries([q.text for q in questions])
    members: dict[str, list[int]] = {}
    for i, t in enumerate(turns):
        members.setdefault(t.conversation, []).append(i)
    built = {
        conv: indexes([texts[i] for i in rows], [turns[i].session for i in rows])
        for conv, rows in members.items()
    }
    out: list[Asked] = []
    for j, q in enumerate(questions):
        rows = members[q.conversation]
        wanted = set(q.evidence)
        evidence = np.array([turns[i].turn_id in wanted for i in rows])
        if evidence.any():
            out.append(asked(q.text, built[q.conversation], evidence, v[rows], qv[j]))
    return out


SETS = (
    "locomo",
    "assistant_help",
    "friends_chat",
    "restated",
    "bilingual_zh",
    "bilingual_en",
    "bilingual_cross",
)


def table(results: dict[str, list[Asked]]) -> list[str]:
    names = list(RANKERS)
    lines = [
        "| set | questions | " + " | ".join(names) + " |",
        "|---|---:|" + "---:|" * len(names),
    ]
    for name, questions in results.items():
        cells = []
        for ranker in RANKERS.values():
            scored = [ranker(a) for a in questions]
            r5 = np.mean([recall_at(a, s, 5) for a, s in zip(questions, scored, strict=True)])
            r10 = np.mean([recall_at(a, s, K) for a, s in zip(questions, scored, strict=True)])
            cells.append(f"{r5:.3f} / {r10:.3f}")
        lines.append(f"| {name} | {len(questions)} | " + " | ".join(cells) + " |")
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--per-type", type=int, default=LME_PER_TYPE, help="unread LongMemEval questions per type"
    )
    parser.add_argument("--sets", nargs="*", default=list(SETS), help="quality sets to score too")
    parser.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    args = parser.parse_args(argv)
    console = Console()
    vectors = Vectors()
    chosen = unread_longmemeval(LME_DATA, args.per_type, LME_SEED)
    results = {
        f"LongMemEval, {len(chosen)} unread questions": longmemeval_questions(vectors, chosen, console)
    }
    for name in args.sets:
        console.print(f"  {name}")
        results[name] = set_questions(vectors, name)
    lines = table(results)
    console.print("\n".join(lines))
    if not args.no_write:
        write_section("fusion-depth", "\n".join(report(lines, chosen)))


def report(lines: Sequence[str], chosen: Sequence[dict[str, Any]]) -> list[str]:
    ids = ", ".join(str(q["question_id"]) for q in chosen)
    return [
        "## How deep the fusion reads each list: `python -m bench.fusion_depth`",
        "",
        "Offline, on raw turns: the fusion alone (no review, window, speaker or passages), with the configured "
        "embedder and the lexicon's document shape (the neighbouring turns' words). Depth n: each retriever's "
        "first n, min-maxed over those n (`ranking.normalised`), as recall does with `RecallTuning.candidates`; "
        '"no lexicon context": BM25 over each turn alone. '
        "R@5 / R@10, strict, over each set's questions with evidence.",
        "",
        *lines,
        "",
        f"LongMemEval questions (never read, outside every bench sample; seed `{LME_SEED}`): {ids}.",
    ]


if __name__ == "__main__":
    main()
