"""The report in a real headless Chromium (Debian's package, driven by Playwright): no console
errors, every plot holds data, the dialogue filter finds a dialogue and shows its transcript,
and the leaderboard on the page shows `empathos score`'s numbers."""

from __future__ import annotations

import base64
import bz2
import json
import random
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from report_fixtures import write_models
from report_helpers import empathos, score_json

from empathos.examples import examples_dir
from empathos.records import read_record
from empathos.report.assets import BUNZIP2, LOADER
from empathos.report.html import text85

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
playwright = pytest.importorskip("playwright.sync_api")
if not Path(CHROMIUM).exists():
    pytest.skip(
        "Debian's chromium is not installed (scripts/test.sh installs it)", allow_module_level=True
    )

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]  # fmt: skip


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def _open(browser: Any, report: Path) -> tuple[Any, list[str]]:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((report / "index.html").as_uri())
    page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length >= 7")
    return page, errors


def _check_plots(page: Any) -> None:
    plots = page.evaluate(
        "Array.from(document.querySelectorAll('div.plot')).filter(d => d.id !== 'dlg-state')"
        ".map(d => [d.id, d.data ? d.data.filter(t => (t.x || t.r || t.z || []).length).length"
        " : 0])"
    )
    ids = {i for i, _ in plots}
    assert {"fig-leaderboard", "breakdown-domain", "breakdown-mechanism", "breakdown-persona",
            "heatmap", "traj-3d", "traj-proj"} <= ids  # fmt: skip
    empty = [i for i, n in plots if n == 0 and i != "usage"]
    assert not empty, f"plots without data: {empty}"


def test_examples_report_in_chromium(browser: Any, examples_report: Path) -> None:
    page, errors = _open(browser, examples_report)
    _check_plots(page)
    scored = score_json(examples_dir())
    for model, row in scored.items():
        cell = page.inner_text(f'#leaderboard tr[data-model="{model}"] td:nth-child(8)')
        assert abs(float(cell.split()[0]) - row["epmq"]) <= 0.01
    # filter by a scenario id: only that scenario's dialogues remain; open one
    page.fill("#f-text", "ex-new-city")
    rows = page.locator("#dlg-list tbody tr")
    assert rows.count() == 2
    assert set(
        page.eval_on_selector_all("#dlg-list tbody tr", "r => r.map(x => x.dataset.scenario)")
    ) == {"ex-new-city"}
    page.select_option("#f-model", "example-curt")
    assert rows.count() == 1
    rows.first.click()
    page.wait_for_selector("#dlg-view .line.user")
    record = read_record(examples_dir() / "example-curt" / "ex-new-city.json")
    view = page.inner_text("#dlg-view")
    assert record.turns[0].user.strip()[:40] in view
    assert record.turns[-1].assistant.strip()[:40] in view
    assert record.termination.kind.value in view
    assert page.evaluate("document.getElementById('dlg-state').data.length") >= 5
    # switching the trajectory model redraws the plots with that model's data
    page.select_option("#traj-model", "example-curt")
    assert "example-curt" in page.evaluate("document.getElementById('traj-3d').layout.title.text")
    assert errors == []


def test_published_sample_report_in_chromium(
    browser: Any, empa_sample: Path, tmp_path: Path
) -> None:
    res = empathos("report", str(empa_sample / "results"), "--out", str(tmp_path), "--no-figures")
    assert res.returncode == 0, res.stderr
    page, errors = _open(browser, tmp_path)
    _check_plots(page)
    page.fill("#f-text", "script_282")
    assert page.locator("#dlg-list tbody tr").count() == 3
    page.locator("#dlg-list tbody tr").first.click()
    page.wait_for_selector("#dlg-view details.eval")
    n_turns = page.evaluate("document.querySelectorAll('#dlg-view .line.user').length")
    assert n_turns >= 12
    assert errors == []


def test_a_model_name_that_would_end_the_script_is_shown_as_text(
    browser: Any, tmp_path: Path
) -> None:
    """A model name holding ``</script><!--`` (and quotes, ``&``, a tag) once ended the page's
    data early and left it blank: it is data, shown as text."""
    evil = 'curt</script><!-- "&amp; <b>bold</b>'
    results = tmp_path / "results"
    shutil.copytree(examples_dir(), results)
    for path in (results / "example-curt").glob("*.json"):
        record = json.loads(path.read_text(encoding="utf-8"))
        path.write_text(json.dumps({**record, "model": evil}), encoding="utf-8")
    res = empathos("report", str(results), "--out", str(tmp_path / "report"), "--no-figures")
    assert res.returncode == 0, res.stderr
    page, errors = _open(browser, tmp_path / "report")
    _check_plots(page)
    models = page.eval_on_selector_all(
        "#leaderboard tr[data-model]", "r => r.map(x => x.dataset.model)"
    )
    assert evil in models
    assert evil in page.eval_on_selector_all("#f-model option", "o => o.map(x => x.value)")
    page.select_option("#f-model", evil)
    rows = page.locator("#dlg-list tbody tr")
    assert rows.count() == len(list((results / "example-curt").glob("*.json")))
    rows.first.click()
    page.wait_for_selector("#dlg-view .line.user")
    assert page.evaluate("document.querySelectorAll('b').length") == 0  # never parsed as HTML
    assert errors == []


