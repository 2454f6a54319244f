"""empathos's estimators through verl's own registry and advantage step (verl env only)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

pytest.importorskip("verl", reason="verl is not installed (the empathos[verl] environment)")

from verl import DataProto
from verl.trainer.config import AlgoConfig
from verl.trainer.ppo import core_algos, ray_trainer

import empathos.integrations.verl  # noqa: F401  (registers)
from empathos.rl import AdvantageConfig, TurnBatch, compute_advantages

GAP = 4  # user tokens between assistant turns (masked)
# Rollouts of unequal length; uids: two groups of two and a singleton group.
TURNS = [[5, 3, 4], [2, 6], [4, 4, 4, 1], [3], [2, 2]]
UIDS = np.array(["g1", "g1", "g2", "g2", "solo"], dtype=object)


def _mask(length: int = 40) -> torch.Tensor:
    mask = torch.zeros((len(TURNS), length), dtype=torch.long)
    for b, lengths in enumerate(TURNS):
        pos = 0
        for n in lengths:
            mask[b, pos : pos + n] = 1
            pos += n + GAP
    return mask


def _scores(seed: int = 0) -> list[list[float]]:
    rng = np.random.default_rng(seed)
    scores = [[float(x) for x in rng.normal(size=len(t))] for t in TURNS]
    scores[2][1] = float("nan")  # an unscored turn
    return scores


def _expected(name: str, scores: list[list[float]], gamma: float) -> torch.Tensor:
    """empathos.rl on the same turns, spread over each turn's tokens by a plain loop."""
    t = max(len(x) for x in TURNS)
    rewards = torch.full((len(TURNS), t), float("nan"))
    turn_mask = torch.zeros((len(TURNS), t), dtype=torch.bool)
    for b, row in enumerate(scores):
        for k, value in enumerate(row):
            rewards[b, k] = value
            turn_mask[b, k] = True
    batch = TurnBatch(
        rewards=rewards,
        valid=turn_mask & torch.isfinite(rewards),
        turn_mask=turn_mask,
        uid=torch.tensor([0, 0, 1, 1, 2]),
    )
    result = compute_advantages(name, batch, AdvantageConfig(gamma=gamma))
    out = torch.zeros(_mask().shape)
    for b, lengths in enumerate(TURNS):
        pos = 0
        for k, n in enumerate(lengths):
            if result.loss_mask[b, k]:
                out[b, pos : pos + n] = result.advantages[b, k]
            pos += n + GAP
    return out


def _token_rewards(scores: list[list[float]]) -> torch.Tensor:
    mask = _mask()
    dense = torch.zeros(mask.shape)
    for b, lengths in enumerate(TURNS):
        pos = 0
        for k, n in enumerate(lengths):
            dense[b, pos + n - 1] = scores[b][k]
            pos += n + GAP
    return dense


@pytest.mark.parametrize(
    ("verl_name", "ours"),
    [
        ("mapo_dialogue", "mapo_dialogue"),
        ("mapo_turn_only", "turn_only"),
        ("mapo_batch_only", "batch_only"),
    ],
)
def test_registry_estimator_returns_what_empathos_rl_returns(verl_name: str, ours: str) -> None:
    fn = core_algos.get_adv_estimator_fn(verl_name)
    scores = _scores()
    adv, returns = fn(
        token_level_rewards=_token_rewards(scores),
        response_mask=_mask(),
        config=AlgoConfig(gamma=0.85),
        index=UIDS,
    )
    assert adv.shape == returns.shape == _mask().shape
    torch.testing.assert_close(adv, _expected(ours, scores, 0.85), rtol=0, atol=1e-6)
    assert float(adv[_mask() == 0].abs().sum()) == 0.0  # user tokens get nothing


def test_verl_gamma_of_one_means_unset_and_mapo_default_applies() -> None:
    fn = core_algos.get_adv_estimator_fn("mapo_dialogue")
    scores = _scores(1)
    adv, _ = fn(
        token_level_rewards=_token_rewards(scores),
        response_mask=_mask(),
        config=AlgoConfig(),
        index=UIDS,
    )
    torch.testing.assert_close(adv, _expected("mapo_dialogue", scores, 0.85), rtol=0, atol=1e-6)
    adv_g, _ = fn(
        token_level_rewards=_token_rewards(scores),
        response_mask=_mask(),
        config=AlgoConfig(gamma=0.5),
        index=UIDS,
    )
    torch.testing.assert_close(adv_g, _expected("mapo_dialogue", scores, 0.5), rtol=0, atol=1e-6)


def test_trainer_step_moves_turn_scores_onto_turn_ends_before_our_estimator() -> None:
    """verl's compute_advantage on a batch as its agent loop builds it: one scalar score on
    the last response token, the interaction's turn scores in non_tensor_batch."""
    scores = _scores(2)
    mask = _mask()
    scalar = torch.zeros(mask.shape)
    last = mask.shape[1] - 1 - torch.argmax(mask.flip(1), dim=1)
    scalar[torch.arange(len(TURNS)), last] = 7.0  # whatever verl's reward loop logged
    turn_scores = np.empty(len(TURNS), dtype=object)
    turn_scores[:] = scores
    data = DataProto.from_dict(
        tensors={
            "token_level_scores": scalar,
            "token_level_rewards": scalar.clone(),
            "response_mask": mask,
        },
        non_tensors={"uid": UIDS, "turn_scores": turn_scores},
    )
    out = ray_trainer.compute_advantage(
        data, adv_estimator="mapo_dialogue", config=AlgoConfig(gamma=0.85)
    )
    torch.testing.assert_close(
        out.batch["advantages"], _expected("mapo_dialogue", scores, 0.85), rtol=0, atol=1e-6
    )
    # verl's own estimators see its batch unchanged
    data2 = DataProto.from_dict(
        tensors={
            "token_level_scores": scalar,
            "token_level_rewards": scalar.clone(),
            "response_mask": mask,
        },
        non_tensors={"uid": UIDS, "turn_scores": turn_scores},
    )
    ray_trainer.compute_advantage(data2, adv_estimator="grpo", config=AlgoConfig())
    assert torch.equal(data2.batch["token_level_rewards"], scalar)
