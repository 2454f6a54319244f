"""The parts of the TRL integration that need no model: advantage placement for every
estimator of the registry, unscored turns, the rewards, the errors users meet first."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from transformers import AutoTokenizer
from trl_run import roles

from empathos.errors import ConfigError, InputError
from empathos.integrations.trl import MAPOTrainer, empa_outcome_reward, empa_reward
from empathos.integrations.trl import empa_rollout_func as rollout_func
from empathos.integrations.trl.placement import place_advantages
from empathos.integrations.trl.samplers import model_sampler, needs_lockstep, refuse_unsharded_fsdp
from empathos.integrations.trl.tokens import DialogueTokens, next_turn_ids
from empathos.llm.local import resolve_model_dir
from empathos.rl import AdvantageConfig, TurnBatch, compute_advantages, estimator_names
from empathos.sandbox import SandboxConfig
from empathos.scenarios import load_builtin

# 2 groups x 2 dialogues; dialogue 1's second turn is unscored; dialogue 3 has one turn
REWARDS = [[0.5, 1.0], [0.2, None], [-0.3, 0.7], [0.9]]
SPANS = [[[0, 3], [5, 8]], [[0, 2], [4, 9]], [[0, 4], [6, 7]], [[0, 5]]]


def _reference(name: str) -> np.ndarray:
    rewards = np.array([[0.5, 1.0], [0.2, np.nan], [-0.3, 0.7], [0.9, np.nan]])
    valid = ~np.isnan(rewards)
    mask = np.array([[1, 1], [1, 1], [1, 1], [1, 0]], dtype=bool)
    batch = TurnBatch(rewards=rewards, valid=valid, turn_mask=mask, uid=np.array([0, 0, 1, 1]))
    return compute_advantages(name, batch, AdvantageConfig()).advantages


@pytest.mark.parametrize("name", estimator_names())
def test_every_estimator_of_the_registry_lands_on_its_turns_tokens(name: str) -> None:
    placed = place_advantages(
        REWARDS, SPANS, num_generations=2, estimator=name, config=AdvantageConfig(),
        rows=slice(0, 4), seq_len=10,
    )  # fmt: skip
    expected = _reference(name)
    for i, spans in enumerate(SPANS):
        on = torch.zeros(10, dtype=torch.bool)
        for k, (start, end) in enumerate(spans):
            if REWARDS[i][k] is None:  # unscored: out of the loss, no advantage
                assert not placed.mask[i, start:end].any()
                assert torch.all(placed.advantages[i, start:end] == 0)
                continue
            got = placed.advantages[i, start:end].double()
            assert torch.allclose(got, torch.tensor(expected[i, k]), atol=1e-6)
            on[start:end] = True
        assert torch.equal(placed.mask[i], on)
        assert torch.all(placed.advantages[i, ~on] == 0)


def test_rows_that_are_not_whole_groups_are_refused() -> None:
    with pytest.raises(InputError, match="whole groups"):
        place_advantages(
            REWARDS[:3], SPANS[:3], num_generations=2, estimator="mapo",
            config=AdvantageConfig(), rows=slice(0, 3), seq_len=10,
        )  # fmt: skip


def test_rewards_leave_errored_and_unscored_dialogues_out() -> None:
    kwargs = {
        "turn_rewards": [[0.5, None, 0.25], [None], [1.0]],
        "outcome": [0.7, None, 0.4],
        "dialogue_error": [None, None, "the judge failed"],
    }
    assert empa_reward(["a"] * 3, ["c"] * 3, **kwargs) == [0.75, None, None]
    assert empa_outcome_reward(["a"] * 3, ["c"] * 3, **kwargs) == [0.7, None, None]
    with pytest.raises(ConfigError, match="empa_rollout_func"):
        empa_reward(["a"], ["c"])


def test_next_turn_tokens_close_the_reply_and_open_the_next() -> None:
    base, _, _ = resolve_model_dir(None, None, "policy")
    tok = AutoTokenizer.from_pretrained(base)
    end = int(tok.convert_tokens_to_ids("<|im_end|>"))
    closed = next_turn_ids(tok, "I feel lonely.", end)
    cut = next_turn_ids(tok, "I feel lonely.", None)
    assert cut[0] == end and cut[1:] == closed  # a cut reply gets the template's end token
    text = tok.decode(closed)
    assert "I feel lonely." in text and text.rstrip().endswith("assistant")
    d = DialogueTokens([1, 2])
    d.add_reply([7, end], [-0.5, -0.1])
    d.add_context(closed)
    assert d.spans == [(0, 2)] and d.env_mask == [1, 1] + [0] * len(closed)
    assert d.context == [1, 2, 7, end, *closed] and math.isclose(sum(d.logprobs), -0.6)


def test_bad_configuration_fails_before_training() -> None:
    scenarios = load_builtin().scenarios[:1]
    with pytest.raises(ConfigError, match="director"):
        rollout_func(scenarios, roles(), SandboxConfig(director="model"))
    rollout = rollout_func(scenarios, roles(), SandboxConfig(director="rules"))
    with pytest.raises(ConfigError, match="scenario id"):
        rollout._scenario("no-such-scenario")
    with pytest.raises(ConfigError, match="unknown estimator 'nope'"):
        MAPOTrainer(None, estimator="nope", rollout_func=rollout)
    with pytest.raises(ConfigError, match="rollout_func"):
        MAPOTrainer(None)


def _trainer(processes: int, **kw: object) -> SimpleNamespace:
    accelerator = SimpleNamespace(num_processes=processes, distributed_type="NO")
    return SimpleNamespace(accelerator=accelerator, **kw)


def test_fillers_only_where_the_engine_needs_lockstep() -> None:
    server = {"use_vllm": True, "vllm_mode": "server"}
    assert needs_lockstep(_trainer(2, **server))
    assert not needs_lockstep(_trainer(1, **server))
    assert not needs_lockstep(_trainer(2, use_vllm=False))  # the model's own generate
    colocate = {"use_vllm": True, "vllm_mode": "colocate"}
    assert not needs_lockstep(_trainer(2, vllm_tensor_parallel_size=1, **colocate))
    assert needs_lockstep(_trainer(4, vllm_tensor_parallel_size=2, **colocate))


def test_fsdp_without_vllm_is_refused_in_one_line() -> None:
    from accelerate.utils import DistributedType

    trainer = _trainer(2, use_vllm=False)
    trainer.accelerator.distributed_type = DistributedType.FSDP
    with pytest.raises(ConfigError, match="use_vllm") as err:
        model_sampler(trainer)
    assert "\n" not in str(err.value) and "summon_full_params" in str(err.value)
    trainer.use_vllm = True
    refuse_unsharded_fsdp(trainer)  # vLLM generates outside the sharded model: allowed
