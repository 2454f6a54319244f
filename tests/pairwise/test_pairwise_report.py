"""`empathos report --pairwise DIR` shows the ratings, the win-rate heatmap and the flip rate;
`compare` without --pairwise still compares exactly two runs; a missing judge is one line."""

from __future__ import annotations

import re
from pathlib import Path

from pairwise_helpers import empathos, write_run

from empathos.pairwise import Item, Judgement, JudgementStore, Pick, summarize


def _results(folder: Path) -> None:
    """A results directory: 'b' beats 'a' in both orders on s0..s3, and on s4 each order
    picks the first (a flip)."""
    store = JudgementStore(folder)
    items = []
    for s in range(5):
        for m in ("a", "b"):
            items.append(Item(scenario_id=f"s{s}", model=m, transcript=()))
        for first, second in (("a", "b"), ("b", "a")):
            winner = "first" if s == 4 or first == "b" else "second"
            picks = {"overall": Pick(winner=winner, margin=2)}
            judgement = Judgement(
                scenario_id=f"s{s}", trial=0, first=first, second=second, judge="J",
                template_id="judge_pairwise.en", template_version="1", picks=picks,
            )  # fmt: skip
            store.append(judgement)
    judged, _ = store.read()
    store.write_ratings(summarize(judged, items, "J", anchor="a", n_boot=20))


def test_the_report_shows_a_pairwise_section(tmp_path: Path) -> None:
    _results(tmp_path / "pw")
    out = tmp_path / "report"
    res = empathos("report", "--out", str(out), "--no-figures", "--pairwise", str(tmp_path / "pw"))
    assert res.exit_code == 0, res.stderr
    page = (out / "index.html").read_text(encoding="utf-8")
    section = page[page.index('<section id="sec-pairwise">') :]
    section = section[: section.index("</section>")]
    assert re.search(r"<td>b</td><td class='num'>\d+</td>", section)
    assert section.index("<td>b</td>") < section.index("<td>a</td>")  # b first: it won
    assert "pairwise-heatmap" in section and ">90%<" in section and ">10%<" in section
    assert "J: flip rate 20%, first position picked in 60.0% of orders" in section


def test_compare_without_pairwise_takes_two_runs_and_pairwise_needs_a_judge(tmp_path: Path) -> None:
    runs = [str(write_run(tmp_path / m, m, ["s0"], lambda s, t: "hi")) for m in ("x", "y", "z")]
    res = empathos("compare", *runs)
    assert res.exit_code != 0 and "compares two runs, got 3" in str(res.exception)
    res = empathos("compare", "--pairwise", *runs, "--out", str(tmp_path / "pw"))
    assert res.exit_code != 0 and "no judge" in str(res.exception)
    flags = ["--judge-model", "j", "--judge-base-url", "http://127.0.0.1:9/v1"]
    res = empathos("compare", "--pairwise", *runs, *flags, "--anchor", "w")
    assert "--anchor: no model 'w'; choose one of ['x', 'y', 'z']" in str(res.exception)
    res = empathos("compare", "--pairwise", *runs, *flags, "--aspect", "warmth")
    assert "--aspect: unknown aspect 'warmth'" in str(res.exception)
