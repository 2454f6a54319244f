"""The causal-LM trainer on the bundled SmolLM2-135M with LoRA, against scripted toy roles.

Slow (they load and train the real model on the CPU); they still run in CI."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from train_helpers import english, tiny_config, toy_roles

from empathos.errors import ConfigError
from empathos.llm import EndpointConfig, ModelClient, RetryConfig, ScriptedBackend, fault
from empathos.llm.local import LocalPolicy
from empathos.rl import AdvantageConfig, AdvantageResult, TurnBatch, register_estimator
from empathos.rl.loss import PPOLossConfig
from empathos.sandbox import Roles
from empathos.train import TrainerCallbacks, build_trainer, sandbox_config, toy
from empathos.train.checkpoint import resumed_config, rng_state
from empathos.train.policy import LoraSettings, load_trainable_policy, sequence_logprobs
from empathos.train.rollout import Job, TurnSample, collect
from empathos.train.update import Sample, UpdateSettings, policy_update, token_targets

pytestmark = pytest.mark.slow


@register_estimator("zero_for_tests")
def _zero(batch: TurnBatch, cfg: AdvantageConfig) -> AdvantageResult:
    """The control: every advantage 0 (the loss mask as mapo_dialogue's)."""
    from empathos.rl import compute_advantages

    res = compute_advantages("mapo_dialogue", batch, cfg)
    adv = res.advantages  # zeros of the batch's own array type, as every estimator returns
    zero = torch.zeros_like(adv) if isinstance(adv, torch.Tensor) else np.zeros_like(adv)
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
    trainer = build_trainer(tiny_config(out, **over), toy_roles(), scenarios[:6],
                            scenarios[6 : 6 + held_out])  # fmt: skip
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

    part = build_trainer(tiny_config(tmp_path / "part", **over), toy_roles(), scenarios[:6],
                         scenarios[6:7], callbacks=_stop_before(2))  # fmt: skip
    with pytest.raises(_Interrupted):  # the same run, killed after step 1's checkpoint
        part.run()
    # --resume with no config file and no flag but --out: the run's own config.yaml
    config = resumed_config(None, {"out": tmp_path / "part"})
    assert config == part.config
    resumed = build_trainer(config, toy_roles(), scenarios[:6], scenarios[6:7], resume=True)
    assert resumed.step == 1
    rows = resumed.run()
    skip = ("time/", "tokens_per_s")
    a = {k: v for k, v in full[2].items() if not any(s in k for s in skip)}
    b = {k: v for k, v in rows[0].items() if not any(s in k for s in skip)}
    assert a["step"] == 2 and "update/loss" in a and "eval/mean_turn_reward" in a
    assert a == b
    lines = (tmp_path / "part" / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(x)["step"] for x in lines] == [0, 1, 2]


def _rollouts(policy: LocalPolicy, tmp_path: Path, n: int = 2) -> list[TurnSample]:
    jobs = [Job(s, u, 0) for u, s in enumerate(english()[:n])]
    dialogues = asyncio.run(
        collect(policy, toy_roles(), sandbox_config(tiny_config(tmp_path)), jobs,
                max_new_tokens=5, temperature=1.0, top_p=1.0, generation_batch=8)
    )  # fmt: skip
    return [t for d in dialogues for t in d.turns]


def test_the_update_recomputes_old_logprobs_so_the_first_ratio_is_one(tmp_path: Path) -> None:
    # The log-probabilities recorded while generating can differ from the training forward
    # pass (bf16 on a GPU, another inference engine): here they are shifted by 0.5 nats, as
    # such an engine could. The first minibatch's ratio must still be 1 and nothing clipped.
    torch.manual_seed(0)
    policy = load_trainable_policy(None, lora=LoraSettings(r=4))
    turns = _rollouts(policy, tmp_path)
    skewed = [replace(t, logprobs=[x - 0.5 for x in t.logprobs]) for t in turns]
    samples = [Sample(t, 1.0 if i % 2 else -1.0, True) for i, t in enumerate(skewed)]
    params = [p for p in policy.model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=1e-3)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda _: 1.0)
    settings = UpdateSettings(epochs=1, minibatches=1, micro_batch=2, grad_clip=1.0,
                              loss=PPOLossConfig(), kl_in_loss=False)  # fmt: skip
    stats = policy_update(policy, optimizer, scheduler, samples, settings, torch.Generator())
    assert stats["clip_frac"] == 0.0
    assert abs(stats["approx_kl"]) < 1e-6 and stats["ratio_dev"] < 1e-5, stats


def _judge_that_fails_once() -> ModelClient:
    """The toy judge, failing its first call with a transient error (retried at once)."""
    calls: list[int] = []

    def judge(request: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise fault("transient", "one hiccup")
        return toy.judge_addresses_user(request)

    retry = RetryConfig(max_attempts=3, backoff_base_s=0.0, jitter_s=0.01)
    config = EndpointConfig(kind="scripted", model="judge", retry=retry)
    return ModelClient(ScriptedBackend(judge), config, "judge")


def _differing(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """The generators whose states differ between two :func:`rng_state` snapshots."""
    out = [] if torch.equal(a["torch"], b["torch"]) else ["torch"]
    if "cuda" in a and not all(
        torch.equal(x, y) for x, y in zip(a["cuda"], b["cuda"], strict=True)
    ):
        out.append("cuda")
    if any(not np.array_equal(x, y) for x, y in zip(a["numpy"], b["numpy"], strict=True)):
        out.append("numpy")
    if a["python"] != b["python"]:
        out.append("python")
    return out


def test_evaluation_leaves_every_generator_as_it_found_it(tmp_path: Path) -> None:
    roles = Roles(user=toy_roles().user, judge=_judge_that_fails_once())
    scenarios = english()
    trainer = build_trainer(tiny_config(tmp_path, **{"eval.rollouts_per_scenario": 2}), roles,
                            scenarios[:2], scenarios[2:3])  # fmt: skip
    torch.rand(3)  # somewhere in the middle of a run
    before = rng_state()
    row = trainer.evaluate()
    after = rng_state()
    assert row["eval/dialogues"] == 2 and row["eval/errors"] == 0  # the hiccup was retried
    assert _differing(before, after) == []  # torch (CPU and CUDA), numpy, Python


def test_a_lora_shape_mismatch_on_resume_is_one_line_naming_the_parameter(
    tmp_path: Path,
) -> None:
    scenarios = english()
    first = build_trainer(tiny_config(tmp_path, **{"policy.lora": {"r": 4, "alpha": 8}}),
                          toy_roles(), scenarios[:2], [])  # fmt: skip
    first.save_checkpoint()
    config = tiny_config(tmp_path, **{"policy.lora": {"r": 8, "alpha": 16}})
    with pytest.raises(ConfigError) as caught:
        build_trainer(config, toy_roles(), scenarios[:2], [], resume=True)
    line = caught.value.line()
    assert "\n" not in line and "--resume" in line
    assert "lora_A" in line and "(4, 576) there, shape (8, 576) here" in line, line
