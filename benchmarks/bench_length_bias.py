"""Exact expected update on the stop / continue logit of every registered estimator (and the
verl RFC's summed per-turn-normalised rewards) on the length-choice bench
(:mod:`empathos.rl.length_bench`), where both choices are worth the same (the true gradient is
0). Columns: the share s of the return that continuing pays one turn later; the update when the
lengths differ (var), when the stopping dialogue is padded to the same length (fixed), and
their difference (the part due to the length itself). Positive: toward stopping. Run:

    python benchmarks/bench_length_bias.py [--group 4] [--p 0.5]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "rl"))

from rl_reference import rfc_summed_turn_normalised

from empathos.rl.advantages import get_estimator
from empathos.rl.batch import AdvantageConfig
from empathos.rl.length_bench import LengthChoice, expected_update

NAMES = ["mapo_dialogue", "turn_only", "batch_only", "grpo", "reinforce_pp", "mapo_turnwise"]
SPLITS = (0.0, 0.5, 1.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--group", type=int, default=4, help="Rollouts per group (G)")
    parser.add_argument("--p", type=float, default=0.5, help="P(stop)")
    args = parser.parse_args()
    cfg = AdvantageConfig()
    print(f"G = {args.group}, P(stop) = {args.p}, Z in (0.5, 2.0) with equal odds, gamma 0.85")
    head = "".join(f"  s={s:.1f} var   fixed  length" for s in SPLITS)
    print(f"{'estimator':<16}{head}")
    for name in [*NAMES, "rfc (comparator)"]:
        fn = rfc_summed_turn_normalised if name.startswith("rfc") else get_estimator(name)
        cells = []
        for s in SPLITS:
            var, fixed = (
                expected_update(
                    fn,
                    args.group,
                    args.p,
                    LengthChoice((0.5, 2.0), (0.5, 0.5), s, cfg.gamma, fixed_length=pad),
                    cfg,
                )
                for pad in (False, True)
            )
            cells.append(f"  {var:+.4f} {fixed:+.4f} {var - fixed:+.4f}")
        print(f"{name:<16}{''.join(cells)}")


if __name__ == "__main__":
    main()
