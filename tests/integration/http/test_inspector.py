"""The memory inspector in headless Chromium (Debian's /usr/bin/chromium, driven by playwright),
after real turns went through the real pipeline."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from tests.integration.harness import ARTIFACTS, REPO_ROOT, Stack
from tests.integration.http.scenario import AGENT, USER, run_scenario

pytestmark = pytest.mark.integration
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _ensure_chromium() -> None:
    """Debian's chromium, installed on first use (never `playwright install`: no browser downloads)."""
    if CHROMIUM.exists():
        return
    if shutil.which("apt-get") and os.geteuid() == 0:
        subprocess.run(["apt-get", "install", "-y", "-q", "chromium"], check=False, timeout=900)
    if not CHROMIUM.exists():
        pytest.fail("the inspector tests need Debian's chromium: run `apt-get install -y chromium` as root")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    _ensure_chromium()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    p = context.new_page()
    p.set_default_timeout(15_000)
    yield p
    context.close()


def test_the_inspector_shows_memories_facts_reviews_dead_letters_and_recall(live: Stack, page: Page) -> None:
    run_scenario(live)
    base = str(live.api.base_url).rstrip("/")
    ARTIFACTS.mkdir(exist_ok=True)

    # Scopes, with counts computed from what the pipeline stored.
    page.goto(f"{base}/ui")
    row = page.locator("#scopes tbody tr", has_text=AGENT)
    expect(row).to_contain_text(USER)
    expect(row.locator("td").nth(2)).to_have_text("4")  # episodes
    expect(page.locator(".card", has_text="dead letters")).to_contain_text("1")
    row.get_by_role("link", name=AGENT).click()

    # The scope: every memory with status, weight, quality breakdown and provenance.
    memories = page.locator("#memory-table tr.memory")
    expect(memories).to_have_count(4)
    porto = memories.filter(has_text="I live in Porto")
    expect(porto.locator(".badge")).to_have_text("kept")
    expect(porto.locator(".turns")).to_contain_text("t-porto")
    expect(porto.locator(".turns")).to_contain_text("session s1")
    expect(porto.locator(".quality .bar")).to_have_count(4)
    expect(porto.locator(".quality .total")).to_contain_text("total 0.")
    assert float(porto.locator(".weight").inner_text()) > 0
    expect(page.locator("#facts")).to_contain_text("Lisbon")

    # The quick filter (plain JS) hides rows that do not match.
    page.fill("#quick-filter", "shellfish")
    expect(page.locator("#memory-table tr.memory:visible")).to_have_count(1)
    expect(page.locator("#memory-table tr.memory:visible")).to_contain_text("allergic to shellfish")

    # The recall box shows ranked hits with their score breakdown.
    page.fill("input[name=q]", "what is she allergic to")
    page.get_by_role("button", name="Recall").click()
    hits = page.locator("[data-testid=recall-results] li.hit")
    expect(hits.first).to_contain_text("allergic to shellfish")
    breakdown = hits.first.locator("[data-testid=score-breakdown]")
    # Recall's own explanation: each signal and factor that made the score.
    for signal in ("dense", "lexical", "fused", "weight", "trust"):
        expect(breakdown).to_contain_text(signal)
    page.screenshot(path=str(ARTIFACTS / "inspector-scope.png"), full_page=True)
    if os.environ.get("HINDSIGHT_UPDATE_DOCS_SCREENSHOT"):
        page.screenshot(path=str(REPO_ROOT / "docs" / "inspector.png"), full_page=True)

    # A fact's version chain as a timeline: Porto closed by the move, Lisbon current.
    page.locator("#facts tr", has_text="Lisbon").filter(has_text="city").get_by_role(
        "link", name="history"
    ).click()
    versions = page.locator("[data-testid=fact-timeline] li.version")
    expect(versions).to_have_count(2)
    expect(versions.nth(0)).to_contain_text("Porto")
    expect(versions.nth(0)).to_have_class("version closed")
    expect(versions.nth(1)).to_contain_text("Lisbon")
    expect(versions.nth(1)).to_contain_text("→ now")
    page.screenshot(path=str(ARTIFACTS / "inspector-fact-timeline.png"), full_page=True)

    # One memory: quality dimensions and the (now closed) facts it supports.
    page.go_back()
    page.go_back()
    page.locator("#memory-table tr.memory", has_text="I live in Porto").get_by_role("link").first.click()
    expect(page.locator("blockquote.text")).to_have_text("I live in Porto, near the river.")
    expect(page.locator("[data-testid=quality]")).to_contain_text("dens")
    expect(page.locator("tr.closed", has_text="Porto")).to_have_count(2)  # city and location

    # The review log and the dead letters.
    page.get_by_role("link", name="Review log").click()
    expect(page.locator("tr.review")).to_have_count(2)
    expect(page.locator("tr.review").first).to_contain_text("session_end")
    page.get_by_role("link", name="Dead letters").click()
    expect(page.locator("tr.dead")).to_have_count(1)
    expect(page.locator("tr.dead .reason")).to_contain_text("role: must be one of")
    page.screenshot(path=str(ARTIFACTS / "inspector-dead-letters.png"), full_page=True)

    # Looking is not using: the inspector's recall neither counts as an agent's recall nor keeps hits warm.
    assert "hindsight_recall_latency_seconds_count 0.0" in live.api.get("/metrics").text
    with live.repo.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT max(access_count) FROM episodes").scalar() == 0
