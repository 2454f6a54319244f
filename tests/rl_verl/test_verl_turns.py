"""The agent loop's turns on verl's own Continuous Token builder (``continuous_token.py``) with the
bundled ChatML tokenizer: a reply cut at ``max_reply_tokens`` is closed by the template's
end-of-turn token before the next user line, exactly as a finished reply is; the judge hears
``length`` from the server's stop reason; a failed dialogue leaves the estimator's batch; a
colocated reward model is refused at start-up. The rollout server is a scripted stand-in for
vLLM (verl's ``TokenOutput``, given token ids); the builder, the agent loop and the estimator
are the real ones."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Iterator
from typing import Any

import pytest
import torch

pytest.importorskip("verl", reason="verl is not installed (the empathos[verl] environment)")

from omegaconf import OmegaConf, open_dict
from verl.experimental.agent_loop.agent_loop import DictConfigWrap
from verl.utils.dataset.rl_dataset import RLHFDataset
from verl.workers.rollout.replica import TokenOutput
from verl_setup import ROLES, SANDBOX

from empathos.errors import ConfigError
from empathos.integrations.verl.agent_loop import EmpathyAgentLoop, finish_reason
from empathos.integrations.verl.layout import decode_turns
from empathos.rl import AdvantageConfig, TurnBatch, compute_advantages
from empathos.scenarios import load_builtin

pytestmark = pytest.mark.slow

REPLY = "I hear you and"


@pytest.fixture(autouse=True, scope="module")
def event_loop_of_this_module() -> Iterator[None]:
    """The event loop verl's ``AgentLoopBase`` takes (``asyncio.get_event_loop``), made and
    closed here: left open, it would be collected, unclosed, during a later test."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    yield
    loop.close()
    asyncio.set_event_loop(None)


class ScriptedServer:
    """verl's server-manager call (``generate``), answering every turn with ``reply`` ids
    and ``stop`` as its stop reason; it logs the prompts it was sent."""

    def __init__(self, reply: list[int], stop: str) -> None:
        self.reply, self.stop = reply, stop
        self.prompts: list[list[int]] = []

    async def generate(self, *, request_id: str, prompt_ids: list[int],
                       sampling_params: dict[str, Any], **_: Any) -> TokenOutput:  # fmt: skip
        del request_id
        self.prompts.append(list(prompt_ids))
        ids = self.reply[: int(sampling_params["max_tokens"])]
        return TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids), stop_reason=self.stop,
                           num_preempted=0, extra_fields={"global_steps": 1})  # fmt: skip


def _loop(config: Any, tokenizer: Any, server: Any, kind: str | None, **empathos: Any) -> Any:
    section = OmegaConf.to_container(config.empathos)
    assert isinstance(section, dict)
    section.update(empathos)
    return EmpathyAgentLoop(
        DictConfigWrap(config), server, tokenizer, None, RLHFDataset,
        DictConfigWrap(config.data), hf_model_type=kind, empathos=section,
    )  # fmt: skip


def _row(scenario_id: str, index: int) -> dict[str, Any]:
    scenario = next(s for s in load_builtin().scenarios if s.id == scenario_id)
    return {
        "raw_prompt": [{"role": "user", "content": scenario.persona.topic}],
        "extra_info": {"scenario_id": scenario_id, "index": index},
        "index": index,
        "global_steps": 1,
        "session_id": index,
    }


def _run(loop: Any, row: dict[str, Any]) -> Any:
    # on the event loop verl's AgentLoopBase took at construction, as its worker runs it
    return loop.loop.run_until_complete(loop.run({"temperature": 1.0, "logprobs": True}, **row))


