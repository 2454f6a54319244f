"""The data path of verl 0.9's V1 trainer between the agent loop and the advantage, on a CPU.

verl's ``AgentLoopWorkerTQ`` stores ``output.as_dict()`` of every agent loop output in its
TransferQueue; ``PPOTrainer._compute_advantage`` reads ``uid``, ``response_mask`` and
``rm_scores`` back, pads them, sets ``token_level_scores = rm_scores``, applies the in-reward
KL penalty (``apply_kl_penalty``) when ``use_kl_in_reward`` and calls
``compute_advantage_for_multi_trajectories``; ``_compute_metrics`` then runs
``compute_data_metrics``. The queue and the Ray workers are what needs a cluster; every step
below is verl's own function, called in the order the trainer calls them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from verl import DataProto
from verl.trainer.config import AlgoConfig
from verl.trainer.ppo.core_algos import FixedKLController
from verl.trainer.ppo.metric_utils import compute_data_metrics
from verl.trainer.ppo.ray_trainer import apply_kl_penalty
from verl.trainer.ppo.v1.utils import compute_advantage_for_multi_trajectories
from verl.utils.tensordict_utils import list_of_dict_to_tensordict

FIELDS = ("prompts", "responses", "response_mask", "rm_scores")


def stored(outputs: list[Any], kwargs: list[dict[str, Any]]) -> Any:
    """The samples as the V1 worker stores them (``as_dict`` plus the row's uid), nested."""
    rows = []
    for output, row in zip(outputs, kwargs, strict=True):
        field = output.as_dict()
        rows.append({**{k: field[k] for k in FIELDS}, "uid": str(row["uid"])})
    return list_of_dict_to_tensordict(rows)


def advantage_batch(
    outputs: list[Any],
    kwargs: list[dict[str, Any]],
    *,
    estimator: str = "mapo_dialogue",
    gamma: float = 0.85,
    kl: tuple[torch.Tensor, torch.Tensor, float] | None = None,
) -> DataProto:
    """verl's advantage step on the stored samples; ``kl``: (old_log_probs, ref_log_prob,
    coefficient) for the in-reward KL penalty (verl's ``kl_penalty: kl``)."""
    td = stored(outputs, kwargs)
    data = DataProto(batch=td.select("uid", "response_mask", "rm_scores").to_padded_tensor())
    data.batch["token_level_scores"] = data.batch["rm_scores"]
    data.non_tensor_batch["uid"] = np.array(data.batch.pop("uid").tolist(), dtype=object)
    if kl is not None:
        old, ref, coef = kl
        data.batch["old_log_probs"], data.batch["ref_log_prob"] = old, ref
        data, _metrics = apply_kl_penalty(data, kl_ctrl=FixedKLController(coef), kl_penalty="kl")
    else:
        data.batch["token_level_rewards"] = data.batch["token_level_scores"]
    keys = [f"{row['uid']}_{i}_0" for i, row in enumerate(kwargs)]
    return compute_advantage_for_multi_trajectories(
        data,
        batch_keys=keys,
        adv_estimator=estimator,
        gamma=gamma,
        num_repeat=1,
        config=AlgoConfig(gamma=gamma, adv_estimator=estimator),
    )


def data_metrics(
    outputs: list[Any], kwargs: list[dict[str, Any]], adv: DataProto
) -> dict[str, Any]:
    """verl's ``compute_data_metrics`` on the batch, as the V1 trainer's ``_compute_metrics``
    builds it (scores from ``rm_scores``, lengths from the stored samples)."""
    td = stored(outputs, kwargs)
    names = ("prompts", "responses")
    lengths = {k: torch.tensor([float(len(row[k])) for row in td]) for k in names}
    padded = td.select("prompts", "responses", "response_mask").to_padded_tensor()
    batch = DataProto.from_dict(
        tensors={
            "prompts": padded["prompts"],
            "responses": padded["responses"],
            "response_mask": padded["response_mask"],
            "token_level_scores": adv.batch["token_level_scores"],
            "token_level_rewards": adv.batch["token_level_rewards"],
            "advantages": adv.batch["advantages"],
            "returns": adv.batch["returns"],
            "prompt_length": lengths["prompts"],
            "response_length": lengths["responses"],
        },
        non_tensors={"__num_turns__": np.array([o.num_turns for o in outputs], dtype=np.int32)},
    )
    return compute_data_metrics(batch=batch, use_critic=False)
