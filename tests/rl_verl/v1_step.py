"""One training step of verl 0.9's V1 trainer on a CPU, with verl's own per-step code.

- the rollout: verl's ``AgentLoopWorkerTQ`` (the V1 worker: n sessions per prompt, each
  output's ``as_dict`` stored with its tags ``min_global_steps`` / ``max_global_steps``) on
  the batch as ``PPOTrainer._next_train_batch`` builds it (``tu.get_tensordict`` of the
  dataloader's rows, a uid per prompt, ``global_steps``), the policy behind verl's own
  ``LLMServerClient`` (:mod:`verl_server`);
- the old log-probs: ``PPOTrainer._compute_old_log_prob`` in bypass mode (the rollout's);
- the advantage: ``PPOTrainer._compute_advantage`` (``rm_scores`` to ``token_level_scores``,
  the in-reward KL, ``compute_advantage_for_multi_trajectories`` with the config's estimator
  and gamma);
- the metrics: ``PPOTrainer._compute_metrics`` (``compute_data_metrics``, the timing and
  throughput metrics, the off-policy staleness from the tags);
- the actor: ``verl.workers.utils.losses.ppo_loss`` (what the engine worker's
  ``update_actor`` calls per micro batch) on the stored fields, and the engine's backward
  pass, gradient clip and AdamW step.

What is not verl's: TransferQueue's store (:mod:`tq_local`: Ray actors in verl), the trainer
object (the attributes these methods read), and the engine worker's forward pass (the bundled
model's log-probabilities of the stored sequences).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np
import torch
import verl.trainer.ppo.v1.agent_loop_tq as agent_loop_tq
import verl.trainer.ppo.v1.trainer_base as trainer_base
from omegaconf import DictConfig
from tq_local import LocalKV
from transfer_queue import KVBatchMeta
from verl.trainer.ppo.core_algos import FixedKLController
from verl.utils import tensordict_utils as tu
from verl.utils.dataset.rl_dataset import collate_fn
from verl_server import TransformersServer

from empathos.llm.local import LocalPolicy

_WorkerTQ = agent_loop_tq.AgentLoopWorkerTQ.__ray_metadata__.modified_class.__ray_actor_class__
PPOTrainer = trainer_base.PPOTrainer


@contextlib.contextmanager
def local_transfer_queue(kv: LocalKV) -> Iterator[LocalKV]:
    """verl's V1 worker and trainer modules talking to ``kv`` instead of a TransferQueue."""
    saved = agent_loop_tq.tq, trainer_base.tq
    agent_loop_tq.tq = trainer_base.tq = kv
    try:
        yield kv
    finally:
        agent_loop_tq.tq, trainer_base.tq = saved


class CapturingWorkerTQ(_WorkerTQ):  # type: ignore[misc,valid-type]  # verl is untyped
    """verl's V1 agent loop worker, keeping each agent loop's own output as well."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.captured: list[tuple[Any, dict[str, Any]]] = []

    async def _agent_loop_postprocess(self, output: Any, validate: bool, **kwargs: Any) -> Any:
        self.captured.append((output, kwargs))
        return await super()._agent_loop_postprocess(output, validate, **kwargs)


@dataclass
class V1Rollouts:
    """What one generation step left in the store."""

    kv: LocalKV
    batch: KVBatchMeta  # the stored samples, as the trainer's step gets them
    outputs: list[Any]  # the agent loops' own outputs, in the batch's order
    kwargs: list[dict[str, Any]]
    server: TransformersServer
    worker: Any  # verl's V1 worker that ran them
    global_steps: int


def generate(
    config: DictConfig, policy: LocalPolicy, dataset: Any, kv: LocalKV, global_steps: int
) -> V1Rollouts:
    """The V1 trainer's generation step on every row of ``dataset``."""
    batch_dict = collate_fn([dataset[i] for i in range(len(dataset))])
    batch_dict["uid"] = np.array([str(uuid.uuid4()) for _ in range(len(dataset))], dtype=object)
    batch = tu.get_tensordict(batch_dict)
    tu.assign_non_tensor_data(batch, "global_steps", global_steps)
    tags = [{"is_prompt": True, "status": "pending", "global_steps": global_steps}] * len(batch)
    kv.kv_batch_put(keys=list(batch["uid"]), partition_id="train", tags=tags)
    server = TransformersServer(config, policy, global_steps=global_steps - 1)
    worker = CapturingWorkerTQ(config, server)

    async def run() -> None:
        await worker.generate_sequences(batch)
        while worker.background_tasks:
            await asyncio.gather(*list(worker.background_tasks))

    asyncio.run(run())
    meta = kv.samples()
    by_key = {f"{k['uid']}_{k['session_id']}_0": (o, k) for o, k in worker.captured}
    captured = [by_key[key] for key in meta.keys]
    return V1Rollouts(kv, meta, [c[0] for c in captured], [c[1] for c in captured], server,
                      worker, global_steps)  # fmt: skip


