"""`hindsight bench embed`: sentences/s of the torch, ONNX fp32 and ONNX int8 embedders, side by side.

Throughput: the same LoCoMo turns through each backend at 1 and 2 intra-op threads, in the same batch
size, interleaved round by round so machine noise hits them alike; the best round of each counts, and
the CPU seconds per sentence (process time, which other processes' load barely moves) are reported
next to wall time. Agreement: every LoCoMo turn and question embedded by each backend; for each
question, the top 10 turns of its own conversation by torch against those by the ONNX backend (mean
overlap), the cosine between the two backends' vectors of the same text (min, mean), and each backend's
LoCoMo evidence recall@10 over those same searches (the issue's "within 0.01" of torch).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from rich.console import Console
from rich.table import Table

from bench import locomo_data
from bench.locomo_data import LocomoTurn, Question, recall_at_k
from bench.report import write_section
from pipeline.adapters.embedder import SentenceTransformerEmbedder
from pipeline.adapters.onnx_embedder import OnnxEmbedder
from pipeline.core.config import MINILM_MODEL, PAIR_MODELS, EmbeddingBackend, Settings
from pipeline.core.errors import ConfigError
from pipeline.core.ports import Vector

BACKENDS: tuple[EmbeddingBackend, ...] = ("torch", "onnx", "onnx-int8")
THREADS = (1, 2)
TOP_K = 10
TARGET_SPEEDUP = 2.0
TARGET_AGREEMENT = 0.99
TARGET_RECALL_DELTA = 0.01  # LoCoMo recall@10 within this of torch's
# Torch at one thread over these batch sizes, in the same rounds, to choose the default. Texts go in calls
# of 30, as a full review embeds its batch (sorting by length only helps within one call), so 32 is one
# forward pass per call padded to its longest text, and 1 is no padding at all.
BATCH_SIZES = (1, 4, 8, 16, 32)
REVIEW_CALL = 30


@dataclass(frozen=True, slots=True)
class Labelled:
    """One LoCoMo conversation: its turns (the corpus, as the pipeline stores them) and its questions
    (the queries), each question with the ids of the turns its answer rests on."""

    conversation: str
    turns: tuple[str, ...]
    turn_ids: tuple[str, ...]
    questions: tuple[str, ...]
    evidence: tuple[tuple[str, ...], ...]  # per question


def load_labelled(path: Path) -> list[Labelled]:
    turns, questions = locomo_data.load(path)
    by_conversation: dict[str, tuple[list[LocomoTurn], list[Question]]] = {}
    for t in turns:
        by_conversation.setdefault(t.conversation, ([], []))[0].append(t)
    for q in questions:
        by_conversation.setdefault(q.conversation, ([], []))[1].append(q)
    return [
        Labelled(
            conv,
            tuple(t.content for t in mine),
            tuple(t.turn_id for t in mine),
            tuple(q.text for q in asked),
            tuple(q.evidence for q in asked),
        )
        for conv, (mine, asked) in by_conversation.items()
    ]


def _top_k(queries: Vector, corpus: Vector, k: int) -> npt.NDArray[np.intp]:
    """Per query (row), the indices of its k most similar corpus rows, best first (L2-normalised input)."""
    return np.argsort(-(queries @ corpus.T), axis=1, kind="stable")[:, :k]


def evidence_recall(
    groups: Sequence[Labelled], vectors: Sequence[tuple[Vector, Vector]], k: int = TOP_K
) -> float:
    """LoCoMo evidence recall@k of plain vector search: each question ranks its own conversation's turns
    by cosine; the share of its evidence turns among the first k, averaged over questions."""
    scores: list[float] = []
    for group, (queries, corpus) in zip(groups, vectors, strict=True):
        if len(group.questions) == 0 or len(group.turns) == 0:
            continue
        for row, gold in zip(_top_k(queries, corpus, k), group.evidence, strict=True):
            scores.append(recall_at_k([[group.turn_ids[i]] for i in row], gold, k))
    if not scores:
        raise ValueError("no question with a corpus to search")
    return float(np.mean(scores))


def top_k_agreement(
    reference: Sequence[tuple[Vector, Vector]], candidate: Sequence[tuple[Vector, Vector]], k: int = TOP_K
) -> float:
    """Mean overlap of the top-k corpus items per query, reference against candidate, in [0, 1].

    Each element is one group's (queries, corpus) vectors, L2-normalised; a query searches only its
    own group's corpus (a LoCoMo question, its own conversation). A group with fewer than k corpus
    items compares all of them.
    """
    overlaps: list[float] = []
    for (ref_q, ref_c), (cand_q, cand_c) in zip(reference, candidate, strict=True):
        kk = min(k, len(ref_c))
        if kk == 0 or len(ref_q) == 0:
            continue
        ref_top, cand_top = _top_k(ref_q, ref_c, kk), _top_k(cand_q, cand_c, kk)
        overlaps.extend(len(set(a) & set(b)) / kk for a, b in zip(ref_top, cand_top, strict=True))
    if not overlaps:
        raise ValueError("no query with a corpus to compare")
    return float(np.mean(overlaps))


def cosine_agreement(a: Vector, b: Vector) -> tuple[float, float]:
    """(min, mean) cosine between row i of a and row i of b (both L2-normalised)."""
    cos = np.sum(np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64), axis=1)
    return float(cos.min()), float(cos.mean())


@dataclass
class Timing:
    wall_s: list[float] = field(default_factory=list)
    cpu_s: list[float] = field(default_factory=list)

    def per_s(self, n: int) -> float:
        return n / min(self.wall_s)

    def per_cpu_s(self, n: int) -> float:
        return n / min(self.cpu_s)


@dataclass
class EmbedResult:
    n: int
    batch_size: int
    rounds: int
    timings: dict[tuple[str, int], Timing]
    agreement: dict[str, tuple[float, float, float]]  # backend -> (top-10 agreement, min cos, mean cos)
    queries: int
    corpus: int
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float]
    export_s: dict[str, float]
    startup: dict[str, tuple[float, float]]  # backend -> (s to first vector in a new process, peak RSS MB)
    recall10: dict[str, float]  # backend (torch included) -> LoCoMo evidence recall@10
    batch_timings: dict[int, Timing] = field(default_factory=dict)  # torch, 1 thread, by batch size

    def ratio(self, backend: str, threads: int) -> float:
        return self.timings[(backend, threads)].per_s(self.n) / self.timings[("torch", threads)].per_s(self.n)

    def cpu_ratio(self, backend: str, threads: int) -> float:
        mine = self.timings[(backend, threads)].per_cpu_s(self.n)
        return mine / self.timings[("torch", threads)].per_cpu_s(self.n)

    @property
    def figures(self) -> dict[str, float]:
        """`{backend}_t{threads}_per_s` / `_per_cpu_s` / `_cpu_ratio`, and `{backend}_agreement` (top-10)."""
        out: dict[str, float] = {}
        for (backend, threads), timing in self.timings.items():
            key = f"{backend}_t{threads}"
            out[f"{key}_per_s"] = timing.per_s(self.n)
            out[f"{key}_per_cpu_s"] = timing.per_cpu_s(self.n)
            out[f"{key}_cpu_ratio"] = self.cpu_ratio(backend, threads)
        for backend, (agree, lo, _mean) in self.agreement.items():
            out[f"{backend}_agreement"], out[f"{backend}_min_cosine"] = agree, lo
        for backend, recall in self.recall10.items():
            out[f"{backend}_recall10"] = recall
        return out

    def recall_delta(self, backend: str) -> float:
        """The backend's LoCoMo evidence recall@10 minus torch's."""
        return self.recall10[backend] - self.recall10["torch"]


class _TorchAt:
    """The torch embedder at a thread count: torch's thread pool is process-wide, so set it per call."""

    def __init__(self, embedder: SentenceTransformerEmbedder, threads: int) -> None:
        self.embedder, self.threads = embedder, threads

    def embed(self, texts: Sequence[str]) -> Vector:
        import torch

        torch.set_num_threads(self.threads)
        return self.embedder.embed(texts)


