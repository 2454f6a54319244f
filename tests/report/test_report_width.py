"""A 5-model page fits a 1400 px window (issue 45: it was wider, the leaderboard's twenty
columns of value and interval on one line each): in Debian's headless chromium, neither the
page nor any section scrolls sideways; the intervals wrap below their values instead."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from report_fixtures import write_models
from report_helpers import empathos

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
playwright = pytest.importorskip("playwright.sync_api")
if not Path(CHROMIUM).exists():
    pytest.skip(
        "Debian's chromium is not installed (scripts/test.sh installs it)", allow_module_level=True
    )

WINDOW = 1400


def test_a_five_model_page_is_no_wider_than_a_1400_px_window(tmp_path: Path) -> None:
    write_models(tmp_path / "results", 5)
    out = tmp_path / "report"
    res = empathos("report", str(tmp_path / "results"), "--out", str(out), "--no-figures")
    assert res.returncode == 0, res.stderr
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            page = browser.new_page(viewport={"width": WINDOW, "height": 900})
            page.goto((out / "index.html").as_uri())
            page.wait_for_selector("#leaderboard tr[data-model]")
            page_width = page.evaluate("document.documentElement.scrollWidth")
            wide = page.evaluate(
                "Array.from(document.querySelectorAll('section')).filter("
                "s => s.scrollWidth > s.clientWidth + 1).map(s => [s.id, s.scrollWidth])"
            )
        finally:
            browser.close()
    assert page_width <= WINDOW
    assert wide == [], f"sections that scroll sideways at {WINDOW} px: {wide}"
