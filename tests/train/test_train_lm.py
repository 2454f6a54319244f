"""The causal-LM trainer on the bundled SmolLM2-135M with LoRA, against scripted toy roles.

Slow (they load and train the real model on the CPU); they still run in CI."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from train_helpers import english, tiny_config, toy_roles

from empathos.rl import AdvantageConfig, AdvantageResult, TurnBatch, register_estimator
from empathos.train import Trainer, TrainerCallbacks, sandbox_config
from empathos.train.policy import LoraSettings, load_trainable_policy, sequence_logprobs
from empathos.train.rollout import Job, collect
from empathos.train.update import Sample, token_targets

pytestmark = pytest.mark.slow


@register_estimator("zero_for_tests")
def _zero(batch: TurnBatch, cfg: AdvantageConfig) -> AdvantageResult:
    """The control: every advantage 0 (the loss mask as mapo_dialogue's)."""
    from empathos.rl import compute_advantages

    res = compute_advantages("mapo_dialogue", batch, cfg)
    zero = np.zeros(np.asarray(res.advantages).shape)
    return AdvantageResult(zero, res.loss_mask, res.returns, res.stats)


def test_stored_logprobs_match_a_fresh_forward_and_only_reply_tokens_get_loss(
    tmp_path: Path,
) -> None:
    torch.manual_seed(0)
    policy = load_trainable_policy(None, lora=LoraSettings(r=4))
    cfg = tiny_config(tmp_path)
    jobs = [Job(s, u, 0) for u, s in enumerate(english()[:2])]
    dialogues = asyncio.run(
        collect(
            policy,
            toy_roles(),
            sandbox_config(cfg),
            jobs,
            max_new_tokens=5,
            temperature=1.0,
            top_p=1.0,
            generation_batch=8,
        )
    )
    turns = [t for d in dialogues for t in d.turns]
    assert len(turns) == 4  # 2 dialogues x 2 turns, batched across dialogues
    pad = int(policy.tokenizer.eos_token_id)
    with torch.no_grad():
        logp, resp = sequence_logprobs(
            policy.model, [t.prompt_ids for t in turns], [t.token_ids for t in turns],
            pad_id=pad, device=policy.device,
        )  # fmt: skip
    for i, t in enumerate(turns):
        fresh = logp[i][resp[i]]
        assert fresh.shape[0] == len(t.token_ids)
        np.testing.assert_allclose(fresh.numpy(), np.asarray(t.logprobs), atol=2e-4)
    samples = [Sample(t, float(i + 1), i != 3) for i, t in enumerate(turns)]
    old, adv, mask = token_targets(samples, logp, resp)
    for i, t in enumerate(turns):
        start, end = len(t.prompt_ids), len(t.prompt_ids) + len(t.token_ids)
        expect = torch.zeros(logp.shape[1], dtype=torch.bool)
        if i != 3:  # a sample off the loss mask gets no token in the loss
            expect[start:end] = True
        assert torch.equal(mask[i].cpu(), expect)
        assert bool((adv[i][~expect] == 0).all()) and bool((adv[i][expect] == i + 1).all())
        np.testing.assert_allclose(old[i][start:end].numpy(), t.logprobs, atol=0)


def _train(out: Path, held_out: int = 3, **over: object) -> list[dict[str, object]]:
    scenarios = english()
    trainer = Trainer(tiny_config(out, **over), toy_roles(), scenarios[:6],
                      scenarios[6 : 6 + held_out])  # fmt: skip
    trainer.setup()
    return trainer.run()


# One-turn dialogues with 6-token replies: the judge rewards a reply that says "you" (about 1
# reply in 4-12 of the untrained model, so groups differ); a high LoRA learning rate and four
# minibatches per step (one epoch: the update is the dear part on a CPU) flip it in a few
# steps. The cosine schedule decays to 0 by the last step, so the steps are not too few.
MARGIN = 0.2  # mean per-turn reward: about 3 more rewarded replies in 24 (each earns ~1.6)
LEARN: dict[str, object] = {
    "steps": 6,
    "rollout.max_turns": 1,
    "rollout.min_turns": 1,
    "rollout.scenarios_per_step": 4,
    "rollout.rollouts_per_scenario": 4,
    "policy.lora": {"r": 4, "alpha": 8},
    "lr": 5e-3,
    "epochs": 1,
    "minibatches": 4,
    "micro_batch": 16,
    "eval.rollouts_per_scenario": 4,
}


@pytest.mark.timeout(3600)  # ~3-4 min of CPU in all; far more wall time on a loaded machine
def test_it_learns_the_rewarded_behaviour_and_the_zero_control_does_not(tmp_path: Path) -> None:
    rows = _train(tmp_path / "mapo", held_out=6, **LEARN)
    before, after = rows[0]["eval/mean_turn_reward"], rows[-1]["eval/mean_turn_reward"]
    assert isinstance(before, float) and isinstance(after, float)
    assert after > before + MARGIN, (before, after)
    control = _train(tmp_path / "zero", held_out=6, **{**LEARN, "estimator": "zero_for_tests"})
    c_before, c_after = control[0]["eval/mean_turn_reward"], control[-1]["eval/mean_turn_reward"]
    assert c_before == before  # same seed, same held-out rollouts
    assert isinstance(c_after, float) and c_after < c_before + MARGIN / 4, (c_before, c_after)


class _Interrupted(Exception):
    pass


def _stop_before(step: int) -> TrainerCallbacks:
    def on_step_start(n: int) -> None:
        if n == step:
            raise _Interrupted

    return TrainerCallbacks(on_step_start=on_step_start)


@pytest.mark.timeout(2700)  # three short runs; ~1.5 min of CPU, slow on a loaded machine
def test_resume_continues_with_identical_metrics(tmp_path: Path) -> None:
    over = {"steps": 2, "rollout.scenarios_per_step": 1, "rollout.rollouts_per_scenario": 2,
            "eval.every": 1000, "eval.rollouts_per_scenario": 2, "checkpoint_every": 1}  # fmt: skip
    full = _train(tmp_path / "full", held_out=1, **over)
    scenarios = english()

    def trainer(callbacks: TrainerCallbacks | None = None) -> Trainer:
        return Trainer(tiny_config(tmp_path / "part", **over), toy_roles(), scenarios[:6],
                       scenarios[6:7], callbacks=callbacks)  # fmt: skip

    part = trainer(_stop_before(2))  # the same run, killed after step 1's checkpoint
    part.setup()
    with pytest.raises(_Interrupted):
        part.run()
    resumed = trainer()
    resumed.setup(resume=True)
    assert resumed.step == 1
    rows = resumed.run()
    skip = ("time/", "tokens_per_s")
    a = {k: v for k, v in full[2].items() if not any(s in k for s in skip)}
    b = {k: v for k, v in rows[0].items() if not any(s in k for s in skip)}
    assert a["step"] == 2 and "update/loss" in a and "eval/mean_turn_reward" in a
    assert a == b
    lines = (tmp_path / "part" / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(x)["step"] for x in lines] == [0, 1, 2]
