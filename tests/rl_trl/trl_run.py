"""One short MAPOTrainer run on the CPU, observed: the rollout outputs TRL received, the batch
its loss received, the LoRA weights before and after, the logs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from datasets import Dataset
from peft import LoraConfig
from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM
from trl import GRPOConfig

from empathos.integrations.trl import MAPOTrainer, empa_rollout_func, scenario_rows
from empathos.llm import EndpointConfig, ModelClient, ScriptedBackend
from empathos.llm.local import resolve_model_dir
from empathos.sandbox import Roles, SandboxConfig
from empathos.scenarios import load_builtin
from empathos.train import toy

GENERATIONS = 4
REPLY_TOKENS = 6


def even_length(reply: str) -> bool:
    """The scripted judge's rule: progress when the reply has an even number of characters
    (random replies of a random model then earn varied rewards)."""
    return len(reply) % 2 == 0


def _client(handler: Any, role: str) -> ModelClient:
    return ModelClient(ScriptedBackend(handler), EndpointConfig(kind="scripted", model=role), role)


def roles(user: Any = toy.user_states_feeling, judge: Any = None) -> Roles:
    judge = judge or toy.judge_for(even_length)
    return Roles(user=_client(user, "user"), judge=_client(judge, "judge"))


def tiny_model(vocab: int) -> LlamaForCausalLM:
    torch.manual_seed(0)
    sizes = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2}
    heads = {"num_attention_heads": 4, "num_key_value_heads": 2}
    config = LlamaConfig(vocab_size=vocab, max_position_embeddings=2048, **sizes, **heads)
    return LlamaForCausalLM(config)


@dataclass
class Run:
    trainer: MAPOTrainer
    tokenizer: Any
    outputs: list[dict[str, list[Any]]]  # what the rollout function returned, per call
    loss_inputs: list[dict[str, Any]]  # the batches TRL's loss received
    lora_before: dict[str, torch.Tensor]
    lora_after: dict[str, torch.Tensor]


def _lora(model: Any) -> dict[str, torch.Tensor]:
    return {n: p.detach().clone() for n, p in model.named_parameters() if "lora_" in n}


Probe = Callable[[Any, Any, dict[str, Any]], None]


def run_trainer(
    out: Path,
    *,
    estimator: str,
    steps: int = 1,
    user: Any = toy.user_states_feeling,
    judge: Any = None,
    probe: Probe | None = None,
    setup: Callable[[Any], None] | None = None,
    sandbox: dict[str, Any] | None = None,
    **trl: Any,
) -> Run:
    """One ``MAPOTrainer.train()``; ``user``, ``judge``: the roles' handlers; ``probe(trainer,
    model, inputs)`` runs before each call of TRL's loss (observing, nothing changed);
    ``setup(trainer)`` after construction; ``sandbox``: SandboxConfig fields."""
    base, _, _ = resolve_model_dir(None, None, "policy")
    tokenizer = AutoTokenizer.from_pretrained(base)
    scenarios = [s for s in load_builtin().scenarios if s.labels.language == "en"][:2]
    settings = SandboxConfig(
        max_turns=2, min_turns=2, eval_every=1, system_prompt="none", director="rules",
        **(sandbox or {}),
    )  # fmt: skip
    rollout = empa_rollout_func(
        scenarios, roles(user, judge), settings, max_reply_tokens=REPLY_TOKENS
    )
    outputs: list[dict[str, list[Any]]] = []

    def observed(prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        result = rollout(prompts, trainer)
        outputs.append(result)
        return result

    args = GRPOConfig(
        output_dir=str(out),
        per_device_train_batch_size=2 * GENERATIONS,
        num_generations=GENERATIONS,
        max_steps=steps,
        max_completion_length=128,
        learning_rate=1e-2,
        logging_steps=1,
        report_to=[],
        use_cpu=True,
        save_strategy="no",
        seed=0,
        scale_rewards="group",
        **trl,
    )
    trainer = MAPOTrainer(
        tiny_model(len(tokenizer)),
        args=args,
        train_dataset=Dataset.from_list(scenario_rows(scenarios)),
        processing_class=tokenizer,
        peft_config=LoraConfig(
            r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"
        ),
        rollout_func=observed,
        estimator=estimator,
    )
    if setup is not None:
        setup(trainer)
    loss_inputs: list[dict[str, Any]] = []
    compute_loss = trainer._compute_loss

    def observed_loss(model: Any, inputs: dict[str, Any]) -> Any:
        loss_inputs.append(inputs)
        if probe is not None:
            probe(trainer, model, inputs)
        return compute_loss(model, inputs)

    trainer._compute_loss = observed_loss  # observes; the real loss still runs
    before = _lora(trainer.model)
    trainer.train()
    return Run(trainer, tokenizer, outputs, loss_inputs, before, _lora(trainer.model))
