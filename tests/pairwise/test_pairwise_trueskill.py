"""EQ-Bench 3's TrueSkill ratings: synthetic verdicts from known strengths come out in order,
and the benchmark's documented steps hold, each checked against the trueskill package
applied by hand or against arithmetic done here."""

from __future__ import annotations

import json
import math
import os
import random
from pathlib import Path

import pytest
import trueskill
from pairwise_helpers import JudgeServer, empathos, eqbench_copy, judge_flags, write_run
from test_pairwise_eqbench3 import answer

from empathos.pairwise import BoardComparison, Judgement, Pick, comparisons_of, rate_trueskill
from empathos.pairwise.leaderboard import read_board_elo
from empathos.pairwise.trueskill_rating import pair_games


def _order(
    sid: str, a: str, b: str, plus_a: float, plus_b: float, it: str = "1"
) -> BoardComparison:
    return BoardComparison(sid, it, a, b, plus_a, plus_b)


ENV = trueskill.TrueSkill(mu=1200.0, sigma=350 / 3, beta=350 / 6, tau=0.0, draw_probability=0.0)


def _played(games: int) -> tuple[trueskill.Rating, trueskill.Rating]:
    """Two fresh players after the first won ``games`` games in a row."""
    a, b = ENV.create_rating(), ENV.create_rating()
    for _ in range(games):
        a, b = trueskill.rate_1vs1(a, b, env=ENV)
    return a, b


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
    # with bins 5 (sigma) ceil(8/30 * 5) = 2 games; checked against the package by hand
    ts = rate_trueskill([_order("1", "a", "b", 4, 0), _order("1", "b", "a", 0, 4)])
    a, b = _played(6)
    assert ts["a"].mu == pytest.approx(a.mu) and ts["b"].mu == pytest.approx(b.mu)
    two_a, _ = _played(2)
    assert ts["a"].sigma == pytest.approx(two_a.sigma)
    assert ts["a"].norm_high - ts["a"].norm == pytest.approx(1.96 * two_a.sigma)
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


def test_one_ordered_pass_no_shuffle() -> None:
    # a beats b, then b beats c, then c beats a (one plus sign each: one game at bins 20):
    # the benchmark plays the pairs once, in the order each first appears
    orders = [_order("1", "a", "b", 1, 0), _order("1", "b", "c", 1, 0), _order("1", "c", "a", 1, 0)]
    r = {m: ENV.create_rating() for m in "abc"}
    for w, lose in (("a", "b"), ("b", "c"), ("c", "a")):
        r[w], r[lose] = trueskill.rate_1vs1(r[w], r[lose], env=ENV)
    ts = rate_trueskill(orders)
    for m in "abc":
        assert ts[m].mu == pytest.approx(r[m].mu, abs=1e-9)
    # the order matters: the last winner ends on top, which an average of shuffles blurs
    assert max(ts, key=lambda m: ts[m].mu) == "c"


def test_a_loss_counts_games_as_the_benchmark_does_in_floating_point() -> None:
    # "b" (sorted second) wins by 3 plus signs: the fraction for "a" is 1 - (3/30/2 + 0.5),
    # which in floating point is just under 0.45, so ceil gives 3 games, not 2
    ts = rate_trueskill([_order("1", "a", "b", 0, 3)])
    b, a = _played(3)
    assert ts["b"].mu == pytest.approx(b.mu, abs=1e-9) and ts["a"].mu == pytest.approx(a.mu)


def test_rank_window_drops_orders_between_far_models() -> None:
    ladder = {f"m{i:02d}": 1000.0 + i for i in range(18)}  # m00 lowest ... m17 highest
    near = _order("1", "m00", "m16", 5, 0)  # 16 places apart: kept
    far = _order("1", "m00", "m17", 5, 0)  # 17 places apart: dropped
    ts = rate_trueskill([near, far], ladder, ladder=ladder)
    assert ts["m17"].mu == pytest.approx(1200.0) and ts["m16"].mu < 1200.0
    assert ts["m17"].sigma == pytest.approx(350 / 3)


def test_stored_comparisons_recomputed_from_the_judges_reply(tmp_path: Path) -> None:
    def stored(sid: str, order: str, reply: dict[str, object]) -> dict[str, object]:
        return {"scenario_id": sid, "order": order, "judge_response": reply,
                "pair": {"test_model": "t", "neighbor_model": "o", "iteration_index": "1"},
                "plus_for_test": 0, "plus_for_other": 0}  # fmt: skip

    reply: dict[str, object] = {
        "chain_of_thought_reasoning": "A0493+++++ is not counted here",
        "overall_eq": "A0493++ (clearly)",
        "warmth": "slightly A0488+",
        "insight": "A0493+ over A0488",  # both codes: the first-shown's
        "note": "+++",  # no code: nobody's
        "score": 3,  # not text
    }
    elo = {"t": {"elo": 1300.0}, "o": {"elo": 1100.0}, "__metadata__": {
        "global_pairwise_comparisons": [
            stored("1", "A0493:test / A0488:other", reply),
            stored("1", "A0493:other / A0488:test", reply),
            stored("405", "A0493:test / A0488:other", reply),
        ]}}  # fmt: skip
    path = tmp_path / "elo.json"
    path.write_text(json.dumps(elo), encoding="utf-8")
    _, comps = read_board_elo(path)
    assert [(c.plus_test, c.plus_other) for c in comps] == [(3, 1), (1, 3), (1, 0)]


def test_the_canonical_sample_re_solved_as_the_benchmark_solves_it() -> None:
    root = os.environ.get("EMPATHOS_EQBENCH3_SAMPLE")
    folder = Path(root or "/nonexistent") / "canonical-sample"
    if not (folder / "elo_sample.json.gz").is_file():
        pytest.skip("EMPATHOS_EQBENCH3_SAMPLE (with canonical-sample/) not set")
    elo = str(folder / "elo_sample.json.gz")
    res = empathos("compare", "--pairwise", "--leaderboard-elo", elo, "--rating", "trueskill",
                   "--format", "json")  # fmt: skip
    assert res.exit_code == 0, res.stderr
    got = {r["model"]: r for r in json.loads(res.stdout)["ratings"]}
    official = json.loads((folder / "official_solve_sample.json").read_text(encoding="utf-8"))
    assert set(got) == set(official)
    for model, want in official.items():
        for key in ("mu", "sigma", "norm"):
            assert got[model][key] == pytest.approx(want[key], abs=1e-6), (model, key)
    table = empathos("compare", "--pairwise", "--leaderboard-elo", elo, "--rating", "trueskill")
    assert table.exit_code == 0 and all(m in table.stdout for m in official)
    bt = empathos("compare", "--pairwise", "--leaderboard-elo", elo)
    assert bt.exit_code != 0 and "--rating trueskill" in str(bt.exception)
