"""verl's V1 advantage step on real rollouts of the empathos agent loop, and one PPO step on a
CPU (verl env).

The numbers are checked against :mod:`empathos.rl` computed from what the agent loop did not
write: each reply's tokens as verl's server generated them, each turn's reward from the same
replies played through EmpathyEnv, the in-reward KL from :mod:`empathos.rl.kl`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch

pytest.importorskip("verl", reason="verl is not installed (the empathos[verl] environment)")

from v1_path import advantage_batch, data_metrics
from verl_setup import Dialogue, Rollouts, read_dialogues

from empathos.rl import AdvantageConfig, TurnBatch, compute_advantages
from empathos.rl.kl import kl_in_reward, token_kl, turn_kl_from_spans

pytestmark = pytest.mark.slow
BETA = 0.05


def _expected(
    dialogues: list[Dialogue], uids: list[str], length: int, kl: tuple[Any, Any] | None
) -> torch.Tensor:
    t = max(len(d.spans) for d in dialogues)
    rewards = torch.full((len(dialogues), t), math.nan, dtype=torch.float64)
    turn_mask = torch.zeros(rewards.shape, dtype=torch.bool)
    spans = torch.zeros((len(dialogues), t, 2), dtype=torch.int64)
    for b, d in enumerate(dialogues):
        for k, (reward, span) in enumerate(zip(d.rewards, d.spans, strict=True)):
            rewards[b, k], turn_mask[b, k], spans[b, k] = reward, True, torch.tensor(span)
    if kl is not None:
        turn_kl = turn_kl_from_spans(token_kl(kl[0], kl[1]), spans, turn_mask)
        rewards = kl_in_reward(rewards, turn_kl, coef=BETA)
    groups = torch.tensor([sorted(set(uids)).index(u) for u in uids])
    batch = TurnBatch(rewards, turn_mask & torch.isfinite(rewards), turn_mask, groups)
    result = compute_advantages("mapo_dialogue", batch, AdvantageConfig(gamma=0.85))
    out = torch.zeros((len(dialogues), length))
    for b, d in enumerate(dialogues):
        for k, (start, end) in enumerate(d.spans):
            if result.loss_mask[b, k]:
                out[b, start:end] = float(result.advantages[b, k])
    return out


@pytest.mark.parametrize("with_kl", [False, True], ids=["no-kl", "kl-in-reward"])
def test_verls_advantage_step_gives_empathos_rl_numbers_and_finite_metrics(
    rollouts: Rollouts, policy: Any, with_kl: bool
) -> None:
    dialogues = read_dialogues(rollouts, policy.tokenizer)
    uids = [str(k["uid"]) for k in rollouts.kwargs]
    length = max(len(o.response_ids) for o in rollouts.outputs)
    kl = None
    if with_kl:  # log-probs that differ on every token, unscored turns' tokens included
        gen = torch.Generator().manual_seed(7)
        old = torch.randn((len(uids), length), generator=gen) * 0.3 - 2.0
        kl = (old, old - torch.rand((len(uids), length), generator=gen))
    data = advantage_batch(rollouts.outputs, rollouts.kwargs, kl=None if kl is None
                           else (kl[0], kl[1], BETA))  # fmt: skip
    expected = _expected(dialogues, uids, length, kl)
    torch.testing.assert_close(data.batch["advantages"], expected, rtol=0, atol=1e-5)
    assert float(expected.abs().sum()) > 0
    metrics = data_metrics(rollouts.outputs, rollouts.kwargs, data)
    assert all(np.isfinite(float(v)) for v in metrics.values()), metrics
    totals = [o.reward_score for o in rollouts.outputs]
    assert metrics["critic/score/mean"] == pytest.approx(float(np.mean(totals)), abs=1e-5)
    if with_kl:
        assert metrics["critic/rewards/mean"] < metrics["critic/score/mean"], "KL was charged"


def _calls_by_rollout(rollouts: Rollouts, policy: Any) -> list[list[Any]]:
    return [d.calls for d in read_dialogues(rollouts, policy.tokenizer)]


def test_the_outputs_carry_every_field_verls_own_agent_loops_set(
    rollouts: Rollouts, policy: Any
) -> None:
    """Every ``AgentLoopOutput`` field set (as ``ToolAgentLoop`` sets each), the server's
    per-call fields carried through: the weights' version of the first call and of the last,
    any other key the server returned; the V1 worker's tags hold them as integers."""
    from verl.experimental.agent_loop.agent_loop import AgentLoopOutput

    spans = 0
    for output, calls, tag in zip(rollouts.outputs, _calls_by_rollout(rollouts, policy),
                                  rollouts.v1.batch.tags, strict=True):  # fmt: skip
        assert set(AgentLoopOutput.model_fields) <= output.model_fields_set
        extra = output.extra_fields
        first, last = calls[0].global_steps, calls[-1].global_steps
        assert (extra["global_steps"], extra["min_global_steps"], extra["max_global_steps"]) == (
            first, first, last)  # fmt: skip
        assert extra["num_cached_tokens"] == 0, "a key of the server's own is kept"
        assert extra["tool_rewards"] == [] and len(extra["turn_scores"]) == len(calls)
        assert output.metrics.num_preempted == 0, "summed over the calls, not 'unknown' (-1)"
        assert (tag["min_global_steps"], tag["max_global_steps"]) == (first, last)
        assert tag["global_steps"] == rollouts.v1.global_steps
        spans += last != first
    assert spans, "a dialogue ran across a weight update (the server moves its version)"


