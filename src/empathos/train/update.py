"""One policy update of the causal-LM trainer: advantages, token broadcast, PPO clip loss.

Each assistant turn is one training sample (its prompt exactly as the policy saw it, its reply
tokens exactly as sampled). The turn's advantage, from the registry estimator over the
(B, T) turn batch, is broadcast onto the reply's tokens only
(:func:`empathos.rl.tokens.broadcast_from_response_mask`): prompt tokens (system prompt, user
lines, earlier turns) never get loss. The loss is :func:`empathos.rl.loss.ppo_clip_loss`,
token-mean over each minibatch, accumulated over micro-batches.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import torch
from numpy.typing import NDArray
from torch.optim.lr_scheduler import LRScheduler

from empathos.llm.local import CausalLM, LocalPolicy
from empathos.rl.advantages import compute_advantages
from empathos.rl.batch import AdvantageConfig, AdvantageResult, TurnBatch
from empathos.rl.kl import kl_in_reward
from empathos.rl.loss import PPOLossConfig, ppo_clip_loss
from empathos.rl.tokens import broadcast_from_response_mask
from empathos.train.policy import adapter_disabled, sequence_logprobs
from empathos.train.rollout import Dialogue, TurnSample, turn_arrays

__all__ = [
    "Sample",
    "UpdateSettings",
    "advantages_for",
    "forward_logprobs",
    "policy_update",
    "reference_logprobs",
    "token_targets",
    "with_old_logprobs",
]


@dataclass(frozen=True)
class Sample:
    """A turn in the loss: its tokens, its advantage and its "old" log-probabilities (the
    policy's own forward pass before the update; None: not computed yet)."""

    turn: TurnSample
    advantage: float
    in_loss: bool
    old_logprobs: torch.Tensor | None = None


@dataclass(frozen=True)
class UpdateSettings:
    """Epochs, minibatches, micro-batch size and clipping of one update."""

    epochs: int
    minibatches: int
    micro_batch: int
    grad_clip: float
    loss: PPOLossConfig
    kl_in_loss: bool


def forward_logprobs(
    policy: LocalPolicy, model: CausalLM, samples: Sequence[TurnSample], micro_batch: int
) -> list[torch.Tensor]:
    """Per-token log-probabilities of each sample's reply under ``model`` (the policy's own
    model, or a reference with the policy's tokenizer), without gradient."""
    out: list[torch.Tensor] = []
    pad = int(policy.tokenizer.pad_token_id or policy.tokenizer.eos_token_id)
    for i in range(0, len(samples), micro_batch):
        chunk = samples[i : i + micro_batch]
        with torch.no_grad():
            logp, resp = sequence_logprobs(
                model,
                [s.prompt_ids for s in chunk],
                [s.token_ids for s in chunk],
                pad_id=pad,
                device=policy.device,
            )
        out.extend(logp[k][resp[k]].float().cpu() for k in range(len(chunk)))
    return out


def reference_logprobs(
    policy: LocalPolicy,
    reference: CausalLM | None,
    samples: Sequence[TurnSample],
    micro_batch: int,
) -> list[torch.Tensor]:
    """Per-token log-probabilities of each sample's reply under the reference policy:
    ``reference`` (a frozen copy), or the LoRA policy with its adapter switched off (None)."""
    if reference is not None:
        return forward_logprobs(policy, reference, samples, micro_batch)
    with adapter_disabled(policy.model) as base:
        return forward_logprobs(policy, base, samples, micro_batch)


def with_old_logprobs(
    policy: LocalPolicy, samples: Sequence[Sample], micro_batch: int
) -> list[Sample]:
    """``samples`` with their "old" log-probabilities recomputed by the policy's forward pass
    (in the mode the update runs in), where not already set. The log-probabilities recorded
    while generating can differ from the training forward pass (bf16 on a GPU, another
    inference engine), which would move the PPO ratio off 1 before any update."""
    missing = [s for s in samples if s.old_logprobs is None]
    fresh = iter(forward_logprobs(policy, policy.model, [s.turn for s in missing], micro_batch))
    return [s if s.old_logprobs is not None else replace(s, old_logprobs=next(fresh))
            for s in samples]  # fmt: skip


def advantages_for(
    dialogues: Sequence[Dialogue],
    estimator: str,
    config: AdvantageConfig,
    reward: str,
    turn_kl: np.ndarray | None = None,
    kl_coef: float = 0.0,
) -> tuple[AdvantageResult[NDArray[np.generic]], np.ndarray, np.ndarray]:
    """The estimator's result over the batch, the rewards used and the valid mask."""
    rewards, valid, mask, uid = turn_arrays(dialogues, reward)
    if turn_kl is not None:
        rewards = np.asarray(kl_in_reward(rewards, turn_kl, kl_coef), dtype=np.float64)
    batch = TurnBatch(rewards=rewards, valid=valid, turn_mask=mask, uid=uid)
    result = compute_advantages(estimator, batch, config)
    return result, rewards, valid


def token_targets(
    samples: Sequence[Sample], logp: torch.Tensor, resp: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Old log-probs (each sample's own, else the rollout's), token advantages and token loss
    mask (N, L) for packed rows.

    ``resp`` (N, L) is the response mask of :func:`empathos.train.policy.sequence_logprobs`:
    each row's reply is its one assistant run, so the sample's advantage goes to its reply
    tokens and nowhere else (prompt, earlier turns, user lines and padding get 0, off-mask)."""
    old = torch.zeros_like(logp)
    rows = [
        s.old_logprobs if s.old_logprobs is not None else torch.tensor(s.turn.logprobs)
        for s in samples
    ]
    old[resp] = torch.cat(rows).to(logp.device, logp.dtype)
    adv_rows = torch.tensor([[s.advantage] for s in samples], dtype=torch.float64)
    in_rows = torch.tensor([[s.in_loss] for s in samples], dtype=torch.bool)
    tok_adv, tok_mask = broadcast_from_response_mask(
        adv_rows.to(logp.device), in_rows.to(logp.device), resp
    )
    return old, tok_adv, tok_mask


def policy_update(
    policy: LocalPolicy,
    optimizer: torch.optim.Optimizer,
    scheduler: LRScheduler,
    samples: Sequence[Sample],
    settings: UpdateSettings,
    generator: torch.Generator,
    reference: CausalLM | None = None,
    on_minibatch: Callable[[], None] | None = None,
) -> dict[str, float]:
    """Epochs x minibatches of PPO over the samples in the loss; mean stats over minibatches.

    The "old" log-probabilities are the policy's own forward pass before the first step
    (:func:`with_old_logprobs`): the first minibatch's ratio is 1 (``ratio_dev``, the largest
    ``|log ratio|`` of a minibatch, is 0 up to float rounding)."""
    policy.model.train()
    train = with_old_logprobs(policy, [s for s in samples if s.in_loss], settings.micro_batch)
    if not train:
        return {}
    stats: dict[str, list[float]] = {}
    params = [p for p in policy.model.parameters() if p.requires_grad]
    for _ in range(settings.epochs):
        order = torch.randperm(len(train), generator=generator).tolist()
        n_mb = min(settings.minibatches, len(train))
        for chunk in np.array_split(np.asarray(order), n_mb):
            optimizer.zero_grad(set_to_none=True)
            row = _minibatch(policy, [train[int(k)] for k in chunk], settings, reference)
            row["grad_norm"] = float(torch.nn.utils.clip_grad_norm_(params, settings.grad_clip))
            optimizer.step()
            scheduler.step()
            if on_minibatch is not None:
                on_minibatch()
            for key, value in row.items():
                stats.setdefault(key, []).append(value)
    optimizer.zero_grad(set_to_none=True)
    return {k: float(np.mean(v)) for k, v in stats.items()}


def _minibatch(
    policy: LocalPolicy,
    mb: Sequence[Sample],
    settings: UpdateSettings,
    reference: CausalLM | None,
) -> dict[str, float]:
    """Accumulate one minibatch's gradient over micro-batches; its token-weighted stats."""
    pad = int(policy.tokenizer.pad_token_id or policy.tokenizer.eos_token_id)
    total = sum(len(s.turn.token_ids) for s in mb)
    out = {"loss": 0.0, "clip_frac": 0.0, "approx_kl": 0.0, "ratio_dev": 0.0}
    for j in range(0, len(mb), settings.micro_batch):
        micro = mb[j : j + settings.micro_batch]
        logp, resp = sequence_logprobs(
            policy.model,
            [s.turn.prompt_ids for s in micro],
            [s.turn.token_ids for s in micro],
            pad_id=pad,
            device=policy.device,
        )
        old, tok_adv, tok_mask = token_targets(micro, logp, resp)
        ref = None
        if settings.kl_in_loss:
            ref = torch.zeros_like(logp)
            ref_rows = reference_logprobs(policy, reference, [s.turn for s in micro], len(micro))
            ref[resp] = torch.cat(ref_rows).to(logp.device, logp.dtype)
        loss, st = ppo_clip_loss(logp, old, tok_adv, tok_mask, settings.loss, logp_ref=ref)
        weight = float(tok_mask.sum()) / max(total, 1)
        (loss * weight).backward()  # type: ignore[no-untyped-call]
        out["loss"] += float(loss.detach()) * weight
        out["clip_frac"] += st["clip_frac"] * weight
        out["approx_kl"] += st["approx_kl"] * weight
        dev = (
            ((logp.detach() - old).abs() * tok_mask).max() if tok_mask.any() else logp.new_zeros(())
        )
        out["ratio_dev"] = max(out["ratio_dev"], float(dev))
    return out
