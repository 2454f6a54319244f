"""SAGE's emotion as MAPO's reward: the per-turn emotion change and the final emotion as
rewards, and MAPO (the registry's ``mapo_dialogue`` estimator, the PPO clip loss) learning a
scripted SAGE-style user's preference on the CPU in a few seconds.

The user (scripted, ours): SAGE's dynamics (emotion 40, each reply moves it by a change
clamped to -10..10, capped at 100; the dialogue stops at 100 or more, below 10, or after 10
turns); the change depends on the reply's strategy and the user's current band: at a low or
middling emotion it wants to be listened to, once it feels better it wants concrete advice."""

from __future__ import annotations

import numpy as np
import torch

from empathos.rl import AdvantageConfig, TurnBatch, compute_advantages
from empathos.rl.loss import PPOLossConfig, ppo_clip_loss
from empathos.rl.returns import discounted_returns
from empathos.rl.rewards import emotion_outcome_rewards, emotion_rewards
from empathos.sage.rules import emotion_band, ended, move_emotion

STRATEGIES = ("listen", "advise", "deflect")
BANDS = ("Emotion-F", "Emotion-C", "Emotion-B", "Emotion-A", "Emotion-S")
#: band -> change per strategy: the user's hidden preference.
PREFERENCE = {
    "Emotion-C": (8, -6, -10),
    "Emotion-B": (6, -4, -10),
    "Emotion-A": (-3, 10, -10),
}
MAX_TURNS = 10


def test_emotion_rewards_telescope_and_mark_invalid_turns() -> None:
    e = np.array([[40.0, 50.0, 45.0, 100.0], [40.0, 30.0, 20.0, 20.0]])
    valid = np.array([[True, True, True], [True, False, True]])
    r = emotion_rewards(e, valid)
    np.testing.assert_allclose(r[0], [0.1, -0.05, 0.55])
    assert np.isnan(r[1, 1]) and r[1, 0] == -0.1
    tensor = emotion_rewards(torch.tensor(e), torch.tensor(valid))
    assert isinstance(tensor, torch.Tensor) and torch.allclose(tensor[0], torch.tensor(r[0]))
    mask = np.array([[True, True, True], [True, True, False]])
    out = np.asarray(emotion_outcome_rewards(e, np.ones((2, 3), dtype=bool), mask), np.float64)
    np.testing.assert_allclose(out, np.array([[0.0, 0.0, 1.0], [0.0, 0.2, 0.0]]))


def _rollouts(
    logits: torch.Tensor, n: int, gen: torch.Generator
) -> tuple[np.ndarray, np.ndarray, torch.Tensor, torch.Tensor, np.ndarray]:
    """n dialogues with the scripted user: emotion (n, T + 1), turn mask, band and action
    indices (n, T) and the actions' log-probabilities under ``logits`` (band x strategy)."""
    emotion = np.zeros((n, MAX_TURNS + 1))
    mask = np.zeros((n, MAX_TURNS), dtype=bool)
    bands = torch.zeros((n, MAX_TURNS), dtype=torch.long)
    actions = torch.zeros((n, MAX_TURNS), dtype=torch.long)
    probs = torch.softmax(logits, dim=-1)
    for i in range(n):
        point = 40
        emotion[i, 0] = point
        for t in range(MAX_TURNS):
            band = emotion_band(point)
            a = int(torch.multinomial(probs[BANDS.index(band)], 1, generator=gen))
            point = move_emotion(point, PREFERENCE[band][a])
            emotion[i, t + 1], mask[i, t] = point, True
            bands[i, t], actions[i, t] = BANDS.index(band), a
            if ended("", point):
                emotion[i, t + 2 :] = point
                break
    return emotion, mask, bands, actions, np.asarray(emotion[:, -1])


def _train(reward: str, steps: int = 25, group: int = 12) -> tuple[float, float, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    logits = torch.zeros((len(BANDS), len(STRATEGIES)), requires_grad=True)
    opt = torch.optim.Adam([logits], lr=0.1)
    finals = []
    for _ in range(steps):
        emotion, mask, bands, actions, final = _rollouts(logits.detach(), group, gen)
        finals.append(float(final.mean()))
        if reward == "emotion":
            rewards = emotion_rewards(emotion, mask)
        else:
            rewards = emotion_outcome_rewards(emotion, mask, mask)
        batch = TurnBatch(rewards=np.nan_to_num(rewards) * mask, valid=mask, turn_mask=mask,
                          uid=np.zeros(group, dtype=np.int64))  # fmt: skip
        result = compute_advantages("mapo_dialogue", batch, AdvantageConfig(gamma=1.0))
        logp = torch.log_softmax(logits, dim=-1)[bands, actions]
        adv = torch.as_tensor(result.advantages, dtype=torch.float64)
        loss_mask = torch.as_tensor(result.loss_mask)
        loss, _ = ppo_clip_loss(logp.double(), logp.detach().double(), adv, loss_mask,
                                PPOLossConfig())  # fmt: skip
        opt.zero_grad()
        loss.backward()  # type: ignore[no-untyped-call]
        opt.step()
    return float(np.mean(finals[:3])), float(np.mean(finals[-3:])), logits.detach()


def test_mapo_learns_the_users_preference_from_the_per_turn_emotion() -> None:
    before, after, logits = _train("emotion")
    assert before < 60 and after > 90, (before, after)
    choice = logits.argmax(dim=-1)
    assert STRATEGIES[int(choice[BANDS.index("Emotion-B")])] == "listen"
    assert STRATEGIES[int(choice[BANDS.index("Emotion-A")])] == "advise"


def test_the_final_emotion_as_outcome_reward_teaches_it_too() -> None:
    before, after, _ = _train("emotion_outcome")
    assert after > before + 20, (before, after)


def test_the_turn_reward_telescopes_to_the_outcome_change() -> None:
    gen = torch.Generator().manual_seed(1)
    emotion, mask, *_ = _rollouts(torch.zeros((5, 3)), 8, gen)
    returns = discounted_returns(np.nan_to_num(emotion_rewards(emotion, mask)) * mask, 1.0)
    np.testing.assert_allclose(returns[:, 0], (emotion[:, -1] - 40) / 100, atol=1e-12)
