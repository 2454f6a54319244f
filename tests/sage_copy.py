"""A SAGE copy of the tests' own writing, in SAGE's layout (the code files and the profile
file the readers of ``empathos.sage.copy`` take): for the tests that need a copy but not its
dialogues (the sandbox's and the trainer's SAGE rewards)."""

from __future__ import annotations

import json
from pathlib import Path

CODE = """
target_prompt = "AIM: feel heard"

def planning_reply(player_data):
    template = '''ANALYSE {{simulator_role}} / {{simulator_scene}} / {{target}} / {{emotion}} /
{{dialog_history}}'''

def player_reply(player_data, planning):
    template = "ACT {{target}} {{dialog_history}} {{new_history}} {{planning}}"
    mapping = {"user": "me", "assistant": "them"}
    prompt = template.replace("{{planning}}", "A: " + planning["analyse"])
"""


def write_sage_copy(root: Path) -> Path:
    """The copy at ``root``."""
    (root / "profile").mkdir(parents=True)
    (root / "simulator_response.py").write_text(CODE, encoding="utf-8")
    (root / "npc_response.py").write_text('role_system = "be kind"\n', encoding="utf-8")
    profile = {k: "x" for k in ("id", "player", "scene", "main_cha", "task", "first_talk")}
    (root / "profile" / "simulator_profile_withfirsttalk.jsonl").write_text(json.dumps(profile))
    return root
