"""One EMPA, every door (main environment): the scenario, the scripted roles and the fixed
policy through the gym environment, TRL's rollout_func and the Inspect task give the turns,
per-turn rewards, final distance, termination and EPM-Q of ``empathos run`` (the reference),
each read back from that door's own output. verl's door: test_conformance_verl.py (verl
environment); verifiers': test_conformance_verifiers.py (verifiers environment)."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conformance_roles import UNSCORED_TURN, policy_reply
from every_door import (
    CASE,
    SANDBOX,
    SANDBOX_ROLES,
    Outcome,
    assert_conforms,
    failed_judge_turns,
    record_final_distance,
    record_rewards,
    scripted,
    write_scenario,
)

from empathos.epm import EPMConfig
from empathos.llm.roles import RoleEndpoint, build_role_model
from empathos.records import DialogueRecord
from empathos.sandbox import EmpathyEnv, Roles, SandboxConfig
from empathos.scenarios import Scenario, load_scenarios
from empathos.scoring import score_records


def _scenario(tmp: Path) -> Scenario:
    loaded = load_scenarios(write_scenario(tmp / "scenarios"))
    assert not loaded.errors, [e.line() for e in loaded.errors]
    [scenario] = loaded.scenarios
    return scenario


def _roles() -> Roles:
    models = {r: build_role_model(RoleEndpoint.model_validate(scripted(r)), r)
              for r in SANDBOX_ROLES}  # fmt: skip
    return Roles(user=models["user"], judge=models["judge"], director=models["director"])


def _epmq(record: DialogueRecord) -> float | None:
    return score_records(record.model or "", [record], EPMConfig.preset("reference")).epmq


def test_the_reference_is_a_whole_dialogue_with_one_unscored_turn(ref: Outcome) -> None:
    """The run door's dialogue: every turn scored but UNSCORED_TURN, distinct rewards,
    EPM-Q in range."""
    turns = SANDBOX["max_turns"]
    assert len(ref.replies) == turns == len(ref.rewards)
    assert ref.replies == tuple(policy_reply(t) for t in range(1, turns + 1))
    assert ref.rewards[UNSCORED_TURN - 1] is None
    scored = [r for r in ref.rewards if r is not None]
    assert len(scored) == turns - 1 and all(math.isfinite(r) for r in scored)
    assert len(set(scored)) == len(scored), "turns the judge tells apart"
    assert ref.termination == "timeout" and ref.epmq is not None and 0 < ref.epmq < 200


def test_gym_door(ref: Outcome, tmp_path: Path) -> None:
    """EmpathyEnv: the rewards of step(), the distance of the last info's EPM packet, the
    termination of the last info, the EPM-Q of env.record()."""
    env = EmpathyEnv(_roles(), SandboxConfig(**SANDBOX))

    async def play() -> tuple[list[str], list[float | None], float | None, str]:
        observation = await env.reset(_scenario(tmp_path))
        replies: list[str] = []
        rewards: list[float | None] = []
        distance, ending = None, ""
        while not env.done:
            reply = policy_reply(sum(m.role == "user" for m in observation))
            observation, reward, done, info = await env.step(reply)
            replies.append(reply)
            rewards.append(reward if info.reward_valid else None)
            if info.reward_valid and info.packet is not None:
                distance = info.packet.distance
            if done and info.termination is not None:
                ending = info.termination.kind.value
        return replies, rewards, distance, ending

    replies, rewards, distance, ending = asyncio.run(play())
    got = Outcome(tuple(replies), tuple(rewards), distance, ending, _epmq(env.record()))
    assert failed_judge_turns(env.record()) == [UNSCORED_TURN]
    assert_conforms("gym", got, ref)


class _ScriptedEngine:
    """TRL's vLLM engine interface (``generate`` and ``max_completion_length``), answering with
    the fixed policy: the reply's turn is the number of policy replies in the prompt + 1."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.max_completion_length = 0

    def generate(self, prompts: list[list[int]], images: Any, num_generations: int) -> Any:
        del images, num_generations
        ids, logprobs = [], []
        for prompt in prompts:
            text = self.tokenizer.decode(prompt)
            reply = policy_reply(text.count("[p") + 1)
            row = self.tokenizer.encode(reply, add_special_tokens=False)
            row = [*row, self.tokenizer.eos_token_id][: self.max_completion_length]
            ids.append(row)
            logprobs.append([[0.0]] * len(row))
        return None, ids, logprobs, None