def test_one_v1_training_step_with_verls_own_per_step_code(
    rollouts: Rollouts, policy: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """verl's V1 worker stored the dialogues; ``PPOTrainer._compute_advantage`` and
    ``_compute_metrics`` run on them as in ``PPOTrainer.step`` (before this issue the metrics
    step raised a TypeError: ``min_global_steps`` was None), with the old log-probs (bypass
    mode) before and ``ppo_loss`` and an optimiser step with the example's actor settings
    between, as ``PPOTrainer._step_once`` orders them."""
    import copy

    from v1_step import local_transfer_queue, train_step

    v1 = rollouts.v1
    model = copy.deepcopy(policy.model).train()
    model.requires_grad_(True)
    before = model.lm_head.weight.detach().clone()
    with local_transfer_queue(v1.kv):
        metrics = train_step(rollouts.config, v1, model)
    stored = v1.kv.kv_batch_get(v1.batch.keys, "train", ["advantages"])
    length = max(len(o.response_ids) for o in rollouts.outputs)
    dialogues = read_dialogues(rollouts, policy.tokenizer)
    expected = _expected(dialogues, [str(k["uid"]) for k in rollouts.kwargs], length, None)
    advantages = stored["advantages"].to_padded_tensor(padding=0.0, output_size=expected.shape)
    torch.testing.assert_close(advantages, expected, rtol=0, atol=1e-5)
    on = torch.zeros(expected.shape, dtype=torch.bool)
    for i, o in enumerate(rollouts.outputs):
        on[i, : len(o.response_mask)] = torch.tensor(list(o.response_mask), dtype=torch.bool)
    for stat, value in (("mean", expected[on].mean()), ("max", expected[on].max()),
                        ("min", expected[on].min())):  # fmt: skip
        # verl's logged advantages are MAPO's, per token in the loss
        assert metrics[f"critic/advantages/{stat}"] == pytest.approx(float(value), abs=1e-5)
    spans = [d.calls[-1].global_steps - d.calls[0].global_steps + 1 for d in dialogues]
    assert metrics["training/off_policy/trajectory_spans/max"] == max(spans)
    assert metrics["training/off_policy/trajectory_spans/mean"] == pytest.approx(np.mean(spans))
    totals = [o.reward_score for o in rollouts.outputs]
    assert metrics["critic/score/mean"] == pytest.approx(float(np.mean(totals)), abs=1e-5)
    assert metrics["training/num_turns/mean"] == np.mean([o.num_turns for o in rollouts.outputs])
    finite = {k: float(v) for k, v in metrics.items() if isinstance(v, int | float | np.number)}
    assert all(math.isfinite(v) for v in finite.values()), finite
    assert metrics["actor/grad_norm"] > 0
    assert not torch.equal(before, model.lm_head.weight.detach()), "the step moved the policy"
    keys = (
        "critic/score/mean",
        "critic/advantages/max",
        "critic/advantages/min",
        "actor/pg_loss",
        "actor/grad_norm",
        "training/off_policy/trajectory_spans/max",
    )
    with capsys.disabled():
        print("\nV1 step:", {k: round(float(metrics[k]), 6) for k in keys})


def test_a_batch_whose_responses_share_one_length_takes_the_same_step(
    rollouts: Rollouts, policy: Any
) -> None:
    """A batch of one dialogue (every field one shape, as when all responses are one length):
    TransferQueue still hands it back as jagged tensors, and verl's advantage step, which
    asserts that, runs; the store imitated that wrongly before (a dense tensor), so the step
    failed on a run whose responses happened to share a length."""
    import copy
    import dataclasses

    from transfer_queue import KVBatchMeta
    from v1_step import local_transfer_queue, train_step

    v1 = rollouts.v1
    one = KVBatchMeta(keys=v1.batch.keys[:1], tags=v1.batch.tags[:1], partition_id="train")
    alone = dataclasses.replace(v1, kv=copy.deepcopy(v1.kv), batch=one)
    packed = alone.kv.kv_batch_get(one.keys, "train", ["response_mask", "responses"])
    assert packed["response_mask"].is_nested and packed["responses"].is_nested
    model = copy.deepcopy(policy.model).train()
    model.requires_grad_(True)
    with local_transfer_queue(alone.kv):
        metrics = train_step(rollouts.config, alone, model)
    stored = alone.kv.kv_batch_get(one.keys, "train", ["advantages"])["advantages"]
    assert stored.is_nested and stored.size(0) == 1
    assert len(stored[0]) == len(rollouts.outputs[0].response_ids)
    assert metrics["critic/score/mean"] == pytest.approx(rollouts.outputs[0].reward_score, abs=1e-5)
