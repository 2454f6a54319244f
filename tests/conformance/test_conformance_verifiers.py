"""One EMPA, every door (verifiers environment): the conformance scenario through verifiers'
own ``vf-eval`` (the environment package ``empathos-empa``, the fixed policy on a loopback
OpenAI-compatible server, the sandbox roles scripted in-process) gives the numbers of
``empathos run``, read back from the saved traces; the saved EPM-Q is the one ``empathos
score`` gives for the dialogue; the assistant never sees the card or the hidden story."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("verifiers", reason="verifiers is not installed (scripts/install-verifiers.sh)")

from every_door import (
    CARD,
    CASE,
    SANDBOX,
    SANDBOX_ROLES,
    STORIES,
    Outcome,
    assert_conforms,
    score_epmq,
    scripted,
    write_scenario,
)
from role_server import MODEL, RoleServer

from empathos.errors import ConfigError
from empathos.integrations.verifiers import EmpaEnv, EmpaEnvConfig, read_traces, trace_records
from empathos.records import write_record


def _toml(value: Any) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def eval_config(scenarios: Path) -> str:
    """The eval's environment as verifiers' TOML config (``vf-eval ... @ FILE``)."""
    lines = ["[env]", 'reward = "epmq"', "[env.taskset]", f"scenarios = {_toml(str(scenarios))}",
             f"cases = {_toml(CASE)}", "[env.sandbox]"]  # fmt: skip
    lines += [f"{k} = {_toml(v)}" for k, v in SANDBOX.items()]
    lines += ["[env.roles]", *(f"{r} = {_toml(scripted(r))}" for r in SANDBOX_ROLES)]
    return "\n".join(lines) + "\n"


def vf_eval(tmp: Path, *extra: str, policy: str = "policy") -> Path:
    """``vf-eval empathos-empa`` (the policy served on a loopback server); its run directory."""
    config = tmp / "empa.toml"
    config.write_text(eval_config(write_scenario(tmp / "scenarios")), encoding="utf-8")
    vf_eval = Path(sys.executable).with_name("vf-eval")
    with RoleServer() as server:
        done = subprocess.run(
            [str(vf_eval), "empathos-empa", "@", str(config), "--model", MODEL,
             "--client.base-url", server.url(policy), "--client.api-key-var", "EMPA_TEST_KEY",
             "--no-push", "--no-rich", "-o", str(tmp / "out"), "--run.name", "conformance",
             *extra],
            cwd=tmp, env={**os.environ, "EMPA_TEST_KEY": "unused"}, capture_output=True,
            text=True, timeout=600,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    return tmp / "out" / "conformance"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return vf_eval(tmp_path_factory.mktemp("vf"))


def _assistant_trace(run_dir: Path) -> dict[str, Any]:
    [trace] = list(read_traces(run_dir))
    assert trace["agent"]["name"] == "assistant" and trace["agent"]["trainable"]
    return trace


def _messages(trace: dict[str, Any]) -> list[dict[str, Any]]:
    return [n["message"] for n in trace["nodes"]]


def test_verifiers_door(ref: Outcome, run_dir: Path) -> None:
    """The saved trace: the replies on its message graph, the per-turn rewards of its info,
    its final_distance metric, its termination, its epmq reward."""
    trace = _assistant_trace(run_dir)
    info = trace["info"]["empathos"]
    replies = tuple(m["content"] for m in _messages(trace) if m["role"] == "assistant")
    got = Outcome(replies, tuple(info["turn_rewards"]), trace["metrics"]["final_distance"],
                  info["termination"], trace["rewards"]["epmq"]["score"])  # fmt: skip
    assert_conforms("verifiers", got, ref)
    assert info["turn_distances"][-1] == trace["metrics"]["final_distance"]
    assert trace["metrics"]["turns"] == len(ref.replies)
    assert trace["metrics"]["termination_" + ref.termination] == 1.0
    assert trace["metrics"]["success"] == float(ref.termination == "success")


def test_the_saved_epmq_is_what_empathos_score_gives(run_dir: Path, tmp_path: Path) -> None:
    [record] = trace_records(run_dir)
    write_record(record, tmp_path / "records" / "dialogue.json")
    saved = _assistant_trace(run_dir)["rewards"]["epmq"]["score"]
    assert score_epmq(tmp_path / "records", tmp_path) == saved


def test_the_assistant_sees_neither_the_card_nor_the_story(run_dir: Path) -> None:
    trace = _assistant_trace(run_dir)
    seen = "\n".join(str(m.get("content") or "") for m in _messages(trace))
    hidden = [s["内容"] for s in STORIES[0]["故事的经过"].values()]
    hidden += ["林晓", STORIES[0]["故事的结果"], STORIES[0]["故事的插曲"], "外婆"]
    assert [h for h in hidden if h in seen] == []
    assert trace["task"]["data"].get("prompt") is None
    assert "林晓" in json.dumps(trace["task"]["data"]["scenario"], ensure_ascii=False)
    assert CARD.splitlines()[0] not in seen
    roles = [m["role"] for m in _messages(trace)]
    assert roles[:2] == ["system", "user"] and roles.count("assistant") == SANDBOX["max_turns"]


def test_the_assistants_turn_limit_truncates_the_dialogue(ref: Outcome, tmp_path: Path) -> None:
    """``--env.assistant.max-turns 2``: verifiers' harness stops the assistant after two
    turns; the trace says ``truncated``, keeps those turns' rewards, and the record ends as
    an error with the reason (no EPM-Q: reward 0)."""
    trace = _assistant_trace(vf_eval(tmp_path, "--env.assistant.max-turns", "2"))
    info = trace["info"]["empathos"]
    assert info["termination"] == "truncated" and trace["metrics"]["termination_truncated"] == 1
    assert tuple(info["turn_rewards"]) == ref.rewards[:2]
    assert info["record"]["termination"]["kind"] == "error"
    assert "truncated: the assistant's harness stopped" in info["record"]["termination"]["reason"]
    assert trace["rewards"]["epmq"]["score"] == 0.0


def test_a_failed_model_call_ends_the_dialogue_as_an_error(tmp_path: Path) -> None:
    trace = _assistant_trace(vf_eval(tmp_path, policy="broken"))
    info = trace["info"]["empathos"]
    assert info["termination"] == "error" and info["turns"] == 0
    reason = info["record"]["termination"]["reason"]
    assert "the assistant's model call failed" in reason and "refuses every request" in reason
    assert trace["metrics"]["termination_error"] == 1 and trace["rewards"]["epmq"]["score"] == 0


def test_the_sandbox_roles_need_an_endpoint(tmp_path: Path) -> None:
    scenarios = write_scenario(tmp_path / "scenarios")
    config = EmpaEnvConfig(taskset={"id": "empathos-empa", "scenarios": str(scenarios)})
    with pytest.raises(ConfigError, match=r"env\.roles\.user.*sandbox-base-url"):
        EmpaEnv(config)