def trainer(config: DictConfig) -> Any:
    """The attributes of a ``PPOTrainer`` that its advantage and metrics steps read."""
    return SimpleNamespace(
        config=config,
        use_critic=False,
        kl_ctrl_in_reward=FixedKLController(float(config.algorithm.kl_ctrl.kl_coef)),
        _rollout_moe_lb_metrics_accumulator=None,
        _get_n_gpus_for_throughput=lambda: 1,
    )


def train_step(config: DictConfig, rollouts: V1Rollouts, model: Any) -> dict[str, Any]:
    """The per-step calls of ``PPOTrainer._step_once`` on the stored batch, in its order:
    ``_compute_old_log_prob`` (bypass mode: the rollout's), ``_compute_advantage``, the actor's
    update (:func:`actor_update`, for ``_update_actor``), then ``_compute_metrics``."""
    owner, metrics = trainer(config), {}
    batch = PPOTrainer._compute_old_log_prob(owner, rollouts.batch, metrics)
    batch = PPOTrainer._compute_advantage(owner, batch, metrics)
    metrics |= actor_update(config, rollouts.kv, batch, model)
    timing = {"step": 1.0, "gen": 0.5, "old_log_prob": 0.0, "adv": 0.1, "update_actor": 0.4}
    PPOTrainer._compute_metrics(owner, batch, metrics, timing, rollouts.global_steps, 0)
    return metrics


def _sequence_logprobs(model: Any, td: Any) -> torch.Tensor:
    """What the engine's forward pass gives ``ppo_loss``: per sequence, the log-probability of
    token p + 1 at position p (0 at the last), concatenated (total_nnz,)."""
    out = []
    for prompt, response in zip(td["prompts"].unbind(), td["responses"].unbind(), strict=True):
        ids = torch.cat([prompt, response])[None, :]
        logp = torch.log_softmax(model(input_ids=ids).logits[0].float(), dim=-1)
        nxt = logp[:-1].gather(1, ids[0, 1:, None])[:, 0]
        out.append(torch.cat([nxt, torch.zeros(1)]))
    return torch.cat(out)


def actor_update(
    config: DictConfig, kv: LocalKV, meta: KVBatchMeta, model: Any
) -> dict[str, float]:
    """``ppo_loss`` on the stored batch, one backward pass, the gradient clip, an AdamW step."""
    from verl.utils.config import omega_conf_to_dataclass
    from verl.workers.utils.losses import ppo_loss

    actor = omega_conf_to_dataclass(config.actor_rollout_ref.actor)
    fields = ["prompts", "responses", "response_mask", "old_log_probs", "advantages"]
    data = kv.kv_batch_get(meta.keys, meta.partition_id, fields)
    tokens = int(data["response_mask"].values().sum())
    tu.assign_non_tensor(data, dp_size=1, batch_num_tokens=tokens, global_batch_size=len(meta))
    optim = torch.optim.AdamW(model.parameters(), lr=actor.optim.lr,
                              weight_decay=actor.optim.weight_decay)  # fmt: skip
    loss, metrics = ppo_loss(actor, {"log_probs": _sequence_logprobs(model, data)}, data)
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), actor.optim.clip_grad)
    optim.step()
    out = {k: float(v.aggregate() if hasattr(v, "aggregate") else v) for k, v in metrics.items()}
    return out | {"actor/loss": float(loss.detach()), "actor/grad_norm": float(grad_norm)}
