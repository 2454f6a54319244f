"""One policy update of the causal-LM trainer: advantages, token broadcast, PPO clip loss.

Each assistant turn is one training sample (its prompt exactly as the policy saw it, its reply
tokens exactly as sampled). The turn's advantage, from the registry estimator over the
(B, T) turn batch, is broadcast onto the reply's tokens only
(:func:`empathos.rl.tokens.broadcast_from_response_mask`): prompt tokens (system prompt, user
lines, earlier turns) never get loss. The loss is :func:`empathos.rl.loss.ppo_clip_loss`,
token-mean over each minibatch, accumulated over micro-batches.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from empathos.llm.local import LocalPolicy
from empathos.rl.advantages import compute_advantages
from empathos.rl.batch import AdvantageConfig, AdvantageResult, TurnBatch
from empathos.rl.kl import kl_in_reward
from empathos.rl.loss import PPOLossConfig, ppo_clip_loss
from empathos.rl.tokens import broadcast_from_response_mask
from empathos.train.policy import sequence_logprobs
from empathos.train.rollout import Dialogue, TurnSample, turn_arrays

__all__ = [
    "Sample",
    "UpdateSettings",
    "advantages_for",
    "policy_update",
    "reference_logprobs",
    "token_targets",
]


@dataclass(frozen=True)
class Sample:
    """A turn in the loss: its tokens and its advantage."""

    turn: TurnSample
    advantage: float
    in_loss: bool


@dataclass(frozen=True)
class UpdateSettings:
    """Epochs, minibatches, micro-batch size and clipping of one update."""

    epochs: int
    minibatches: int
    micro_batch: int
    grad_clip: float
    loss: PPOLossConfig
    kl_in_loss: bool


def reference_logprobs(
    policy: LocalPolicy, reference: Any, samples: Sequence[TurnSample], micro_batch: int
) -> list[torch.Tensor]:
    """Per-token log-probabilities of each sample's reply under the reference policy.

    ``reference`` is a frozen model, or None for a LoRA policy with the adapter switched off."""
    out: list[torch.Tensor] = []
    pad = int(policy.tokenizer.pad_token_id or policy.tokenizer.eos_token_id)
    for i in range(0, len(samples), micro_batch):
        chunk = samples[i : i + micro_batch]
        with torch.no_grad(), _reference(policy, reference) as model:
            logp, resp = sequence_logprobs(
                model,
                [s.prompt_ids for s in chunk],
                [s.token_ids for s in chunk],
                pad_id=pad,
                device=policy.device,
            )
        out.extend(logp[k][resp[k]].float().cpu() for k in range(len(chunk)))
    return out


@contextlib.contextmanager
def _reference(policy: LocalPolicy, reference: Any) -> Iterator[Any]:
    if reference is not None:
        yield reference
    else:
        with policy.model.disable_adapter():
            yield policy.model


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
    """Rollout log-probs, token advantages and token loss mask (N, L) for packed rows.

    ``resp`` (N, L) is the response mask of :func:`empathos.train.policy.sequence_logprobs`:
    each row's reply is its one assistant run, so the sample's advantage goes to its reply
    tokens and nowhere else (prompt, earlier turns, user lines and padding get 0, off-mask)."""
    old = torch.zeros_like(logp)
    old[resp] = torch.tensor([x for s in samples for x in s.turn.logprobs], dtype=logp.dtype).to(
        logp.device
    )
    adv_rows = torch.tensor([[s.advantage] for s in samples], dtype=torch.float64)
    in_rows = torch.tensor([[s.in_loss] for s in samples], dtype=torch.bool)
    tok_adv, tok_mask = broadcast_from_response_mask(
        adv_rows.to(logp.device), in_rows.to(logp.device), resp
    )
    return old, tok_adv, tok_mask


def policy_update(
    policy: LocalPolicy,
    optimizer: torch.optim.Optimizer,
    scheduler: Any,
    samples: Sequence[Sample],
    settings: UpdateSettings,
    generator: torch.Generator,
    reference: Any = None,
    on_minibatch: Callable[[], None] | None = None,
) -> dict[str, float]:
    """Epochs x minibatches of PPO over the samples in the loss; mean stats over minibatches."""
    train = [s for s in samples if s.in_loss]
    stats: dict[str, list[float]] = {"loss": [], "clip_frac": [], "approx_kl": [], "grad_norm": []}
    if not train:
        return {}
    pad = int(policy.tokenizer.pad_token_id or policy.tokenizer.eos_token_id)
    params = [p for p in policy.model.parameters() if p.requires_grad]
    policy.model.train()
    for _ in range(settings.epochs):
        order = torch.randperm(len(train), generator=generator).tolist()
        n_mb = min(settings.minibatches, len(train))
        for chunk in np.array_split(np.asarray(order), n_mb):
            mb = [train[int(k)] for k in chunk]
            total = sum(len(s.turn.token_ids) for s in mb)
            optimizer.zero_grad(set_to_none=True)
            mb_loss = mb_clip = mb_kl = 0.0
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
                    ref_rows = reference_logprobs(policy, reference, [s.turn for s in micro],
                                                  len(micro))  # fmt: skip
                    ref[resp] = torch.cat(ref_rows).to(logp.device, logp.dtype)
                loss, st = ppo_clip_loss(logp, old, tok_adv, tok_mask, settings.loss, logp_ref=ref)
                weight = float(tok_mask.sum()) / max(total, 1)
                (loss * weight).backward()  # type: ignore[no-untyped-call]
                mb_loss += float(loss.detach()) * weight
                mb_clip += st["clip_frac"] * weight
                mb_kl += st["approx_kl"] * weight
            norm = torch.nn.utils.clip_grad_norm_(params, settings.grad_clip)
            optimizer.step()
            scheduler.step()
            if on_minibatch is not None:
                on_minibatch()
            stats["loss"].append(mb_loss)
            stats["clip_frac"].append(mb_clip)
            stats["approx_kl"].append(mb_kl)
            stats["grad_norm"].append(float(norm))
    optimizer.zero_grad(set_to_none=True)
    return {k: float(np.mean(v)) for k, v in stats.items() if v}
