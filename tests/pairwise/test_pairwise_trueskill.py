"""EQ-Bench 3's TrueSkill ratings: synthetic verdicts from known strengths come out in order,
and the benchmark's documented steps hold, each checked against the trueskill package
applied by hand or against arithmetic done here."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest
import trueskill
from pairwise_helpers import JudgeServer, empathos, eqbench_copy, judge_flags, write_run
from test_pairwise_eqbench3 import answer

from empathos.pairwise import BoardComparison, Judgement, Pick, comparisons_of, rate_trueskill
from empathos.pairwise.trueskill_rating import pair_games


def _order(
    sid: str, a: str, b: str, plus_a: float, plus_b: float, it: str = "1"
) -> BoardComparison:
    return BoardComparison(sid, it, a, b, plus_a, plus_b)


def test_known_strengths_come_out_in_order() -> None:
    true = {"m0": 0.0, "m1": 0.8, "m2": 1.6, "m3": 2.4}
    rng = random.Random(3)
    orders = []
    for s in range(30):
        for a in true:
            for b in true:
                if a < b:
                    p = 1.0 / (1.0 + math.exp(-(true[a] - true[b])))
                    win = rng.random() < p
                    for first, second in ((a, b), (b, a)):
                        plus = 3 if (first == a) == win else 0
                        orders.append(_order(str(s), first, second, plus, 3 - plus))
    ts = rate_trueskill(orders)
    assert sorted(ts, key=lambda m: ts[m].mu) == ["m0", "m1", "m2", "m3"]
    assert all(t.norm == t.mu for t in ts.values())  # no anchor model: raw, as the benchmark


def test_the_benchmarks_steps() -> None:
    # step 2: plus signs summed over both orders of a pair: 6 + 3 against 0 + 3
    games = pair_games([_order("1", "a", "b", 6, 0), _order("1", "b", "a", 3, 3)])
    assert games == [("a", "b", pytest.approx(0.5 + (6 / 30) / 2))]
    # steps 3-5 on one decisive pair (8 plus signs to 0): ceil(8/30 * 20) = 6 games won,
    # with bins 3 (sigma) one game; checked against the package applied by hand
    ts = rate_trueskill([_order("1", "a", "b", 4, 0), _order("1", "b", "a", 0, 4)])
    env = trueskill.TrueSkill(mu=1200.0, sigma=350 / 3, beta=350 / 6, tau=0.0, draw_probability=0.0)
    a, b = env.create_rating(), env.create_rating()
    for _ in range(6):
        a, b = trueskill.rate_1vs1(a, b, env=env)
    assert ts["a"].mu == pytest.approx(a.mu) and ts["b"].mu == pytest.approx(b.mu)
    one_a, _ = trueskill.rate_1vs1(env.create_rating(), env.create_rating(), env=env)
    assert ts["a"].sigma == pytest.approx(one_a.sigma)
    assert ts["a"].norm_high - ts["a"].norm == pytest.approx(1.96 * one_a.sigma)
    # a draw is one drawn game: both stay at 1200
    drawn = rate_trueskill([_order("1", "a", "b", 2, 2)])
    assert drawn["a"].mu == pytest.approx(1200.0) == pytest.approx(drawn["b"].mu)
    # step 6: the benchmark's anchors land on 1500 and 200
    anchors = ("o3", "meta-llama/llama-3.2-1b-instruct")
    ts = rate_trueskill(
        [_order("1", anchors[0], anchors[1], 9, 0), _order("1", "x", anchors[1], 3, 0)]
    )
    assert ts["o3"].norm == pytest.approx(1500.0) and ts[anchors[1]].norm == pytest.approx(200.0)
    assert 200.0 < ts["x"].norm < 1500.0


def test_judgements_as_plus_counts_with_analysis_downscaled() -> None:
    def judged(sid: str, picks: dict[str, Pick]) -> Judgement:
        return Judgement(scenario_id=sid, trial=0, first="a", second="b", judge="j",
                         template_id="t", template_version="v", picks=picks)  # fmt: skip

    picks = {"overall": Pick(winner="first", margin=3), "warmth": Pick(winner="second", margin=1)}
    role_play, analysis = comparisons_of([judged("1", picks), judged("405", picks)], "j")
    assert (role_play.plus_test, role_play.plus_other) == (3, 1)
    assert (analysis.plus_test, analysis.plus_other) == (1, 0)


def test_rating_trueskill_end_to_end_and_its_flags(tmp_path: Path) -> None:
    runs = [
        str(write_run(tmp_path / "kind", "kind", ["1", "2"], lambda s, t: "<<kind>> (by kind)")),
        str(write_run(tmp_path / "cold", "cold", ["1", "2"], lambda s, t: "meh (by cold)")),
    ]
    copy = str(eqbench_copy(tmp_path / "eq3"))
    with JudgeServer(lambda a, b: None, answer=answer) as server:
        res = empathos(
            "compare", "--pairwise", "--eqbench3", copy, *runs, "--out", str(tmp_path / "pw"),
            *judge_flags(server.url), "--rating", "trueskill", "--format", "json",
        )  # fmt: skip
        assert res.exit_code == 0, res.stderr
        assert len(server.requests) == 4
    result = json.loads(res.stdout)
    assert result["rating"] == "trueskill"
    kind, cold = result["ratings"]
    assert kind["model"] == "kind" and kind["strength"] > 1200.0 > cold["strength"]
    bad = empathos("compare", "--pairwise", *runs, "--rating", "trueskill",
                   *judge_flags("http://127.0.0.1:9/v1"))  # fmt: skip
    assert bad.exit_code != 0 and "--eqbench3" in str(bad.exception)
