"""PNG charts of the figures people would rather see than read, drawn from the dicts the benches return.

Each chart is a pure function of one bench's figures (`draw(name, figures)` returns the matplotlib Figure;
`write_chart` saves it), so a test can check that what is drawn equals what was measured. matplotlib is
imported here only, and this module only by `hindsight bench all`: the service never needs it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

Figures = Mapping[str, float]
SIZE_IN = (9.0, 4.5)
DPI = 100  # 900 × 450 px
COLOURS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3")


@dataclass(frozen=True)
class Chart:
    title: str
    draw: Callable[[Figures, Figure], None]


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend: files only, no display on a server or in CI."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig: Any, path: Path, *, dpi: int = 100) -> Path:
    """Lay out, write `path` (making its folder) and close the figure whatever happens."""
    try:
        fig.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=dpi)
    finally:
        pyplot().close(fig)
    return path


def grouped_bars(
    ax: Axes, groups: Sequence[str], series: Mapping[str, Sequence[float]], *, fmt: str = "{:.2f}"
) -> None:
    """One bar per (group, series), the series side by side in each group, each bar labelled with its value."""
    n = len(series)
    width = 0.8 / max(n, 1)
    for i, (label, values) in enumerate(series.items()):
        xs = [g + (i - (n - 1) / 2) * width for g in range(len(groups))]
        bars = ax.bar(xs, values, width, label=label, color=COLOURS[i % len(COLOURS)])
        ax.bar_label(bars, labels=[fmt.format(v) for v in values], fontsize=7, padding=1)
    ax.set_xticks(range(len(groups)), groups, fontsize=8)
    ax.legend(fontsize=8)


def _suffixed(figures: Figures, prefix: str, suffix: str = "") -> dict[str, float]:
    """{middle: value} of the keys `prefix<middle>suffix`, in the dict's order."""
    return {
        k[len(prefix) : len(k) - len(suffix) if suffix else None]: v
        for k, v in figures.items()
        if k.startswith(prefix) and k.endswith(suffix)
    }


def _ingest(f: Figures, fig: Figure) -> None:
    ax = fig.subplots()
    grouped_bars(
        ax,
        ["p50", "p99"],
        {
            "write_memory": [f["write_p50_us"], f["write_p99_us"]],
            "raw XADD": [f["xadd_p50_us"], f["xadd_p99_us"]],
        },
        fmt="{:.0f}",
    )
    ax.set_ylabel("µs per call")
    ax.set_title(f"write_memory vs raw XADD (p50 ratio {f['ratio_p50']:.2f}, target ≤ 2.0)", fontsize=10)


def _review(f: Figures, fig: Figure) -> None:
    left, right = fig.subplots(1, 2)
    steps = _suffixed(f, "full_", "_ms")
    steps.pop("total", None)
    left.barh(list(steps), list(steps.values()), color=COLOURS[0])
    left.bar_label(left.containers[0], labels=[f"{v:,.0f}" for v in steps.values()], fontsize=7, padding=2)
    left.invert_yaxis()
    left.set_xlabel("ms")
    left.set_title(f"full review path: {f['full_total_ms']:,.0f} ms (target ≤ 5,000)", fontsize=10)
    stages = _suffixed(f, "e2e_stage_", "_ms")
    total = sum(stages.values()) or 1.0
    shares = {k: 100 * v / total for k, v in stages.items()}
    right.barh(list(shares), list(shares.values()), color=COLOURS[1])
    right.bar_label(right.containers[0], labels=[f"{v:.0f}%" for v in shares.values()], fontsize=7, padding=2)
    right.invert_yaxis()
    right.set_xlabel("% of the worker's review time")
    right.set_title(f"end to end: {f.get('e2e_turns_per_s', 0):.1f} turns/s, stages", fontsize=10)


def _decay(f: Figures, fig: Figure) -> None:
    ax = fig.subplots()
    chunks = list(_suffixed(f, "full_s_"))
    grouped_bars(
        ax,
        [f"chunk {int(c):,}" for c in chunks],
        {
            "(a) decay pass, all go cold": [f[f"full_s_{c}"] for c in chunks],
            "(c) plain UPDATE, same rows": [f[f"reference_s_{c}"] for c in chunks],
            "(s) steady hourly pass": [f[f"steady_s_{c}"] for c in chunks],
        },
        fmt="{:.1f}",
    )
    ax.axhline(f["target_s"], color="grey", linestyle="--", linewidth=1)
    ax.set_ylabel("seconds")
    ax.set_title(f"decay over {f['rows']:,.0f} rows (dashed: target for (a))", fontsize=10)


