"""An EQ-Bench 3 copy of our own writing in the benchmark's layout (data/*.txt), and the
scripted models: the tested model answers ``reply N`` (N: the user messages so far; the
second turn's reply in the role-play format's sections, the others ignoring the format),
the judge fixed criterion scores. Scenario 409 opens its turn with ``####### 1``: the
benchmark's parser drops it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench_helpers import last_user

SCENARIOS = """######## 1   | Friend Issue | Our Role-play
####### Prompt1
A friend tells you they lost their job. (turn one)
####### Prompt2
Later they say they are fine, but they are not. (turn two)

######## 401 | Analysis | Our Analysis
####### Prompt1
# Act 1
A short exchange of our own to analyse.

######## 409 | Analysis | Opens its turn with a bare number: dropped, as the benchmark does
####### 1
# Act 1
Never asked.
"""
FILES = {
    "scenario_prompts.txt": SCENARIOS,
    "scenario_master_prompt.txt": "SCENE\n{scenario_prompt}\nAnswer in three parts.",
    "scenario_master_prompt_message_drafting.txt": "DRAFT\n{scenario_prompt}",
    "scenario_master_prompt_analysis.txt": "ANALYSE\n{scenario_prompt}",
    "debrief_prompt.txt": "Our debrief: step out of the role-play and reflect.",
    "rubric_scoring_prompt.txt": "Rate the role-play.\n{transcript}\nDEBRIEF:\n{debrief}\n"
    "FORMAT:\n{output_format}",
    "rubric_scoring_prompt_analysis.txt": "Rate the analysis.\n{transcript}\n{output_format}",
    "rubric_scoring_criteria.txt": "demonstrated_empathy\npragmatic_ei\nwarmth\n",
    "rubric_scoring_criteria_analysis.txt": "depth_of_insight\ntheory_of_mind\n",
}
ROLEPLAY_SCORES = {"demonstrated_empathy": 12, "pragmatic_ei": 16, "warmth": 5}
ANALYSIS_SCORES = {"depth_of_insight": 10, "theory_of_mind": "17 (strong)"}


def write_eqbench3(root: Path) -> Path:
    (root / "data").mkdir(parents=True)
    for name, text in FILES.items():
        (root / "data" / name).write_text(text, encoding="utf-8")
    return root


def scripted(body: dict[str, Any]) -> str:
    if body["model"] == "judge":
        prompt = last_user(body)
        scores = ANALYSIS_SCORES if prompt.startswith("Rate the analysis") else ROLEPLAY_SCORES
        return "Here are my ratings:\n" + json.dumps({"chain_of_thought_reasoning": "ok", **scores})
    turns = sum(m["role"] == "user" for m in body["messages"])
    return sectioned(f"reply {turns}") if turns == 2 else f"reply {turns}"


def sectioned(response: str, thinking: str = "my thoughts") -> str:
    """A reply in the role-play format's three headed sections (as the master prompt asks),
    with a closing note after ``--`` that the benchmark's parser leaves out."""
    return (
        f"# I\u2019m thinking & feeling\n{thinking}\n\n# They're thinking & feeling\n"
        f"their side\n\n# My response\n{response}\n--\nclosing note"
    )