class _TorchBatch:
    """Torch at one thread and a given batch size (the model is shared, only `encode`'s batch differs)."""

    def __init__(self, embedder: SentenceTransformerEmbedder, batch_size: int) -> None:
        self.embedder, self.batch_size = embedder, batch_size

    def embed(self, texts: Sequence[str]) -> Vector:
        import torch

        torch.set_num_threads(1)
        model: Any = self.embedder.model()
        # One encode call per review-sized chunk: encode sorts by length within a call, so one call over
        # every text would give big batches near-uniform lengths that a review's 30 texts never have.
        calls = [list(texts[i : i + REVIEW_CALL]) for i in range(0, len(texts), REVIEW_CALL)]
        return np.concatenate(
            [
                model.encode(
                    call, batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False
                )
                for call in calls
            ]
        )


def _timed(embed: Callable[[Sequence[str]], Vector], texts: Sequence[str], timing: Timing) -> None:
    wall, cpu = time.perf_counter(), time.process_time()
    embed(texts)
    timing.cpu_s.append(time.process_time() - cpu)
    timing.wall_s.append(time.perf_counter() - wall)


def build_embedders(
    settings: Settings, threads: Sequence[int]
) -> tuple[dict[tuple[str, int], Any], dict[str, float]]:
    """One embedder per (backend, threads), loaded; exports the ONNX models first if the cache is empty."""
    base = settings.embedding
    if base.model in PAIR_MODELS:  # the backends differ in MiniLM's half only (USE is numpy either way)
        base = base.with_model(MINILM_MODEL)
    torch_embedder = SentenceTransformerEmbedder(base.model_copy(update={"backend": "torch"}))
    torch_embedder.warm_up()
    from pipeline.adapters.embedder import resolve_model_path

    model_dir = resolve_model_path(base.model)
    out: dict[tuple[str, int], Any] = {}
    export_s: dict[str, float] = {}
    for t in threads:
        out[("torch", t)] = _TorchAt(torch_embedder, t)
        for backend in BACKENDS[1:]:
            e = OnnxEmbedder(
                base.model_copy(update={"backend": backend, "torch_threads": t}),
                model_dir=model_dir,
                cache_dir=settings.embedding_cache_dir,
            )
            t0 = time.perf_counter()
            e.warm_up()
            export_s.setdefault(backend, time.perf_counter() - t0)
            out[(backend, t)] = e
    return out, export_s


