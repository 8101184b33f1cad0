"""bench.charts: each chart is a valid PNG of a fixed size, and what it draws is the figures given."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import charts
from bench.report import CHART_TAG, link_chart, write_section

INGEST = {
    "write_p50_us": 134.0,
    "write_p99_us": 365.0,
    "xadd_p50_us": 91.0,
    "xadd_p99_us": 217.0,
    "ratio_p50": 1.47,
    "pipelined_per_s": 31397.0,
}
REVIEW = {
    "full_total_ms": 3237.0,
    "full_load_ms": 364.0,
    "full_cluster_ms": 2678.0,
    "full_plan_ms": 32.0,
    "full_summarise_ms": 163.0,
    "batch_ratio_stored": 0.097,
    "e2e_ratio": 0.733,
    "e2e_turns_per_s": 40.5,
    "e2e_stage_load_ms": 20.0,
    "e2e_stage_embed_ms": 840.0,
    "e2e_stage_write_ms": 140.0,
}
DECAY = {
    "rows": 1e6,
    "target_s": 30.0,
    "full_s_50000": 20.6,
    "reference_s_50000": 23.75,
    "steady_s_50000": 8.92,
    "ratio_50000": 0.87,
    "full_s_100000": 25.86,
    "reference_s_100000": 26.9,
    "steady_s_100000": 10.07,
    "ratio_100000": 0.96,
}
LOCOMO = {
    "all_r5": 0.7,
    "all_r10": 0.8,
    "floor_r5_multi-hop": 0.3,
    "floor_r10_multi-hop": 0.4,
    "pipeline_r5_multi-hop": 0.5,
    "pipeline_r10_multi-hop": 0.6,
    "floor_r5_temporal": 0.35,
    "floor_r10_temporal": 0.45,
    "pipeline_r5_temporal": 0.55,
    "pipeline_r10_temporal": 0.65,
}
RECALL = {
    "memories": 100000.0,
    "floor_p50_ms": 11.2,
    "floor_p95_ms": 19.5,
    "recall_p50_ms": 14.1,
    "recall_p95_ms": 26.3,
    "ratio_p95": 1.35,
}
EMBED = {
    "torch_t1_per_s": 50.0,
    "torch_t1_per_cpu_s": 48.0,
    "onnx_t1_per_cpu_s": 80.0,
    "onnx-int8_t1_per_cpu_s": 140.0,
    "torch_t2_per_cpu_s": 85.0,
    "torch_t2_per_s": 99.0,  # wall time: not drawn
    "onnx_t2_per_cpu_s": 130.0,
    "onnx-int8_t2_per_cpu_s": 230.0,
    "onnx_agreement": 0.9998,
    "onnx-int8_agreement": 0.991,
}
FIGURES: dict[str, dict[str, float]] = {
    "ingest": INGEST,
    "review": REVIEW,
    "decay": DECAY,
    "locomo": LOCOMO,
    "recall": RECALL,
    "embed": EMBED,
}


def test_every_chart_has_figures_here() -> None:
    assert set(FIGURES) == set(charts.CHARTS)


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_each_chart_is_a_png_of_the_fixed_size(name: str, tmp_path: Path) -> None:
    import matplotlib.image

    path = charts.write_chart(name, FIGURES[name], tmp_path / "docs" / "bench")
    assert path == tmp_path / "docs" / "bench" / f"{name}.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pixels = matplotlib.image.imread(path)
    height, width = pixels.shape[:2]
    assert (width, height) == (charts.SIZE_IN[0] * charts.DPI, charts.SIZE_IN[1] * charts.DPI)
    assert pixels.std() > 0.01  # something was drawn, not a blank canvas


def _bars(name: str) -> list[list[float]]:
    plt = charts.pyplot()
    fig = charts.draw(name, FIGURES[name])
    try:
        out = []
        for ax in fig.axes:
            values = []
            for container in ax.containers:
                for bar in container:
                    horizontal = container.orientation == "horizontal"
                    values.append(round(bar.get_width() if horizontal else bar.get_height(), 6))
            out.append(values)
        return out
    finally:
        plt.close(fig)


def test_ingest_draws_write_memory_and_xadd_at_p50_and_p99() -> None:
    assert _bars("ingest") == [[134.0, 365.0, 91.0, 217.0]]


def test_review_draws_the_path_steps_and_the_stage_shares() -> None:
    steps, shares = _bars("review")
    assert steps == [364.0, 2678.0, 32.0, 163.0]  # the total is the title, not a bar
    assert shares == [2.0, 84.0, 14.0]  # % of 1,000 ms


def test_decay_draws_each_pass_per_chunk() -> None:
    assert _bars("decay") == [[20.6, 25.86, 23.75, 26.9, 8.92, 10.07]]


def test_locomo_draws_floor_and_pipeline_per_category_at_5_and_10() -> None:
    assert _bars("locomo") == [[0.3, 0.35, 0.5, 0.55], [0.4, 0.45, 0.6, 0.65]]


def test_recall_draws_floor_and_hybrid_at_p50_and_p95() -> None:
    assert _bars("recall") == [[11.2, 19.5, 14.1, 26.3]]


def test_embed_draws_throughput_per_thread_count_and_agreement() -> None:
    throughput, agreement = _bars("embed")
    assert throughput == [48.0, 80.0, 140.0, 85.0, 130.0, 230.0]
    assert agreement == [0.9998, 0.991]


def test_an_unknown_chart_is_named() -> None:
    with pytest.raises(KeyError, match="no chart for 'nope'"):
        charts.draw("nope", {})


def test_a_chart_link_goes_under_the_heading_and_replaces_the_previous_one(tmp_path: Path) -> None:
    md = tmp_path / "BENCHMARKS.md"
    write_section("decay", "## Decay\n\nSome text.", md)
    write_section("recall", "## Recall\n\nOther text.", md)
    assert link_chart("decay", "docs/bench/decay.png", "decay chart", md)
    once = md.read_text()
    assert link_chart("decay", "docs/bench/decay.png", "decay chart", md)
    assert md.read_text() == once  # idempotent: no second image, no extra blank lines
    decay = once.split("<!-- bench:decay -->\n")[1].split("<!-- /bench:decay -->")[0]
    assert decay.startswith(f"## Decay\n\n![decay chart](docs/bench/decay.png) {CHART_TAG}\n\nSome text.")
    assert once.count(CHART_TAG) == 1
    assert not link_chart("missing", "x.png", "x", md)


def test_a_top_section_goes_above_the_others_and_stays_there(tmp_path: Path) -> None:
    md = tmp_path / "BENCHMARKS.md"
    write_section("ingest", "ingest", md)
    write_section("summary", "summary v1", md, top=True)
    write_section("summary", "summary v2", md, top=True)
    text = md.read_text()
    assert text.startswith("# Benchmarks\n")
    assert text.index("<!-- bench:summary -->") < text.index("<!-- bench:ingest -->")
    assert "summary v2" in text
    assert "summary v1" not in text
