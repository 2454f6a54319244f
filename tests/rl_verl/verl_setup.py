"""What the verl tests share: verl's config for the bundled model, and real dialogues rolled out
through verl's own agent loop worker with the bundled model behind verl's server-manager
interface (conftest.py makes them once per session)."""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hydra import compose, initialize_config_dir
from omegaconf import DictConfig, open_dict
from tq_local import LocalKV
from v1_step import V1Rollouts, generate, local_transfer_queue
from verl import DataProto
from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
from verl.utils.dataset.rl_dataset import RLHFDataset
from verl_server import Call

from empathos.integrations.verl.prepare import write_dataset
from empathos.llm import EndpointConfig, build_model
from empathos.llm.local import LocalPolicy, resolve_model_dir
from empathos.llm.roles import load_handler
from empathos.sandbox import EmpathyEnv
from empathos.sandbox.config import Roles, SandboxConfig
from empathos.scenarios import load_scenarios

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
ROLES = HERE / "verl_roles.py"
N_ROLLOUTS = 2
GLOBAL_STEPS = 4  # the trainer's step: the server's weights are version 3, then 4 (verl_server)
SCENARIOS = ("en-01-sourdough", "en-03-lease")
SANDBOX = {"max_turns": 3, "min_turns": 3, "eval_every": 1, "director": "rules",
           "unscored_share_limit": 0.5}  # fmt: skip


def compose_example(overrides: list[str] | None = None) -> DictConfig:
    """``examples/verl/mapo_qwen2_5_7b.yaml`` composed with verl's default trainer config."""
    with initialize_config_dir(config_dir=str(REPO / "examples" / "verl"), version_base=None):
        return compose(config_name="mapo_qwen2_5_7b", overrides=overrides or [])


def trainer_config() -> DictConfig:
    """The example config for the bundled model on a CPU: short dialogues, scripted roles."""
    model_dir, _, _ = resolve_model_dir(None, None, "policy")
    cfg = compose_example(
        [
            f"actor_rollout_ref.model.path={model_dir}",
            "data.max_prompt_length=512",
            "data.max_response_length=400",
            f"actor_rollout_ref.rollout.n={N_ROLLOUTS}",
            "algorithm.rollout_correction.bypass_mode=true",  # old log-probs: the rollout's
        ]
    )
    with open_dict(cfg):
        cfg.empathos = {
            "roles": {
                "user": {"kind": "scripted", "handler": f"{ROLES}:user"},
                "judge": {"kind": "scripted", "handler": f"{ROLES}:judge"},
            },
            "sandbox": SANDBOX,
            "max_reply_tokens": 12,
        }
    return cfg


@dataclass
class Rollouts:
    """The dialogues of one generation step of verl's V1 trainer."""

    outputs: list[Any]  # the agent loops' own outputs, in the stored batch's order
    kwargs: list[dict[str, Any]]  # the row each was run on (uid, session_id, ...)
    legacy: DataProto  # the same outputs through verl's legacy worker postprocessing
    calls: list[Call]  # every generate call the server answered
    config: DictConfig
    v1: V1Rollouts  # the store the V1 worker filled, the batch the trainer's step gets


def _legacy_batch(worker: Any, outputs: list[Any], kwargs: list[dict[str, Any]]) -> DataProto:
    """What verl's legacy worker (``trainer.use_v1=false``) makes of the same outputs."""

    async def convert() -> list[Any]:
        return [await AgentLoopWorker._agent_loop_postprocess(worker, o, False, **k)
                for o, k in zip(outputs, kwargs, strict=True)]  # fmt: skip

    return worker._postprocess(asyncio.run(convert()))  # type: ignore[no-any-return]


def make_rollouts(trainer_config: DictConfig, policy: LocalPolicy, out: Path) -> Rollouts:
    """Two scenarios x two rollouts through verl's V1 worker, the rows of
    ``empathos verl prepare`` read by verl's RLHFDataset (:mod:`v1_step`)."""
    chosen = [s for s in load_scenarios("builtin", kind="builtin").scenarios if s.id in SCENARIOS]
    split = write_dataset(chosen, out, val_fraction=0.0, system_prompt="none")  # short prompts
    dataset = RLHFDataset([str(split.train)], policy.tokenizer, trainer_config.data)
    kv = LocalKV()
    with local_transfer_queue(kv):
        v1 = generate(trainer_config, policy, dataset, kv, global_steps=GLOBAL_STEPS)
    return Rollouts(
        outputs=v1.outputs,
        kwargs=v1.kwargs,
        legacy=_legacy_batch(v1.worker, v1.outputs, v1.kwargs),
        calls=v1.server.calls,
        config=trainer_config,
        v1=v1,
    )


@dataclass(frozen=True)
class Dialogue:
    """One rollout read independently of the agent loop: its generate calls, where each reply
    lies in the response, and the rewards of the same replies played through EmpathyEnv."""

    output: Any
    calls: list[Call]
    spans: list[tuple[int, int]]  # [start, end) of each reply in the response
    rewards: list[float]  # NaN: unscored


def _calls_of(output: Any, calls: list[Call]) -> list[Call]:
    """The generate calls whose prompt and reply are a prefix of this rollout's tokens."""
    full = list(output.prompt_ids) + list(output.response_ids)
    mine = [
        c
        for c in calls
        if full[: len(c.prompt_ids)] == c.prompt_ids
        and full[len(c.prompt_ids) : len(c.prompt_ids) + len(c.token_ids)] == c.token_ids
    ]
    return sorted(mine, key=lambda c: len(c.prompt_ids))


def _replay(scenario_id: str, replies: list[str]) -> list[float]:
    def role(name: str) -> Any:
        return build_model(
            EndpointConfig(kind="scripted"), name, handler=load_handler(f"{ROLES}:{name}", name)
        )

    scenario = next(s for s in load_scenarios("builtin", kind="builtin").scenarios
                    if s.id == scenario_id)  # fmt: skip
    env = EmpathyEnv(Roles(user=role("user"), judge=role("judge")), SandboxConfig(**SANDBOX))

    async def play() -> list[float]:
        await env.reset(scenario)
        out = []
        for reply in replies:
            step = await env.step(reply)
            out.append(step.reward if step.info.reward_valid else math.nan)
        assert env.done
        return out

    return asyncio.run(play())


def read_dialogues(rollouts: Rollouts, tokenizer: Any) -> list[Dialogue]:
    """Every rollout, read from the server's log and replayed through EmpathyEnv."""
    out = []
    for output in rollouts.outputs:
        calls = _calls_of(output, rollouts.calls)
        start = len(output.prompt_ids)
        spans = [(len(c.prompt_ids) - start, len(c.prompt_ids) - start + len(c.token_ids))
                 for c in calls]  # fmt: skip
        replies = [tokenizer.decode(c.token_ids, skip_special_tokens=True).strip() for c in calls]
        sid = output.extra_fields["empathos"]["scenario_id"]
        out.append(Dialogue(output, calls, spans, _replay(sid, replies)))
    return out