def test_the_pages_bzip2_decoder_matches_python(browser: Any) -> None:
    """The page unpacks dialogues with its own base-85 and bzip2 decoders: they must return
    exactly what :func:`text85` and Python's ``bz2`` packed, for runs (both run-length
    steps), every byte value, incompressible data, several 900 kB blocks, concatenated
    streams and every length of base 85's last group."""
    rng = random.Random(7)
    cases = {
        "empty": b"",
        "one byte": b"x",
        "runs": b"a" * 1000 + b"b" * 255 + b"c" * 256 + b"d" * 4 + b"e" * 5 + b"f" * 3,
        "every byte": bytes(range(256)) * 40,
        "random": rng.randbytes(200_000),
        "blocks": "".join(rng.choice("评估共情 abc\n") for _ in range(700_000)).encode(),
    }
    page = browser.new_page()
    page.set_content(f"<script>{LOADER}{BUNZIP2}</script>")
    decode = (
        "text => { const out = window.bunzip2(window.un85(text)); let s = '';"
        " for (let i = 0; i < out.length; i += 8192)"
        "   s += String.fromCharCode.apply(null, out.subarray(i, i + 8192));"
        " return btoa(s); }"
    )
    for name, raw in cases.items():
        packed = bz2.compress(raw, 1 if name == "blocks" else 9)
        got = page.evaluate(decode, text85(packed))
        assert base64.b64decode(got) == raw, name
    two = bz2.compress(b"first stream ", 9) + bz2.compress(b"second stream", 9)
    got = page.evaluate(decode, text85(two))
    assert base64.b64decode(got) == b"first stream second stream"
    for n in range(8):
        raw = rng.randbytes(40 + n)
        assert bytes(page.evaluate("t => Array.from(window.un85(t))", text85(raw))) == raw
    page.close()


_BREAKDOWN_GEOMETRY = """
id => {
  const div = document.getElementById(id);
  const box = e => { const r = e.getBoundingClientRect();
                     return [r.left, r.top, r.right, r.bottom]; };
  const texts = sel => Array.from(div.querySelectorAll(sel)).map(t => t.textContent);
  return {
    div: box(div),
    plot: box(div.querySelector('rect.nsewdrag')),
    legend: div.querySelector('g.legend') !== null,
    rows: texts('g.ytick text'),
    columns: Array.from(div.querySelectorAll('g.xtick text')).map(box),
    labels: Array.from(div.querySelectorAll('g.ytick text, g.xtick text')).map(box),
  };
}
"""


def _overlap(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _inside(a: list[float], outer: list[float]) -> bool:
    return (
        a[0] >= outer[0] - 0.5
        and a[1] >= outer[1] - 0.5
        and a[2] <= outer[2] + 0.5
        and (a[3] <= outer[3] + 0.5)
    )


def test_breakdowns_stay_readable_at_16_models(browser: Any, tmp_path: Path) -> None:
    """Screenshot of each breakdown at 16 models: the plot takes the page's width and a row
    of at least 18 px per model (no legend beside it), every model's name is a row label,
    and no label is clipped by the figure's edge or drawn over another. The screenshots stay
    in the test's tmp_path for a look."""
    root = tmp_path / "results"
    names = write_models(root, n_models=16, opaque=2)
    out = tmp_path / "report"
    res = empathos("report", str(root), "--out", str(out), "--scenarios", "builtin", "--no-figures")
    assert res.returncode == 0, res.stderr
    page, errors = _open(browser, out)
    for grouping in ("domain", "mechanism", "persona"):
        fid = f"breakdown-{grouping}"
        page.locator(f"#{fid}").scroll_into_view_if_needed()
        page.locator(f"#{fid}").screenshot(path=str(tmp_path / f"{fid}.png"))
        g = page.evaluate(_BREAKDOWN_GEOMETRY, fid)
        left, top, right, bottom = g["plot"]
        assert right - left >= 0.6 * (g["div"][2] - g["div"][0]), f"{grouping}: plot {g['plot']}"
        assert (bottom - top) / len(names) >= 18, f"{grouping}: rows of {bottom - top} px"
        assert not g["legend"], grouping
        assert sorted(g["rows"]) == sorted(names), grouping
        assert len(g["columns"]) >= 4, grouping
        for i, label in enumerate(g["labels"]):
            assert _inside(label, g["div"]), f"{grouping}: label clipped {label}"
            assert not any(_overlap(label, other) for other in g["labels"][i + 1 :]), grouping
    assert errors == []
