"""One EMPA, every door (verl environment): the conformance scenario through verl's own agent
loop worker (V1, as tests/rl_verl runs it: verl's server client in this process, the fixed
policy behind it in place of vLLM) gives the numbers of ``empathos run``, read back from the
agent loop's output (``extra_fields``: ``turn_scores`` the per-turn rewards, ``empathos`` the
termination, the final distance and the EPM-Q; the replies decoded from the response at the
server's calls). The unscored turn is the judge's failed call, as through every door."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("verl", reason="verl is not installed (the empathos[verl] environment)")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rl_verl"))

from conformance_roles import policy_reply
from every_door import SANDBOX, SANDBOX_ROLES, Outcome, assert_conforms, scripted, write_scenario
from omegaconf import open_dict
from tq_local import LocalKV
from v1_step import generate, local_transfer_queue
from verl.utils.dataset.rl_dataset import RLHFDataset
from verl_setup import compose_example

from empathos.integrations.verl.prepare import write_dataset
from empathos.llm.local import resolve_model_dir
from empathos.scenarios import load_scenarios

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class _Generated:
    token_ids: list[int]
    logprobs: list[float]


class ScriptedPolicy:
    """The fixed policy where verl_server's replica expects the bundled model: the reply's turn
    is the number of policy replies in the prompt + 1, tokenized, then end-of-sequence."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer

    def generate(self, prompts: list[list[int]], **_: Any) -> list[_Generated]:
        out = []
        for prompt in prompts:
            reply = policy_reply(self.tokenizer.decode(prompt).count("[p") + 1)
            ids = [*self.tokenizer.encode(reply, add_special_tokens=False),
                   self.tokenizer.eos_token_id]  # fmt: skip
            out.append(_Generated(ids, [0.0] * len(ids)))
        return out


def test_verl_door(ref: Outcome, tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    model_dir, _, _ = resolve_model_dir(None, None, "policy")
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    scenarios = write_scenario(tmp_path / "scenarios")
    cfg = compose_example([f"actor_rollout_ref.model.path={model_dir}",
                           "data.max_prompt_length=2048", "data.max_response_length=1024",
                           "actor_rollout_ref.rollout.n=1",
                           "algorithm.rollout_correction.bypass_mode=true"])  # fmt: skip
    with open_dict(cfg):
        cfg.empathos = {"roles": {r: scripted(r) for r in SANDBOX_ROLES}, "sandbox": SANDBOX,
                        "scenarios": str(scenarios), "max_reply_tokens": 64}  # fmt: skip
    [scenario] = load_scenarios(scenarios).scenarios
    split = write_dataset([scenario], tmp_path / "data", val_fraction=0.0)
    dataset = RLHFDataset([str(split.train)], tokenizer, cfg.data)
    kv = LocalKV()
    with local_transfer_queue(kv):
        v1 = generate(cfg, ScriptedPolicy(tokenizer), dataset, kv, global_steps=1)  # type: ignore[arg-type]
    [output] = v1.outputs
    info = output.extra_fields["empathos"]
    scores = output.extra_fields["turn_scores"]
    replies = tuple(tokenizer.decode(c.token_ids, skip_special_tokens=True).strip()
                    for c in sorted(v1.server.calls, key=lambda c: len(c.prompt_ids)))  # fmt: skip
    got = Outcome(replies, tuple(scores), info["final_distance"], info["termination"],
                  info["epmq"])  # fmt: skip
    assert got.final_distance is not None and got.epmq is not None, "verl's output carries both"
    assert_conforms("verl", got, ref)
    assert info["turns"] == len(ref.replies)
