"""bench.report: each benchmark rewrites its own section of BENCHMARKS.md and nothing else."""

from __future__ import annotations

import re
from pathlib import Path

from bench.report import HEADER, machine, write_section


def section(text: str, name: str) -> str:
    """The whole marked block of one section, markers included."""
    match = re.search(
        rf"<!-- bench:{re.escape(name)} -->\n.*?\n<!-- /bench:{re.escape(name)} -->", text, re.S
    )
    assert match is not None, f"no section {name!r} in {text!r}"
    return match.group(0)


def test_first_write_creates_the_file_with_a_header(tmp_path: Path) -> None:
    path = tmp_path / "BENCHMARKS.md"
    write_section("ingest", "| turns/s | 1200 |\n\n", path=path)

    text = path.read_text()
    assert text.startswith(HEADER.rstrip() + "\n\n<!-- bench:ingest -->\n| turns/s | 1200 |\n\n_Measured ")
    assert text.endswith("<!-- /bench:ingest -->\n")
    assert f" on {machine()}._\n" in text
    assert re.search(r"_Measured \d{4}-\d\d-\d\d \d\d:\d\d UTC on ", text)
    assert text.count("# Benchmarks") == 1


def test_second_write_replaces_only_its_own_section(tmp_path: Path) -> None:
    path = tmp_path / "BENCHMARKS.md"
    write_section("ingest", "ingest v1", path=path)
    write_section("recall", "recall v1", path=path)
    write_section("review", "review v1", path=path)
    recall_before = section(path.read_text(), "recall")
    review_before = section(path.read_text(), "review")

    write_section("ingest", "ingest v2", path=path)

    text = path.read_text()
    assert "ingest v1" not in text
    assert text.count("<!-- bench:ingest -->") == 1
    assert text.count("<!-- /bench:ingest -->") == 1
    assert "ingest v2" in section(text, "ingest")
    assert section(text, "recall") == recall_before
    assert section(text, "review") == review_before
    # the order of the sections stays as it was
    assert text.index("bench:ingest") < text.index("bench:recall") < text.index("bench:review")
    assert text.startswith(HEADER.rstrip() + "\n\n")


def test_a_middle_section_is_replaced_in_place(tmp_path: Path) -> None:
    path = tmp_path / "BENCHMARKS.md"
    for name in ("a", "b", "c"):
        write_section(name, f"{name} first", path=path)
    before = path.read_text()

    write_section("b", "b second", path=path)

    after = path.read_text()
    assert after == before.replace(section(before, "b"), section(after, "b"))
    assert "b second" in section(after, "b")
    assert "b first" not in after


def test_hand_written_text_around_sections_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "BENCHMARKS.md"
    path.write_text("# My notes\n\nSomething written by hand.\n")
    write_section("ingest", "one", path=path)
    with path.open("a") as fh:
        fh.write("\nA footnote after the section.\n")

    write_section("ingest", "two", path=path)

    text = path.read_text()
    assert text.startswith("# My notes\n\nSomething written by hand.\n\n<!-- bench:ingest -->\ntwo\n")
    assert text.endswith("<!-- /bench:ingest -->\n\nA footnote after the section.\n")
    assert "# Benchmarks" not in text


def test_names_that_share_a_prefix_are_different_sections(tmp_path: Path) -> None:
    path = tmp_path / "BENCHMARKS.md"
    write_section("recall", "plain", path=path)
    write_section("recall-large", "large", path=path)
    write_section("recall", "plain again", path=path)

    text = path.read_text()
    assert "large" in section(text, "recall-large")
    assert "plain again" in section(text, "recall")
    assert "plain\n" not in text.replace("plain again\n", "")
