"""A tiny generator of published-format result documents (invented content, own code).

It mimics the shape of the EMPA release's result files so the importer's quirks can be
tested without the (non-commercial) sample.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from empathos.epm import EPMConfig, half_space_distance, init_state, step
from empathos.rubric import EMPATHY_RUBRIC, action_vector

AXES = ("C", "A", "P")


def mdep_block(levels: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, level in levels.items():
        base = key.replace(".", "_")
        out[f"{base}_level"] = level
        out[f"{base}_evidence"] = "0" if level in (0, "0") else "you said it felt heavy"
        out[f"{base}_reasoning"] = "invented reasoning for a test"
    return out


def make_published(
    rows: list[dict[str, Any]],
    *,
    p0: tuple[int, int, int] = (-10, -12, -8),
    reason: str = "Reached max turns (45), timeout",
    model: str = "Custom-test/tiny",
) -> dict[str, Any]:
    """Rows: per turn, MDEP levels by key ("C.Prog", ...), or None for a failed judge call.

    The stored v_t of a row with missing or bad levels is zero, as in the release.
    """
    cfg = EPMConfig()
    state = init_state([float(x) for x in p0], cfg)
    vstar = [round(x, 4) for x in state.v_star0]
    traj: list[dict[str, Any]] = [
        {
            "turn": 0,
            "P_t": list(p0),
            "v_t": [0, 0, 0],
            "distance": float(half_space_distance(np.array(p0, dtype=float))),
            "in_zone": False,
            "epm": {
                "P_norm": round(state.r0, 2),
                "v_star_0": vstar,
                "E_total": 0.0,
                "projection": round(-state.r0, 2),
                "alignment": 0.0,
            },
        }
    ]
    history: list[dict[str, Any]] = []
    for t, row in enumerate(rows, start=1):
        try:
            v = action_vector(row or {}, EMPATHY_RUBRIC).tolist()
        except Exception:
            v = [0.0, 0.0, 0.0]
        state = step(state, v, cfg)
        last = state.last
        point: dict[str, Any] = {
            "turn": t,
            "P_t": [int(x) for x in last.P],
            "v_t": [int(x) for x in v],
            "distance": last.distance,
            "in_zone": last.in_zone,
            "epm": {
                "v_t_norm": round(float(np.linalg.norm(v)), 2),
                "alignment": round(last.alignment or 0.0, 3),
                "delta_E": round(last.delta_E or 0.0, 2),
                "E_total": round(last.E_total, 4),
                "P_norm": round(last.p_norm, 2),
                "projection": round(last.projection, 2),
            },
        }
        if row is not None:
            point["mdep_analysis"] = mdep_block(row)
        traj.append(point)
        history.append({"role": "actor", "content": f"user line {t}"})
        history.append(
            {"role": "test_model", "content": f"reply {t}", "director_guidance": "go on"}
        )
    r0 = state.r0
    return {
        "total_turns": len(rows),
        "termination_reason": reason,
        "script_id": "script_900",
        "test_model_name": model,
        "actor_model": "user-sim",
        "judger_model": "judge-sim",
        "director_model": "director-sim",
        "history": history,
        "epj": {
            "P_0_initial_deficit": list(p0),
            "P_final_position": [int(x) for x in state.last.P],
            "trajectory": traj,
            "K": 1,
            "iedr_details": {"filled_iedr": {"C.1": 1, "_detailed": {"C.1_level": 1}}},
            "epm_params": {
                "v_star_0": vstar,
                "epsilon_distance": round(0.1 * r0, 2),
                "epsilon_direction": round(0.1 * r0, 2),
                "epsilon_energy": round(r0, 2),
                "alpha": 0.1,
            },
            "epm_victory_analysis": None,
        },
        "status": "success",
    }


GOOD = {"C.Prog": 1, "C.Neg": 0, "A.Prog": 1, "A.Neg": 0, "P.Prog": 1, "P.Neg": 0}
BAD = {"C.Prog": 0, "C.Neg": -1, "A.Prog": 0, "A.Neg": -1, "P.Prog": 0, "P.Neg": -1}