# A fresh process: import, load and embed one text, as a worker does at start.
_STARTUP = (
    "import time\n"
    "t = time.perf_counter()\n"
    "from pipeline.adapters.embedder import make_embedder\n"
    "from pipeline.core.config import Settings\n"
    "make_embedder(Settings()).embed(['hello'])\n"
    "took = time.perf_counter() - t\n"
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the forking parent (this bench, GBs).
    "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]\n"
    "print(took, hwm)\n"
)


def startup_cost(settings: Settings, backend: str, model: str | None = None) -> tuple[float, float]:
    """(seconds to the first vector, peak RSS in MB) of a new process on `backend`; the ONNX cache
    must already hold the export, so this is what every worker start after the first costs."""
    env = {
        **os.environ,
        "HINDSIGHT_EMBEDDING__MODEL": model or settings.embedding.model,
        "HINDSIGHT_EMBEDDING__BACKEND": backend,
        "HINDSIGHT_EMBEDDING__CACHE_DIR": str(settings.embedding_cache_dir.resolve()),
        "HINDSIGHT_EMBEDDING__TORCH_THREADS": "1",
        "HINDSIGHT_LOG_LEVEL": "WARNING",
    }
    done = subprocess.run(
        [sys.executable, "-c", _STARTUP], env=env, capture_output=True, text=True, check=True, timeout=600
    )
    seconds, rss_kb = done.stdout.split()[-2:]
    return float(seconds), float(rss_kb) / 1024