def test_trl_door(ref: Outcome, tmp_path: Path) -> None:
    """TRL's rollout_func, on a trainer that uses vLLM (its engine the fixed policy): the
    batch's turn_rewards, termination and dialogue_record (final distance, EPM-Q), the replies
    decoded from completion_ids at turn_spans."""
    pytest.importorskip("trl", reason="TRL is not installed (the empathos[trl] extra)")
    from transformers import AutoTokenizer

    from empathos.integrations.trl import empa_rollout_func
    from empathos.llm.local import resolve_model_dir

    tokenizer = AutoTokenizer.from_pretrained(resolve_model_dir(None, None, "policy")[0])
    trainer = SimpleNamespace(
        state=SimpleNamespace(global_step=0),
        accelerator=SimpleNamespace(process_index=0, num_processes=1),
        model=SimpleNamespace(training=True, name_or_path="policy"),
        max_completion_length=2048,
        processing_class=tokenizer,
        use_vllm=True,
        vllm_generation=_ScriptedEngine(tokenizer),
    )
    rollout = empa_rollout_func([_scenario(tmp_path)], _roles(), SandboxConfig(**SANDBOX),
                                max_reply_tokens=64)  # fmt: skip
    batch = rollout([CASE], trainer)
    [ids], [spans] = batch["completion_ids"], batch["turn_spans"]
    [record] = batch["dialogue_record"]
    replies = tuple(tokenizer.decode(ids[a:b], skip_special_tokens=True).strip() for a, b in spans)
    got = Outcome(replies, tuple(batch["turn_rewards"][0]), record_final_distance(record),
                  batch["termination"][0], _epmq(record))  # fmt: skip
    assert failed_judge_turns(record) == [UNSCORED_TURN]
    assert_conforms("TRL", got, ref)


def test_inspect_door(ref: Outcome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Inspect task, every role an ``openai-api`` model on a loopback server: the sample's
    score (EPM-Q), its metadata (termination, final distance), the record in its store (the
    replies and per-turn rewards)."""
    pytest.importorskip("inspect_ai", reason="needs the inspect extra")
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model
    from role_server import MODEL, RoleServer

    from empathos.integrations.inspect.transcript import RECORD_KEY

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "inspect-data"))
    scenarios = write_scenario(tmp_path / "scenarios")
    with RoleServer() as server:
        for name in ("policy", *SANDBOX_ROLES):
            monkeypatch.setenv(f"{name.upper()}_BASE_URL", server.url(name))
            monkeypatch.setenv(f"{name.upper()}_API_KEY", "unused")
        # the judge's failing call: one HTTP attempt per Inspect attempt, one Inspect retry
        judge = get_model(f"openai-api/judge/{MODEL}", memoize=False, max_retries=0)
        roles: dict[str, Any] = {r: f"openai-api/{r}/{MODEL}" for r in ("user", "director")}
        [log] = inspect_eval(
            "empathos/empa",
            model=f"openai-api/policy/{MODEL}",
            model_roles={**roles, "judge": judge},
            max_retries=1,
            task_args={"scenarios": str(scenarios), "cases": CASE, **SANDBOX},
            log_dir=str(tmp_path / "logs"),
            display="none",
        )
    assert log.status == "success", log.error
    [sample] = log.samples or []
    score = next(iter((sample.scores or {}).values()))
    record = DialogueRecord.model_validate(sample.store[RECORD_KEY])
    meta = score.metadata or {}
    got = Outcome(tuple(t.assistant for t in record.turns), record_rewards(record),
                  meta["final_distance"], meta["termination"], float(score.value))  # fmt: skip
    assert_conforms("Inspect", got, ref)
    # the unscored turn is the judge's failed call (HTTP 503 after Inspect's retry), as in run
    assert failed_judge_turns(record) == [UNSCORED_TURN], record.evaluations
