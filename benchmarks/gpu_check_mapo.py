"""GPU checks of MAPO under TRL that the CPU tests cannot make (issue 46); not a test, run by
``scripts/gpu-check-mapo.sh`` on a GPU machine with vLLM installed (``pip install 'trl[vllm]'``).

One ``MAPOTrainer`` step of the bundled SmolLM2-135M (LoRA, bf16) with a real vLLM engine
(``--mode colocate``: one process; ``--mode server``: under ``accelerate launch`` with a
``trl vllm-serve`` already running), scripted user and judge (the judge leaves some replies
unrated, the user fails on some: unscored turns and failed dialogues). Each rank asks for its
own reply cap (8 tokens on rank 0, 16 on rank 1, ...). Checked, and printed as one JSON line
per rank (exit status 1 when a check fails):

- ``cap``: every reply either ends with an end token or is exactly as long as its own room
  (its rank's cap, or what was left of ``max_completion_length``): no rank's replies are cut
  at another rank's cap by the shared engine;
- ``logprob_gap``: the mean |vLLM's sampling log-prob - TRL's old log-prob| over the tokens in
  the loss, at ``temperature`` 0.7 (small when both are at the sampling temperature);
- ``is_weight``: TRL's sequence-level importance weight equals exp(sum of (old - sampling)) over
  the tokens in the loss only;
- ``failed_out``: failed dialogues have no token in the loss; the step's metrics are finite.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import Any

import torch

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


def _roles() -> Any:
    from empathos.llm import EndpointConfig, ModelClient, ScriptedBackend, fault
    from empathos.sandbox import Roles
    from empathos.train import toy

    judge = toy.judge_for(toy.addresses_user)

    def picky_judge(request: Any) -> Any:
        rating = request.response_schema is not None and request.schema_name != "IEDRForm"
        if rating and len(toy.last_reply(request)) % 5 == 0:
            raise fault("fatal", "no rating")
        return judge(request)

    def user(request: Any) -> Any:
        if len(request.messages[-1].content.strip()) % 7 == 0:
            raise fault("fatal", "the user model is down")
        return toy.user_states_feeling(request)

    def make(handler: Any, role: str) -> ModelClient:
        return ModelClient(ScriptedBackend(handler), EndpointConfig(kind="scripted"), role)

    return Roles(user=make(user, "user"), judge=make(picky_judge, "judge"))


_SHOWN = ("reward_std", "frac_reward_zero_std", "mapo/dialogues/failed", "loss")


def _checks(trainer: Any, outputs: list[Any], inputs: dict[str, Any], cap: int) -> dict[str, Any]:
    tok = trainer.processing_class
    ends = {int(tok.eos_token_id), *[int(x) for x in trainer.eos_token_ids]}
    budget = int(trainer.max_completion_length)
    cap_ok = True
    for out in outputs:
        for ids, spans in zip(out["completion_ids"], out["turn_spans"], strict=True):
            for start, end in spans:
                room = min(cap, budget - start)
                cap_ok &= ids[end - 1] in ends or end - start == room
    mask = (inputs["completion_mask"] * inputs["tool_mask"]).bool()
    old, sampled = inputs["old_per_token_logps"], inputs["sampling_per_token_logps"]
    gap = float((old - sampled)[mask].abs().mean())
    weight = inputs["importance_sampling_ratio"][:, 0].float()
    expected = torch.exp(((old - sampled).nan_to_num() * mask).sum(-1)).clamp(max=1e6).float()
    errors = [e for out in outputs for e in out["dialogue_error"]]
    logs = trainer.state.log_history[0]
    placed = trainer.last_advantages
    failed_out = not bool(placed.mask[placed.failed[placed.rows]].any())
    finite = all(math.isfinite(float(v)) for v in logs.values() if isinstance(v, int | float))
    return {
        "rank": trainer.accelerator.process_index,
        "cap": bool(cap_ok),
        "logprob_gap": gap,
        "is_weight": bool(torch.allclose(weight, expected, rtol=1e-2)),
        "failed_dialogues": sum(e is not None for e in errors),
        "failed_out": failed_out and finite,
        "metrics": {k: logs.get(k) for k in _SHOWN},
    }


def main() -> int:
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig

    from empathos.integrations.trl import MAPOTrainer, empa_rollout_func, scenario_rows
    from empathos.llm.local import resolve_model_dir
    from empathos.sandbox import SandboxConfig
    from empathos.scenarios import load_builtin

    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=("colocate", "server"), default="colocate")
    parser.add_argument("--out", default="/tmp/gpu-check-mapo")
    opts = parser.parse_args()
    rank = int(os.environ.get("RANK", "0"))
    cap = 8 * (rank + 1)
    base, _, _ = resolve_model_dir(None, None, "policy")
    tokenizer = AutoTokenizer.from_pretrained(base)
    scenarios = [s for s in load_builtin().scenarios if s.labels.language == "en"][:2]
    sandbox = SandboxConfig(max_turns=3, min_turns=3, eval_every=1, unscored_share_limit=1.0)
    rollout = empa_rollout_func(scenarios, _roles(), sandbox, max_reply_tokens=cap)
    outputs: list[Any] = []

    def observed(prompts: list[Any], trainer: Any) -> Any:
        outputs.append(rollout(prompts, trainer))
        return outputs[-1]

    args = GRPOConfig(
        output_dir=opts.out, per_device_train_batch_size=8, num_generations=4, max_steps=1,
        max_completion_length=256, learning_rate=1e-5, logging_steps=1, report_to=[],
        save_strategy="no", bf16=True, temperature=0.7, use_vllm=True, vllm_mode=opts.mode,
        vllm_gpu_memory_utilization=0.25, vllm_importance_sampling_mode="sequence_truncate",
        vllm_importance_sampling_clip_max=1e6, off_policy_mask_threshold=0.5,
    )  # fmt: skip
    model = AutoModelForCausalLM.from_pretrained(base, torch_dtype=torch.bfloat16)
    trainer = MAPOTrainer(
        model, args=args, train_dataset=Dataset.from_list(scenario_rows(scenarios)),
        processing_class=tokenizer, rollout_func=observed,
        peft_config=LoraConfig(r=8, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"),
    )  # fmt: skip
    seen: list[dict[str, Any]] = []
    loss = trainer._compute_loss

    def observed_loss(model: Any, inputs: dict[str, Any]) -> Any:
        seen.append(inputs)
        return loss(model, inputs)

    trainer._compute_loss = observed_loss  # type: ignore[method-assign]  # observes only
    trainer.train()
    result = _checks(trainer, outputs, seen[0], cap)
    ok = result["cap"] and result["is_weight"] and result["failed_out"]
    ok = ok and result["logprob_gap"] < 0.05
    print(json.dumps({"ok": ok, **result}), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