def run_embed_bench(
    settings: Settings,
    *,
    n: int,
    rounds: int,
    data: Path,
    write: bool,
    console: Console,
    conversations: int | None = None,
) -> EmbedResult:
    """`conversations` limits the agreement check to the first few (the suite's quick size)."""
    groups = load_labelled(data)
    turns = [t for g in groups for t in g.turns]
    if len(turns) < n:
        raise ConfigError(f"{data} holds {len(turns)} turns; ask for at most that many (--n)")
    # Spread the sample over every conversation, so lengths are representative.
    texts = [turns[i] for i in np.linspace(0, len(turns) - 1, n).astype(int)]
    load_before = os.getloadavg()
    embedders, export_s = build_embedders(settings, THREADS)
    for e in embedders.values():  # first calls allocate; keep them off the clock
        e.embed(texts[:64])
    timings = {key: Timing() for key in embedders}
    sizes = sorted({*BATCH_SIZES, settings.embedding.batch_size})  # the configured one is the reference
    by_batch = {bs: _TorchBatch(embedders[("torch", 1)].embedder, bs) for bs in sizes}
    batch_timings = {bs: Timing() for bs in sizes}
    for r in range(rounds):
        keys = list(embedders) if r % 2 == 0 else list(reversed(embedders))
        for key in keys:
            _timed(embedders[key].embed, texts, timings[key])
            console.print(f"round {r + 1}/{rounds} {key[0]} x{key[1]}: {n / timings[key].wall_s[-1]:.0f}/s")
        for bs in sizes if r % 2 == 0 else reversed(sizes):
            _timed(by_batch[bs].embed, texts, batch_timings[bs])
            console.print(
                f"round {r + 1}/{rounds} torch x1 batch {bs}: {n / batch_timings[bs].wall_s[-1]:.0f}/s"
            )

    # Agreement: every turn and question, each backend at 2 threads.
    checked = groups[:conversations] if conversations else groups
    vectors: dict[str, list[tuple[Vector, Vector]]] = {}
    for backend in BACKENDS:
        e = embedders[(backend, max(THREADS))]
        vectors[backend] = [(e.embed(list(g.questions)), e.embed(list(g.turns))) for g in checked]
    recall10: dict[str, float] = {b: evidence_recall(checked, vectors[b]) for b in BACKENDS}
    agreement: dict[str, tuple[float, float, float]] = {}
    ref = vectors["torch"]
    ref_all = np.concatenate([np.concatenate([q, c]) for q, c in ref])
    for backend in BACKENDS[1:]:
        cand_all = np.concatenate([np.concatenate([q, c]) for q, c in vectors[backend]])
        lo, mean = cosine_agreement(ref_all, cand_all)
        agreement[backend] = (top_k_agreement(ref, vectors[backend]), lo, mean)
    startup: dict[str, tuple[float, float]] = {b: startup_cost(settings, b) for b in BACKENDS}
    result = EmbedResult(
        n=n,
        batch_size=settings.embedding.batch_size,
        rounds=rounds,
        timings=timings,
        agreement=agreement,
        queries=sum(len(g.questions) for g in checked),
        corpus=sum(len(g.turns) for g in checked),
        load_before=load_before,
        load_after=os.getloadavg(),
        export_s=export_s,
        startup=startup,
        batch_timings=batch_timings,
        recall10=recall10,
    )
    _print(console, result)
    if write:
        write_section("embed", "\n".join(report_lines(result)))
    return result