def _locomo(f: Figures, fig: Figure) -> None:
    axes = fig.subplots(1, 2, sharey=True)
    for ax, k in zip(axes, ("r5", "r10"), strict=True):
        pipeline = _suffixed(f, f"pipeline_{k}_")
        floor = _suffixed(f, f"floor_{k}_")
        cats = [c for c in pipeline if c in floor]
        grouped_bars(
            ax,
            cats,
            {"BM25 floor": [floor[c] for c in cats], "hindsight": [pipeline[c] for c in cats]},
        )
        ax.set_ylim(0, 1.1)
        ax.set_title(f"LoCoMo evidence recall@{k[1:]} per category", fontsize=10)
        ax.tick_params(axis="x", labelrotation=20)


def _recall(f: Figures, fig: Figure) -> None:
    ax = fig.subplots()
    grouped_bars(
        ax,
        ["p50", "p95"],
        {
            "embedding + vector search (floor)": [f["floor_p50_ms"], f["floor_p95_ms"]],
            "hybrid recall": [f["recall_p50_ms"], f["recall_p95_ms"]],
        },
        fmt="{:.1f}",
    )
    ax.set_ylabel("ms per query")
    ax.set_title(
        f"recall at {f['memories']:,.0f} memories in one scope (p95 ratio {f['ratio_p95']:.2f}, target ≤ 1.5)",
        fontsize=10,
    )


def _embed(f: Figures, fig: Figure) -> None:
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [2, 1]})
    # Per CPU second, as the bench's verdict: on a shared machine wall time mostly measures the neighbours.
    rates = _suffixed(f, "", "_per_cpu_s")  # "torch_t1" -> sentences per CPU s
    backends = list(dict.fromkeys(k.rsplit("_t", 1)[0] for k in rates))
    threads = sorted({int(k.rsplit("_t", 1)[1]) for k in rates})
    grouped_bars(
        left,
        backends,
        {f"{t} thread{'s' if t > 1 else ''}": [rates[f"{b}_t{t}"] for b in backends] for t in threads},
        fmt="{:.0f}",
    )
    left.set_ylabel("sentences per CPU second")
    left.set_title("embedding throughput by backend (per CPU second)", fontsize=10)
    agreement = _suffixed(f, "", "_agreement")
    right.bar(list(agreement), list(agreement.values()), color=COLOURS[2])
    right.bar_label(right.containers[0], labels=[f"{v:.4f}" for v in agreement.values()], fontsize=7)
    right.axhline(0.99, color="grey", linestyle="--", linewidth=1)
    right.set_ylim(min([0.95, *agreement.values()]) - 0.01, 1.005)
    right.set_title("top-10 agreement with torch", fontsize=10)


CHARTS: dict[str, Chart] = {
    "ingest": Chart("write_memory against a raw XADD, p50 and p99", _ingest),
    "review": Chart("review: where the time goes", _review),
    "decay": Chart("decay pass against a plain UPDATE of the same rows", _decay),
    "locomo": Chart("LoCoMo recall@5 and @10 per category against the BM25 floor", _locomo),
    "recall": Chart("recall latency p50/p95 against query embedding + vector search", _recall),
    "embed": Chart("embedding backends: throughput and agreement", _embed),
}


def draw(name: str, figures: Figures) -> Figure:
    """The chart of bench `name` (a key of CHARTS) from its figures; the caller closes it."""
    if name not in CHARTS:
        raise KeyError(f"no chart for {name!r}; charts exist for {', '.join(CHARTS)}")
    plt = pyplot()
    fig = plt.figure(figsize=SIZE_IN, dpi=DPI, layout="constrained")
    CHARTS[name].draw(figures, fig)
    return fig


def write_chart(name: str, figures: Figures, directory: Path) -> Path:
    """Draw and save `directory/<name>.png`; returns the path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.png"
    fig = draw(name, figures)
    try:
        fig.savefig(path, dpi=DPI)
    finally:
        pyplot().close(fig)
    return path
