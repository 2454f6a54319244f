"""A SAGE copy of our own writing in the benchmark's layout (code with our own prompts,
profiles of our own), and a scripted simulator whose emotion moves are known per profile.

The simulator reads the profile's persona (``PERSONA <id>``) and the turn (the user turns
in the dialogue it is shown) from the prompt, answers the analyser with the scripted change
and the reply prompt with ``turn N of <id>`` (p4 says 拜拜 on its 3rd turn)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

SIMULATOR = '''
import json

emo_count = {"Emotion-S": 100, "Emotion-A": 70, "Emotion-B": 40, "Emotion-C": 10}
target_prompt = """GOAL: talk it through with the helper."""


def planning_reply(player_data):
    template = """ANALYSER for {{simulator_role}}
goal: {{target}}
scene: {{simulator_scene}}
emotion now: {{emotion}}
talk so far:
{{dialog_history}}
"""
    return template


def player_reply(player_data, planning):
    template = """ACTOR {{player_type}} in {{player_topic}}
goal: {{target}}
band: {{emotion}}
earlier: {{dialog_history}}
latest: {{new_history}}
felt: {{planning}}
"""
    mapping = {"user": "Visitor", "assistant": "Helper"}
    if not planning:
        prompt = template.replace("{{planning}}", "open up")
    else:
        prompt = template.replace(
            "{{planning}}", "FACTS: " + planning["TargetCompletion"] + " | INNER: "
            + planning["activity"] + planning["analyse"]
        )
    return prompt
'''
NPC = '''
def call_npc(player_history):
    role_system = """You are a kind companion (our own test prompt)."""
    return role_system
'''
#: Profile id -> the analyser's change at user turns 2, 3, ... (as the simulator writes it).
CHANGES: dict[str, list[str]] = {
    "p1": ["+10"] * 6,  # 50 ... 100 at turn 7: a success
    "p2": ["-10"] * 4,  # 30, 20, 10, 0 at turn 5: a failure
    "p3": ["+15", "10", "+10", "10", "+10", "2", "1", "1", "1"],  # 95 after 10 turns
    "p4": ["+5", "+5"],  # 50, then 拜拜 at turn 3
}
#: The hand count: final emotion and band per profile; the Sentient numbers.
FINAL = {"p1": (100, "Emotion-S"), "p2": (0, "Emotion-F"), "p3": (95, "Emotion-A"),
         "p4": (50, "Emotion-B")}  # fmt: skip
USER_TURNS = {"p1": 7, "p2": 5, "p3": 10, "p4": 3}
SCORE, SUCCESSES, FAILURES = 61.3, 1, 1  # mean 245 / 4 = 61.25, half up


def write_sage(root: Path) -> Path:
    """The copy: ``<root>/SAGE/`` with the code files and the profile file."""
    folder = root / "SAGE"
    (folder / "profile").mkdir(parents=True, exist_ok=True)
    (folder / "simulator_response.py").write_text(SIMULATOR, encoding="utf-8")
    (folder / "npc_response.py").write_text(NPC, encoding="utf-8")
    rows = [
        {"id": pid, "player": f"PERSONA {pid}", "scene": f"a rainy week for {pid}",
         "main_cha": "passive", "cha_group": ["shy"], "task": "be heard",
         "first_talk": f"hello from {pid}"}
        for pid in CHANGES
    ]  # fmt: skip
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    (folder / "profile" / "simulator_profile_withfirsttalk.jsonl").write_text(text, "utf-8")
    return root


def _who_and_turn(prompt: str) -> tuple[str, int]:
    found = re.search(r"PERSONA (p\d)", prompt)
    assert found is not None, prompt
    return found.group(1), prompt.count('"role": "Visitor"') + 1


def simulator(body: dict[str, Any]) -> str:
    """The scripted simulated user (both its calls)."""
    prompt = body["messages"][-1]["content"]
    pid, turn = _who_and_turn(prompt)
    if prompt.startswith("ANALYSER"):
        change = CHANGES[pid][turn - 2]
        return (
            "Content:\nit listens\nTargetCompletion:\npartly\nActivity:\ncalmer\n"
            f"Analyse:\nfine\nChange:\n{change}"
        )
    words = "好的，拜拜" if pid == "p4" and turn == 3 else f"turn {turn} of {pid}"
    return f"Thinking:\nhmm\nOrigin:\nx\nChange:\ny\nResponse:\n[{words}]"


def tested(body: dict[str, Any]) -> str:
    """The model under test: names the user turn it answers."""
    users = [m for m in body["messages"] if m["role"] == "user"]
    return f"reply {len(users)}"


def scripted(body: dict[str, Any]) -> str:
    """Both models on one server, told apart by the model id."""
    return simulator(body) if body["model"] == "sim" else tested(body)
