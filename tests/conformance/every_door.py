"""What every door's conformance test shares: the scenario (one case in the published EMPA
layout, invented here), the sandbox settings, the scripted roles (conformance_roles.py), the
numbers compared (:class:`Outcome`) and the reference they are compared with: the ``empathos
run`` door's record, scored by ``empathos score`` (:func:`reference`). Every environment has
empathos installed, so each computes the same reference and checks its own doors against it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from conformance_roles import JUDGE_DOWN, UNSCORED_TURN

from empathos.records import DialogueRecord, load_records

HERE = Path(__file__).resolve().parent
ROLES_FILE = HERE / "conformance_roles.py"
CASE = "script_901"
# Five turns: the judge's failed call at turn 2 (conformance_roles.UNSCORED_TURN) leaves 1/5
# unscored, within the default unscored_share_limit (20%) and judge_failures_limit (3).
SANDBOX: dict[str, Any] = {"max_turns": 5, "min_turns": 5, "eval_every": 1, "director": "model"}
SANDBOX_ROLES = ("user", "judge", "director")

# An invented persona card and story in the published layout (cases/script_NNN.md,
# character_stories.json): our own text, not the release's.
CARD = """<character_info>
姓名：林晓
性别：女
年龄：29
社交性格：安静，慢热
内核性格：认真，容易自责
</character_info>

<empathy_threshold>
共情阈值【中】
</empathy_threshold>

<psychological_profile>
想要找人倾诉的想法与内容：搬家后养了三年的绿萝枯死了。
倾诉中想要获得的共情点：被理解，而不是被说教。
人物共情阈值：不喜欢空泛的安慰。
当下共情需求优先级：
情感共情：【高】
认知共情：【中】
动机共情：【低】

# 聊天话题
我养了三年的绿萝昨天彻底枯了，我有点难受。
</psychological_profile>

<experience>
童年经历：在外婆家长大，外婆爱种花。
现在的情况：刚换了城市工作。
</experience>

<scenario>
故事的起因：搬家时绿萝在车里闷了一整天。
</scenario>
"""
STAGES = ("搬家那天很匆忙。", "到了新家才发现叶子发黄。", "想起外婆的花园。", "决定再养一盆。")
STORIES = [
    {
        "剧本编号": CASE,
        "故事的经过": {
            f"阶段{i}": {"标题": f"第{i}段", "内容": text} for i, text in enumerate(STAGES, start=1)
        },
        "故事的结果": "她开始接受变化。",
        "故事的插曲": "邻居送来一根插枝。",
    }
]


def write_scenario(root: Path) -> Path:
    """The one-case published layout under ``root``; returns ``root``."""
    (root / "cases").mkdir(parents=True, exist_ok=True)
    (root / "cases" / f"{CASE}.md").write_text(CARD, encoding="utf-8")
    stories = json.dumps(STORIES, ensure_ascii=False, indent=1)
    (root / "character_stories.json").write_text(stories, encoding="utf-8")
    return root


def scripted(role: str) -> dict[str, Any]:
    """A role's endpoint: the handler of conformance_roles.py, one attempt."""
    return {"kind": "scripted", "handler": f"{ROLES_FILE}:{role}", "retry": {"max_attempts": 1}}


@dataclass(frozen=True)
class Outcome:
    """The numbers every door must agree on."""

    replies: tuple[str, ...]  # the policy's turns as the door played them
    rewards: tuple[float | None, ...]  # per turn: d(P_{t-1}) - d(P_t); None: unscored
    final_distance: float | None  # the distance of the last scored point (None: not carried)
    termination: str  # the ending's kind
    epmq: float | None  # None: the door's output does not carry it (see the table)


def record_rewards(record: DialogueRecord) -> tuple[float | None, ...]:
    """The per-turn rewards a record implies: the decrease of the distance at each scored
    evaluation (None for a turn without one)."""
    by_turn = {e.turn: e for e in record.evaluations}
    before = record.initial_state.distance
    out: list[float | None] = []
    for turn in record.turns:
        ev = by_turn.get(turn.index)
        if ev is None or not ev.scored:
            out.append(None)
            continue
        out.append(float(before - ev.state.distance))
        before = ev.state.distance
    return tuple(out)


def failed_judge_turns(record: DialogueRecord) -> list[int]:
    """The turns whose evaluation went unscored because the judge's call failed (the scripted
    judge's fault, conformance_roles.JUDGE_DOWN)."""
    return [e.turn for e in record.evaluations
            if not e.scored and JUDGE_DOWN in (e.unscored_reason or "")]  # fmt: skip


def record_final_distance(record: DialogueRecord) -> float:
    scored = [e for e in record.evaluations if e.scored]
    return scored[-1].state.distance if scored else record.initial_state.distance


def record_outcome(record: DialogueRecord, epmq: float | None) -> Outcome:
    """The numbers of a dialogue record (``epmq`` given by the caller's reading)."""
    return Outcome(
        replies=tuple(t.assistant for t in record.turns),
        rewards=record_rewards(record),
        final_distance=record_final_distance(record),
        termination=record.termination.kind.value,
        epmq=epmq,
    )


def empathos_cli(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EMPATHOS_")}
    return subprocess.run(
        [sys.executable, "-m", "empathos", *map(str, args)],
        cwd=cwd, env={**env, "COLUMNS": "200"}, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def score_epmq(records: Path, cwd: Path) -> float:
    """``empathos score --format json`` on a directory of records: its one row's EPM-Q."""
    done = empathos_cli("score", records, "--format", "json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)
    return float(row["epmq"])


def reference(tmp: Path) -> Outcome:
    """The ``empathos run`` door: the scenario, the scripted roles and the policy (as the
    model under test) through the CLI; the record read back, its EPM-Q by ``empathos score``."""
    scenarios = write_scenario(tmp / "scenarios")
    roles = {r: scripted(r) for r in SANDBOX_ROLES}
    roles["model_under_test"] = scripted("policy")
    config = {"roles": roles, "scenarios": str(scenarios), "cases": [CASE],
              "director_mode": SANDBOX["director"], "eval_every": SANDBOX["eval_every"],
              "max_turns": SANDBOX["max_turns"], "min_turns": SANDBOX["min_turns"]}  # fmt: skip
    path = tmp / "run.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    out = tmp / "run"
    done = empathos_cli("run", "--config", path, "--out", out, cwd=tmp)
    assert done.returncode == 0, done.stderr
    loaded_all, errors = load_records([out / "records"])
    assert not errors and len(loaded_all) == 1, (errors, loaded_all)
    loaded = loaded_all[0]
    assert failed_judge_turns(loaded.record) == [UNSCORED_TURN], loaded.record.evaluations
    return record_outcome(loaded.record, score_epmq(out / "records", tmp))


def assert_conforms(door: str, got: Outcome, ref: Outcome) -> None:
    """``got`` is ``ref``, field by field, exactly (a final distance or EPM-Q of None: the
    door's output does not carry it)."""
    optional = ("final_distance", "epmq")
    problems = [
        f"{name}: {door} gives {getattr(got, name)!r}, empathos run gives {getattr(ref, name)!r}"
        for name in ("replies", "rewards", "final_distance", "termination", "epmq")
        if getattr(got, name) != getattr(ref, name)
        and not (name in optional and getattr(got, name) is None)
    ]
    assert not problems, f"the {door} door differs from empathos run:\n" + "\n".join(problems)
