"""Benchmark: score 10,000 synthetic 45-turn dialogues; print dialogues/second vs 5,000/s.

Run: ``python benchmarks/bench_score.py [--n 10000] [--turns 45]``. Pinned to one thread.
Two figures side by side: the array core alone (EPM-Q of a padded batch) and the whole path
from in-memory records (record -> arrays -> indices -> leaderboard row).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from empathos.epm import (  # noqa: E402
    EPMConfig,
    EPMPoint,
    Termination,
    TerminationKind,
    dialogue_indices,
    init_dynamics,
    step_batch,
)
from empathos.records import DialogueRecord, Evaluation, IndicatorRating, InitialDeficit  # noqa: E402
from empathos.rubric import EMPATHY_RUBRIC, action_vectors  # noqa: E402
from empathos.scoring import records_to_batch, score_records  # noqa: E402

TARGET = 5000.0


def synth_records(n: int, turns: int, seed: int = 0) -> list[DialogueRecord]:
    """n dialogues of `turns` evaluations with random levels (built without validation)."""
    rng = np.random.default_rng(seed)
    cfg = EPMConfig()
    keys = [i.key for i in EMPATHY_RUBRIC.mdep]
    levels = np.stack([rng.choice(i.levels, size=(n, turns)) for i in EMPATHY_RUBRIC.mdep], -1)
    v = action_vectors(levels, EMPATHY_RUBRIC)
    P = -rng.integers(5, 25, size=(n, 3)).astype(float)
    r0, vstar = init_dynamics(P)
    E = np.zeros(n)
    steps = []
    for t in range(turns):
        res = step_batch(P, E, v[:, t], vstar, cfg)
        steps.append(res)
        P, E = res.P, res.E_total
    # Ratings are immutable in practice: one object per level keeps the build fast.
    shared = {lv: IndicatorRating.model_construct(level=lv) for lv in range(-2, 3)}
    recs = []
    for i in range(n):
        p0 = tuple(steps[0].P[i] - v[i, 0])
        init = EPMPoint.model_construct(
            turn=0, P=p0, v=(0.0, 0.0, 0.0), delta_E=0.0, E_total=0.0, alignment=0.0,
            projection=-float(r0[i]), p_norm=float(r0[i]), distance=0.0, in_zone=False, scored=True,
        )  # fmt: skip
        evals = []
        for t, s in enumerate(steps):
            pt = EPMPoint.model_construct(
                turn=t + 1, P=tuple(s.P[i]), v=tuple(v[i, t]), delta_E=float(s.delta_E[i]),
                E_total=float(s.E_total[i]), alignment=float(s.alignment[i]),
                projection=float(s.projection[i]), p_norm=float(s.p_norm[i]),
                distance=float(s.distance[i]), in_zone=bool(s.in_zone[i]), scored=True,
            )  # fmt: skip
            ratings = {k: shared[int(levels[i, t, m])] for m, k in enumerate(keys)}
            evals.append(Evaluation.model_construct(turn=t + 1, scored=True, ratings=ratings,
                                                    state=pt, flags=[]))  # fmt: skip
        recs.append(
            DialogueRecord.model_construct(
                scenario_id=f"s{i}",
                model="synthetic",
                rubric=EMPATHY_RUBRIC,
                epm_config=cfg,
                iedr=InitialDeficit.model_construct(ratings={}, P0=p0),
                initial_state=init,
                evaluations=evals,
                total_turns=turns,
                n_unscored=0,
                success=False,
                termination=Termination(kind=TerminationKind.TIMEOUT, turn=turns),
            )
        )
    return recs


def _best_of(fn: object, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--turns", type=int, default=45)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    t0 = time.perf_counter()
    recs = synth_records(args.n, args.turns)
    print(f"built {args.n} synthetic {args.turns}-turn records in {time.perf_counter() - t0:.1f} s")
    cfg = EPMConfig()
    batch = records_to_batch(recs)
    core = _best_of(lambda: dialogue_indices(batch, cfg), args.repeats)
    full = _best_of(lambda: score_records("synthetic", recs, cfg), args.repeats)
    print(f"{'path':<34}{'seconds':>10}{'dialogues/s':>14}{'target':>10}{'x target':>10}")
    for name, sec in (("EPM-Q core (padded arrays)", core), ("records -> leaderboard row", full)):
        rate = args.n / sec
        print(f"{name:<34}{sec:>10.3f}{rate:>14,.0f}{TARGET:>10,.0f}{rate / TARGET:>10.1f}")


if __name__ == "__main__":
    main()
