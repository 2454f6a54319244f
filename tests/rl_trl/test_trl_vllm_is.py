"""TRL's vLLM importance-sampling correction in its sequence-level mode counts only the tokens
in MAPO's loss (one ``train()`` step, tiny model, CPU).

No vLLM here: the engine is a stand-in for TRL's ``VLLMGeneration`` (its ``generate`` and
``sync_weights``) that samples from the trainer's own model and reports each token's
log-probability lowered by ``OFFSET``, as a mismatched inference engine would. TRL's own
``_generate_and_score_completions`` then computes the sequence weight exp(sum over the masked-in
tokens of (old - sampling)); the scripted judge fails on some replies, so some turns are
unscored and out of the loss, and must be out of that sum too."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from trl_run import Run, even_length, run_trainer

from empathos.llm import ChatRequest
from empathos.llm.local import LocalPolicy
from empathos.llm.scripted import fault
from empathos.train import toy

pytestmark = pytest.mark.slow

OFFSET = 0.05
_JUDGE = toy.judge_for(even_length)


def picky_judge(request: ChatRequest) -> Any:
    """The tests' judge, failing (no rating) on replies whose length is divisible by 3."""
    rating = request.response_schema is not None and request.schema_name != "IEDRForm"
    if rating and len(toy.last_reply(request)) % 3 == 0:
        raise fault("fatal", "the judge is down")
    return _JUDGE(request)


class Engine:
    """``VLLMGeneration``'s calls, answered by the trainer's model (see the module docstring)."""

    def __init__(self, trainer: Any) -> None:
        self.trainer = trainer
        self.max_completion_length = 16

    def sync_weights(self) -> None:
        """The weights are the model's own: nothing to push."""

    def generate(self, prompts: list[list[int]], images: Any, num_generations: int) -> tuple:
        del images, num_generations
        model = self.trainer.accelerator.unwrap_model(self.trainer.model)
        policy = LocalPolicy(model=model, tokenizer=self.trainer.processing_class,
                             name="engine", device=torch.device("cpu"), dtype=torch.float32,
                             lora=True)  # fmt: skip
        gens = policy.generate(prompts, max_new_tokens=self.max_completion_length,
                               batch_size=len(prompts))  # fmt: skip
        ids = [list(g.token_ids) for g in gens]
        logprobs = [[[lp - OFFSET] for lp in g.logprobs] for g in gens]
        return prompts, ids, logprobs, None


def _with_engine(trainer: Any) -> None:
    trainer.use_vllm = True
    trainer.vllm_generation = Engine(trainer)
    trainer._last_loaded_step = -1
    trainer.vllm_importance_sampling_correction = True
    trainer.vllm_importance_sampling_mode = "sequence_truncate"
    trainer.vllm_importance_sampling_clip_min = 0.0
    trainer.vllm_importance_sampling_clip_max = 1e6


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return run_trainer(
        tmp_path_factory.mktemp("vllm-is"),
        estimator="mapo",
        judge=picky_judge,
        setup=_with_engine,
        sandbox={"unscored_share_limit": 1.0},
    )


def test_sequence_level_importance_weights_count_only_the_scored_turns_tokens(run: Run) -> None:
    rows = run.outputs[0]
    unscored = [i for i, r in enumerate(rows["turn_rewards"]) if None in r]
    assert unscored, "the judge left some turns unscored"
    batch = run.loss_inputs[0]
    old, sampled = batch["old_per_token_logps"], batch["sampling_per_token_logps"]
    in_loss = batch["completion_mask"] * batch["tool_mask"]
    weight = batch["importance_sampling_ratio"][:, 0]
    expected = torch.exp(((old - sampled) * in_loss).sum(dim=-1))
    assert torch.allclose(weight, expected, rtol=1e-5)
    n = in_loss.sum(dim=-1)
    assert torch.allclose(weight, torch.exp(OFFSET * n), rtol=2e-2), "OFFSET per token in the loss"
    completions = [torch.tensor(c) for c in rows["completion_ids"]]
    for i in unscored:  # the env_mask (every policy token) would have counted more tokens
        want = completions[i]
        row = next(j for j in range(len(completions))
                   if torch.equal(batch["completion_ids"][j, : len(want)], want))  # fmt: skip
        policy_tokens = sum(rows["env_mask"][i])
        assert int(n[row]) < policy_tokens