@pytest.mark.parametrize("kind", [None, "qwen2"])  # verl's default builder, its ChatML one
def test_a_cut_reply_is_closed_as_a_finished_reply_is(
    trainer_config: Any, policy: Any, kind: str | None
) -> None:
    tok = policy.tokenizer
    end = int(tok.convert_tokens_to_ids("<|im_end|>"))
    reply = tok(REPLY, add_special_tokens=False)["input_ids"]
    row = _row("en-01-sourdough", 0)
    cut_server = ScriptedServer(reply, "length")  # the server says it was cut
    finished_server = ScriptedServer([*reply, end], "completed")
    cut = _run(_loop(trainer_config, tok, cut_server, kind, max_reply_tokens=len(reply)), row)
    done = _run(_loop(trainer_config, tok, finished_server, kind), row)
    assert len(cut_server.prompts) == len(finished_server.prompts) == 3
    assert cut_server.prompts == finished_server.prompts, (
        "every later turn is generated from the same context as after a finished reply"
    )
    # the same tokens, but for the last reply's own end token (the dialogue ends after it)
    assert cut.response_ids == done.response_ids[:-1] and done.response_ids[-1] == end
    text = tok.decode(cut.response_ids)
    assert f"{REPLY}<|im_end|>" in text and "and<|im_start|>" not in text
    turn_end = [i for i, t in enumerate(done.response_ids) if t == end and done.response_mask[i]]
    for i, (a, b) in enumerate(zip(cut.response_mask, done.response_mask[:-1], strict=True)):
        # the closing token is the policy's when it wrote it, masked when the loop added it
        # (turn 2 is unscored by the scripted judge: its tokens are masked in both)
        assert a == (0 if i in turn_end else b)


def test_the_judge_hears_length_from_the_servers_stop_reason() -> None:
    end, eos = {7}, 7
    assert finish_reason("length", [1, 2, 3], 10, end) == "length"  # SGLang, verl's client
    assert finish_reason("stop", [1, 2, 3], 3, end) == "stop"  # a stop string at the cap
    assert finish_reason("completed", [1, 2, eos], 3, end) == "stop"  # ended at the cap
    assert finish_reason("length", [1, 2, eos], 3, end) == "stop"
    assert finish_reason("completed", [1, 2, 3], 3, end) == "length"  # vLLM: no end token


def test_a_failed_dialogue_leaves_its_peers_advantages_as_if_it_were_absent(
    trainer_config: Any, policy: Any
) -> None:
    tok = policy.tokenizer
    reply = tok(REPLY, add_special_tokens=False)["input_ids"]
    server = ScriptedServer(reply, "length")
    roles = {
        "user": {"kind": "scripted", "handler": f"{ROLES}:user_down_after_turn_2"},
        "judge": {"kind": "scripted", "handler": f"{ROLES}:judge"},
    }
    ok = [
        _run(_loop(trainer_config, tok, server, None), _row("en-01-sourdough", i)) for i in (0, 1)
    ]
    bad = _run(_loop(trainer_config, tok, server, None, roles=roles), _row("en-01-sourdough", 2))
    info = bad.extra_fields["empathos"]
    assert info["failed"] and info["termination"] == "error"
    assert info["epmq"] is None, "empathos score leaves a dialogue that ended as error out"
    assert isinstance(info["final_distance"], float)
    assert bad.extra_fields["turn_scores"][0] is not None, "it had a scored turn"
    outputs = [*ok, bad]
    width = max(len(o.response_ids) for o in outputs)

    def padded(key: str, o: Any) -> list[float]:
        values = o.as_dict()["rm_scores"].tolist() if key == "rm" else list(o.response_mask)
        return values + [0] * (width - len(values))

    rm = torch.tensor([padded("rm", o) for o in outputs])
    mask = torch.tensor([padded("mask", o) for o in outputs])
    turns = decode_turns(rm, mask, ["g"] * 3)
    assert turns.failed.tolist() == [False, False, True]
    assert not mask[2].any() and not turns.batch.turn_mask[2].any()
    alone = decode_turns(rm[:2], mask[:2], ["g"] * 2).batch
    cfg = AdvantageConfig()
    with_failed = compute_advantages("mapo", turns.batch, cfg).advantages
    without = compute_advantages("mapo", alone, cfg).advantages
    assert torch.equal(with_failed[:2, : without.shape[1]], without)
    assert isinstance(alone, TurnBatch) and bool(without.abs().sum() > 0)


def test_a_colocated_reward_model_is_refused_at_start_up(trainer_config: Any, policy: Any) -> None:
    config = copy.deepcopy(trainer_config)  # the session's config stays as it was
    with open_dict(config):
        config.reward.reward_model.enable = True
        config.reward.reward_model.enable_resource_pool = False
    with pytest.raises(ConfigError, match=r"reward\.reward_model\.enable"):
        _loop(config, policy.tokenizer, ScriptedServer([1], "length"), None)
    assert SANDBOX["max_turns"] == 3
