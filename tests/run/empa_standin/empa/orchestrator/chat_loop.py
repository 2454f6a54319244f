"""The stand-in's dialogue loop: synchronous, prints progress, returns a result document."""

from __future__ import annotations

import math
import threading
import time
from typing import Any

from empa.agents import KEYS, Actor, Director, Judger, TestModel
from empa.data.loader import load_config

_LOCK = threading.Lock()
_IN_FLIGHT = 0


def _norm(p: list[float]) -> float:
    return math.sqrt(sum(x * x for x in p))


def run_chat_loop(
    actor: Actor,
    director: Director,
    judger: Judger,
    test_model: TestModel,
    rubric: Any,
    script_id: str,
    *,
    max_turns: int = 45,
    K: int = 1,
    test_model_name: str = "unknown",
) -> dict[str, Any]:
    global _IN_FLIGHT
    with _LOCK:
        _IN_FLIGHT += 1
        print(f"[{script_id}] start; loops in flight: {_IN_FLIGHT}")
    try:
        return _loop(actor, director, judger, test_model, script_id, max_turns, K, test_model_name)
    finally:
        with _LOCK:
            _IN_FLIGHT -= 1


def _loop(
    actor: Actor,
    director: Director,
    judger: Judger,
    test_model: TestModel,
    script_id: str,
    max_turns: int,
    K: int,
    test_model_name: str,
) -> dict[str, Any]:
    config = load_config(script_id)
    p = [-10.0, -12.0, -8.0]
    r0 = _norm(p)
    trajectory: list[dict[str, Any]] = [
        {
            "turn": 0, "P_t": list(p), "v_t": [0, 0, 0], "distance": r0, "in_zone": False,
            "epm": {"P_norm": r0, "E_total": 0.0, "projection": -r0, "alignment": 0.0},
        }
    ]  # fmt: skip
    history: list[dict[str, Any]] = []
    energy = 0.0
    for turn in range(1, max_turns + 1):
        user = actor.speak(director.actor_prompt, history)
        history.append({"role": "actor", "content": user})
        guidance = director.guide(history)
        answer = test_model.reply(history)
        history.append({"role": "test_model", "content": answer, "director_guidance": guidance})
        print(f"[{script_id}] turn {turn}: director said {guidance}")
        time.sleep(0.02)
        if turn % K:
            continue
        levels = judger.rate(history)
        v = [levels["C.Prog"] + levels["C.Neg"], levels["A.Prog"] + levels["A.Neg"],
             levels["P.Prog"] + levels["P.Neg"]]  # fmt: skip
        before = _norm(p)
        p = [a + b for a, b in zip(p, v, strict=True)]
        delta = before - _norm(p)
        energy += delta
        trajectory.append(
            {
                "turn": turn, "P_t": list(p), "v_t": v, "distance": _norm(p),
                "in_zone": False,
                "epm": {"P_norm": _norm(p), "E_total": energy, "projection": -_norm(p),
                        "alignment": 0.5, "delta_E": delta},
                "mdep_analysis": {f"{k.replace('.', '_')}_level": levels[k] for k in KEYS},
            }
        )  # fmt: skip
        print(f"[{script_id}] turn {turn}: judged {levels}")
    print(f"[{script_id}] done after {max_turns} turns")
    return {
        "script_id": script_id,
        "test_model_name": test_model_name,
        "actor_model": actor.llm.name,
        "judger_model": judger.llm.name,
        "director_model": director.llm.name,
        "total_turns": max_turns,
        "termination_reason": f"Reached max turns ({max_turns}), timeout",
        "history": history,
        "scenario": config["scenario"],
        "epj": {
            "P_0_initial_deficit": trajectory[0]["P_t"],
            "P_final_position": p,
            "trajectory": trajectory,
            "K": K,
            "epm_params": {"alpha": 0.1},
        },
        "status": "success",
    }