def report_lines(r: EmbedResult) -> list[str]:
    lines = [
        "## Embedding backends (`hindsight bench embed`)",
        "",
        f"{r.n:,} LoCoMo turns per measurement, batch size {r.batch_size}, best of {r.rounds} interleaved "
        "rounds; ratios are against torch at the same thread count, measured in the same run. "
        "CPU s is process time (all threads), which other processes' load moves far less than wall time.",
        "",
        "| backend | threads | sentences/s | × torch | sentences per CPU s | × torch (CPU) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for t in THREADS:
        for b in BACKENDS:
            timing = r.timings[(b, t)]
            lines.append(
                f"| {b} | {t} | {timing.per_s(r.n):.0f} | {r.ratio(b, t):.2f} | "
                f"{timing.per_cpu_s(r.n):.0f} | {r.cpu_ratio(b, t):.2f} |"
            )
    lines += [
        "",
        f"Agreement with torch over all {r.corpus:,} LoCoMo turns and {r.queries:,} questions (each "
        f"question searches its own conversation's turns by vector alone); LoCoMo recall@{TOP_K} is the share "
        f"of a question's evidence turns among those top {TOP_K}, averaged over the questions:",
        "",
        f"| backend | top-{TOP_K} agreement | min cosine | mean cosine | LoCoMo recall@{TOP_K} | − torch |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    lines.append(f"| torch | 1.0000 | 1.0000 | 1.00000 | {r.recall10['torch']:.4f} | — |")
    for name, (agree, lo, mean) in r.agreement.items():
        lines.append(
            f"| {name} | {agree:.4f} | {lo:.4f} | {mean:.5f} | {r.recall10[name]:.4f} | {r.recall_delta(name):+.4f} |"
        )
    if r.batch_timings:
        fastest = max(r.batch_timings, key=lambda bs: r.batch_timings[bs].per_cpu_s(r.n))
        lines += [
            "",
            f"Batch size (torch, 1 thread, same texts and rounds, in calls of {REVIEW_CALL} texts as a full review "
            "embeds them): a call's texts are sorted by length and each batch is padded to its longest, so bigger "
            "batches trade padding for fewer, wider matrix products. The default (`embedding.batch_size`) is "
            f"{r.batch_size}; the most sentences per CPU second in this run came at {fastest}.",
            "",
            f"| batch size | sentences/s | × batch {r.batch_size} | sentences per CPU s |",
            "|---:|---:|---:|---:|",
        ]
        ref = r.batch_timings[r.batch_size].per_s(r.n)
        for bs, timing in sorted(r.batch_timings.items()):
            lines.append(
                f"| {bs} | {timing.per_s(r.n):.0f} | {timing.per_s(r.n) / ref:.2f} | {timing.per_cpu_s(r.n):.0f} |"
            )
    verdicts = []
    for b in BACKENDS[1:]:
        # Per CPU second: on a shared machine wall time mostly measures the neighbours.
        speed = min(r.cpu_ratio(b, t) for t in THREADS)
        wall = min(r.ratio(b, t) for t in THREADS)
        delta = r.recall_delta(b)
        ok = (
            speed >= TARGET_SPEEDUP
            and r.agreement[b][0] >= TARGET_AGREEMENT
            and abs(delta) <= TARGET_RECALL_DELTA
        )
        verdicts.append(
            f"{b}: {speed:.2f}× torch's sentences per CPU second at worst (wall time {wall:.2f}×; "
            f"target ≥ {TARGET_SPEEDUP:g}×), top-{TOP_K} agreement {r.agreement[b][0]:.4f} "
            f"(target ≥ {TARGET_AGREEMENT}), LoCoMo recall@{TOP_K} {delta:+.4f} against torch "
            f"(target within {TARGET_RECALL_DELTA}) — {'met' if ok else 'not met'}"
        )
    starts = "; ".join(f"{b} {t:.1f} s, {mb:.0f} MB" for b, (t, mb) in r.startup.items())
    exports = ", ".join(f"{b} {s:.1f} s" for b, s in r.export_s.items())
    lines += [
        "",
        *(f"- {v}" for v in verdicts),
        f"- A new process, import to first vector and its peak RSS (what each worker start costs): {starts}.",
        f"- First load incl. export when the cache was empty (else just the load): {exports}.",
        "- Other int8 recipes, measured on the same agreement set on an earlier machine without VNNI "
        "(`quantise_int8`'s docstring has the table): "
        "none reaches 0.99 at any speed-up. Even 8-bit weights with exact fp32 arithmetic agree 0.987 (mean "
        "cosine 0.99985, at half this int8's speed); SmoothQuant with per-token activations 0.951. Top-10 "
        "agreement of 0.99 needs a mean 1 − cosine of ~1e-4, which quantising activations exceeds tenfold: "
        "on this CPU the backend for exact agreement is fp32 ONNX, the one for speed int8.",
        f"- Machine load average (1/5/15 min) before {_load(r.load_before)}, after {_load(r.load_after)}: "
        "the machine is shared, so absolute figures move with it; the ratios are the figures to read.",
    ]
    return lines


def _load(avg: tuple[float, float, float]) -> str:
    return "/".join(f"{x:.1f}" for x in avg)


def _print(console: Console, r: EmbedResult) -> None:
    table = Table(title=f"embedding, {r.n} LoCoMo turns, batch {r.batch_size}")
    for col in ("backend", "threads", "sent/s", "× torch", "sent/CPU s", "× torch (CPU)"):
        table.add_column(col, justify="right")
    for t in THREADS:
        for b in BACKENDS:
            timing = r.timings[(b, t)]
            table.add_row(
                b,
                str(t),
                f"{timing.per_s(r.n):.0f}",
                f"{r.ratio(b, t):.2f}",
                f"{timing.per_cpu_s(r.n):.0f}",
                f"{r.cpu_ratio(b, t):.2f}",
            )
    console.print(table)
    for name, (agree, lo, mean) in r.agreement.items():
        console.print(f"{name}: top-{TOP_K} agreement {agree:.4f}, cosine min {lo:.4f} mean {mean:.5f}")
    for name, recall in r.recall10.items():
        console.print(f"{name}: LoCoMo recall@{TOP_K} {recall:.4f}")
    for bs, timing in sorted(r.batch_timings.items()):
        console.print(f"torch x1 batch {bs}: {timing.per_s(r.n):.0f} sentences/s")


@dataclass
class ModelsResult:
    """Embedding models side by side (`bench embed --model A --model B`): one thread each, the same texts."""

    n: int
    rounds: int
    timings: dict[tuple[str, str], Timing]  # (model, backend) -> rounds
    startup: dict[tuple[str, str], tuple[float, float]]  # -> (s to first vector, peak RSS MB), new process
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float]


def run_models_bench(
    settings: Settings,
    models: Sequence[str],
    *,
    n: int,
    rounds: int,
    data: Path,
    console: Console,
    backends: Sequence[EmbeddingBackend] = ("onnx", "onnx-int8"),
) -> ModelsResult:
    """Texts/s of each model (ONNX fp32 and int8, one intra-op thread, calls of 30 texts as a review
    makes them), interleaved round by round, and each one's first-vector time and peak RSS in a new process.
    A model's export (first use) happens before the clock starts."""
    from pipeline.adapters.embedder import resolve_model_path

    groups = load_labelled(data)
    turns = [t for g in groups for t in g.turns]
    texts = [turns[i] for i in np.linspace(0, len(turns) - 1, min(n, len(turns))).astype(int)]
    load_before = os.getloadavg()
    embedders: dict[tuple[str, str], OnnxEmbedder] = {}
    for model in models:
        for backend in backends:
            e = OnnxEmbedder(
                settings.embedding.model_copy(
                    update={"model": model, "backend": backend, "torch_threads": 1}
                ),
                model_dir=resolve_model_path(model),
                cache_dir=settings.embedding_cache_dir,
            )
            e.warm_up()
            e.embed(texts[:64])
            embedders[(model, backend)] = e
    timings = {key: Timing() for key in embedders}

    def in_calls(e: OnnxEmbedder) -> Callable[[Sequence[str]], Vector]:
        return lambda ts: np.concatenate(
            [e.embed(ts[i : i + REVIEW_CALL]) for i in range(0, len(ts), REVIEW_CALL)]
        )

    for r in range(rounds):
        for key in list(embedders) if r % 2 == 0 else list(reversed(embedders)):
            _timed(in_calls(embedders[key]), texts, timings[key])
            console.print(
                f"round {r + 1}/{rounds} {key[0]} {key[1]}: {len(texts) / timings[key].wall_s[-1]:.0f}/s"
            )
    startup = {key: startup_cost(settings, key[1], key[0]) for key in embedders}
    result = ModelsResult(len(texts), rounds, timings, startup, load_before, os.getloadavg())
    table = Table(title=f"embedding models, {len(texts)} LoCoMo turns, 1 thread, best of {rounds}")
    for column in ("model", "backend", "texts/s", "texts/CPU-s", "first vector s", "peak RSS MB"):
        table.add_column(column)
    for key, timing in timings.items():
        seconds, rss = startup[key]
        table.add_row(
            key[0],
            key[1],
            f"{timing.per_s(len(texts)):.0f}",
            f"{timing.per_cpu_s(len(texts)):.0f}",
            f"{seconds:.1f}",
            f"{rss:.0f}",
        )
    console.print(table)
    console.print(f"load {_load(load_before)} -> {_load(result.load_after)}")
    return result
