"""The EMPA sandbox as a verl 0.9 agent loop (``AgentLoopBase``), registered as
``empathos_dialogue``.

verl creates one :class:`EmpathyAgentLoop` per rollout (``hydra.utils.instantiate`` on the
registered entry, in its agent loop workers) and awaits :meth:`EmpathyAgentLoop.run` with the
dataset row. The loop runs one whole dialogue: the policy's turns come from verl's server
manager (``server_manager.generate``: vLLM, SGLang or any ``LLMServerClient``), the user,
director and judge answer on the endpoints of the ``empathos:`` settings
(:mod:`.settings`) through an :class:`~empathos.sandbox.EmpathyEnv`. Tokens are built with
verl's own Continuous Token builder, as its tool agent loop builds them.

The output (:class:`EmpathyOutput`) carries the dialogue as one sample: ``response_mask`` marks
the policy's tokens only (user lines, generation prompts and templates are 0), and
``rm_scores`` holds the per-turn layout of :mod:`.layout`: each scored turn's judge score on
its last token, a header before every turn, unscored turns taken out of the mask. No NaN
reaches verl: an unscored turn's score is None in ``extra_fields["turn_scores"]``.
``reward_score`` is the dialogue's total (the sum of its scored turns), so verl's reward loop
is not asked for one. ``extra_fields["empathos"]`` also carries the dialogue's
``final_distance`` (the EPM distance of its last point, as the Inspect scorer reads it) and
``epmq``: what ``empathos score`` gives the dialogue's record under the sandbox's preset
(:func:`~empathos.scoring.score_records`), None for a dialogue that ended as ``error`` or
was cut (``truncated``), which ``empathos score`` leaves out.

Each rollout gets a real seed (:func:`rollout_seed`): from the settings' base seed, the row's
index, verl's step and the rollout's position in its group, so the n rollouts of a scenario
differ and a rerun of the same step repeats them. It seeds the environment (the dialogue
record's ``seed``) and is reported in ``extra_fields["empathos"]``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any
from uuid import uuid4

import numpy as np
import torch
from pydantic import Field
from verl.experimental.agent_loop.agent_loop import (
    AgentLoopBase,
    AgentLoopMetrics,
    AgentLoopOutput,
    register,
)
from verl.experimental.agent_loop.tool_agent_loop import SPEC_DECODE_EXTRA_KEYS

from empathos.epm import EPMConfig
from empathos.errors import ConfigError
from empathos.integrations.verl.checks import refuse_colocated_reward_model, refuse_mask_rewrites
from empathos.integrations.verl.layout import PlacedTurn, encode_turns
from empathos.integrations.verl.names import AGENT_NAME
from empathos.integrations.verl.settings import World, world_for
from empathos.integrations.verl.version import require_verl
from empathos.sandbox import EmpathyEnv
from empathos.scenarios import Scenario
from empathos.scoring import score_records

__all__ = [
    "AGENT_NAME",
    "EmpathyAgentLoop",
    "EmpathyOutput",
    "finish_reason",
    "merge_server_fields",
    "rollout_seed",
    "turn_end_id",
]

require_verl()


class EmpathyOutput(AgentLoopOutput):  # type: ignore[misc]  # verl is untyped
    """verl's ``AgentLoopOutput`` whose ``rm_scores`` is the per-turn layout."""

    token_scores: list[float] = Field(
        default_factory=list,
        description="rm_scores of the response: scores on turn ends and turn headers "
        "(empathos.integrations.verl.layout).",
    )

    def as_dict(self) -> dict[str, Any]:
        """verl's dict of the sample (its V1 trainer stores it), ``rm_scores`` laid out."""
        out: dict[str, Any] = super().as_dict()
        out.pop("token_scores", None)
        out["rm_scores"] = torch.tensor(self.token_scores, dtype=torch.float32)
        return out


def _int(value: Any, default: int = 0) -> int:
    if value is None:
        return default
    if isinstance(value, torch.Tensor | np.ndarray):
        value = value.reshape(-1)[0].item() if value.size else default
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def rollout_seed(base: int, sample: dict[str, Any]) -> int:
    """The environment seed of one rollout: from ``base``, the row's index, verl's step and
    the rollout's position in its group (verl's ``session_id``, else ``priority``)."""
    info = sample.get("extra_info") or {}
    index = _int(info.get("index") if isinstance(info, dict) else None, _int(sample.get("index")))
    position = sample.get("session_id", sample.get("priority"))
    parts = [base, index, _int(sample.get("global_steps")), _int(position)]
    return int(np.random.SeedSequence([abs(p) for p in parts]).generate_state(1)[0])


def merge_server_fields(fields: dict[str, Any], call: dict[str, Any]) -> None:
    """Fold one generate call's ``extra_fields`` into the rollout's, as verl's tool agent loop
    does: the first call's are kept (``global_steps``, ``min_global_steps``: the weights the
    dialogue started on), a later call updates ``max_global_steps`` (the weights it ended on),
    adds up the speculative-decoding counts and keeps any key the first calls did not have."""
    if not fields:
        fields.update(call)
        return
    if call.get("max_global_steps") is not None:
        fields["max_global_steps"] = call["max_global_steps"]
    for key in SPEC_DECODE_EXTRA_KEYS:
        if key in call and key in fields:
            fields[key] = int(fields[key]) + int(call[key])
    for key, value in call.items():
        fields.setdefault(key, value)


_MARK = "\u2063empathos-reply\u2063"


def turn_end_id(tokenizer: Any) -> int:
    """The chat template's end-of-turn token: the first token the template writes after an
    assistant message's content (``<|im_end|>`` in ChatML)."""
    messages = [{"role": "user", "content": "."}, {"role": "assistant", "content": _MARK}]
    text = str(tokenizer.apply_chat_template(messages, tokenize=False))
    cut = text.find(_MARK)
    after = tokenizer(text[cut + len(_MARK) :], add_special_tokens=False)["input_ids"]
    if cut < 0 or not after:
        raise ConfigError(
            "the chat template writes nothing after an assistant message: the empathos agent "
            "loop cannot close a reply cut at max_reply_tokens",
            field="actor_rollout_ref.model.path",
        )
    return int(after[0])


def finish_reason(stop_reason: str | None, ids: list[int], max_tokens: int, ends: set[int]) -> str:
    """``stop`` or ``length`` for the judge: ``stop`` when the reply ends with an end token;
    else the server's stop reason when it names one (SGLang's ``length`` / ``stop``, and
    ``length`` from verl's ``LLMServerClient`` when it hit ``max_tokens``); verl's vLLM server
    reports both as ``completed``, and then a reply without an end token that filled
    ``max_tokens`` was cut."""
    if ids and ids[-1] in ends:
        return "stop"
    if stop_reason in ("length", "stop"):
        return stop_reason
    return "length" if len(ids) >= max_tokens else "stop"


@dataclass
class _Dialogue:
    """The token state of one rollout: the runtime tokens, the response's mask (and log
    probs), the chat messages, the turns placed so far and what the server reported.

    ``header`` is where the next turn's header lies in the response: recorded by the step
    that wrote the generation prompt (:meth:`EmpathyAgentLoop._open`, ``_answer``)."""

    runtime: list[int]
    boundary: int  # len(prompt): the response is runtime[boundary:]
    mask: list[int]
    logprobs: list[float] | None
    messages: list[dict[str, Any]]
    header: int
    turns: list[tuple[int, float | None]] = field(default_factory=list)  # (header, score)
    truncated: bool = False
    open_reply: bool = False  # the last reply was cut: not closed by its end-of-turn token
    timing: dict[str, float] = field(default_factory=lambda: {"gen": 0.0, "env": 0.0})
    server: dict[str, Any] = field(default_factory=dict)  # merged extra_fields of the calls
    preempted: int | None = None  # summed num_preempted (None: the server never said)
    routed_experts: Any = None  # the last call's (it covers the whole sequence so far)


def _place(mask: list[int], turns: list[tuple[int, float | None]]) -> list[PlacedTurn]:
    """Each turn's reply: the run of policy tokens right after its recorded header (read from
    the final mask, after every merge verl's token builder made)."""
    placed = []
    for header, score in turns:
        end = start = header + 2
        while end < len(mask) and mask[end]:
            end += 1
        placed.append(PlacedTurn(header, start, end, score))
    return placed


def _epm_numbers(env: EmpathyEnv, world: World) -> dict[str, float | None]:
    """The dialogue's final distance and EPM-Q, from its record as ``empathos run`` writes it
    and ``empathos score`` scores it (under the sandbox's preset)."""
    record = env.record()
    row = score_records(
        record.model or "", [record], EPMConfig.preset(world.settings.sandbox.preset)
    )
    return {"final_distance": record.trajectory[-1].distance, "epmq": row.epmq}


def _scenario(world: World, sample: dict[str, Any]) -> Scenario:
    info = sample.get("extra_info") or {}
    sid = info.get("scenario_id") if isinstance(info, dict) else None
    if sid not in world.scenarios:
        raise ConfigError(
            f"unknown scenario {sid!r} ({len(world.scenarios)} loaded from "
            f"{world.settings.scenarios}): prepare the rows with empathos verl prepare",
            field="extra_info.scenario_id",
        )
    return world.scenarios[str(sid)]


@register(AGENT_NAME)
class EmpathyAgentLoop(AgentLoopBase):  # type: ignore[misc]  # verl is untyped
    """One EMPA dialogue per rollout (see the module docstring)."""

    def __init__(self, *args: Any, empathos: Any = None, **kwargs: Any) -> None:
        kwargs.pop("tools", None)  # verl hands every agent loop its tool list: we use none
        kwargs.pop("name", None)  # the entry name, when registered from a config file
        super().__init__(*args, **kwargs)
        refuse_mask_rewrites(self.config.get("algorithm"))
        refuse_colocated_reward_model(self.config)
        self.world = world_for(empathos if empathos is not None else self.config.get("empathos"))
        self.response_length = int(self.rollout_config.response_length)
        cap = self.rollout_config.multi_turn.get("max_assistant_turns")
        self.max_turns = int(cap) if cap else None

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        """Run one whole dialogue of the row's scenario; see the module docstring."""
        world = self.world
        scenario = _scenario(world, kwargs)
        seed = rollout_seed(world.settings.seed, kwargs)
        policy = str(self.config.actor_rollout_ref.model.get("path") or "policy")
        env = EmpathyEnv(world.roles, world.settings.sandbox, model_name=policy)
        await env.reset(scenario, seed=seed)
        if env.done:
            reason = env.state.termination.reason if env.state.termination else "unknown"
            raise RuntimeError(f"scenario {scenario.id}: the dialogue could not start: {reason}")
        dialogue = await self._open(list(kwargs["raw_prompt"]), env, scenario)
        full = bool(getattr(self.rollout_config, "full_determinism", False))
        request_id = f"det-{seed}" if full else uuid4().hex  # one id per rollout (sticky)
        while not env.done:
            if self.max_turns is not None and len(dialogue.turns) >= self.max_turns:
                dialogue.truncated = True
                break
            user_line = await self._turn(dialogue, env, request_id, sampling_params)
            if user_line is None or not await self._answer(dialogue, user_line):
                break
        return self._output(dialogue, env, seed)

    async def _open(
        self, messages: list[dict[str, Any]], env: EmpathyEnv, scenario: Scenario
    ) -> _Dialogue:
        """The prompt (system, turn 1's user line) and turn 1's generation prompt, which goes
        into the response (masked) so that turn 1 has a header like every other turn."""
        first = env.state.turns[-1].user if env.state.turns else None
        if not messages or messages[-1].get("content") != first:
            raise ConfigError(
                f"the row's last message is not scenario {scenario.id}'s first user line: "
                "prepare the rows with empathos verl prepare",
                field="prompt",
            )
        full = await self.ct_build_initial_tokens(messages)
        gen = self.continuous_token_builder.render_delta_token_id(
            messages, [], add_generation_prompt=True
        )
        if len(gen) < 2 or full[len(full) - len(gen) :] != gen:
            raise ConfigError(
                f"the chat template's generation prompt has {len(gen)} token(s); the empathos "
                "agent loop needs at least 2 to mark each turn",
                field="actor_rollout_ref.model.path",
            )
        if len(gen) + 1 > self.response_length:
            raise ConfigError("too short for one reply", field="rollout.response_length")
        logprobs = [0.0] * len(gen) if self.rollout_config.calculate_log_probs else None
        self._header_tokens = list(gen[-2:])
        self._turn_end = turn_end_id(self.tokenizer)
        return _Dialogue(list(full), len(full) - len(gen), [0] * len(gen), logprobs, messages,
                         header=len(gen) - 2)  # fmt: skip

    def _ends(self) -> set[int]:
        """The tokens that end a reply: the template's end of turn and the tokenizer's eos."""
        eos = getattr(self.tokenizer, "eos_token_id", None)
        return {self._turn_end} | ({int(eos)} if eos is not None else set())

    async def _turn(
        self, d: _Dialogue, env: EmpathyEnv, request_id: str, sampling_params: dict[str, Any]
    ) -> str | None:
        """Generate the policy's reply, step the environment; the next user line (None: the
        dialogue ended)."""
        room = self.response_length - len(d.mask)
        max_tokens = min(self.world.settings.max_reply_tokens, room)
        started = time.perf_counter()
        out = await self.server_manager.generate(
            request_id=request_id,
            prompt_ids=d.runtime,
            sampling_params={**sampling_params, "max_tokens": max_tokens},
        )
        d.timing["gen"] += time.perf_counter() - started
        merge_server_fields(d.server, dict(out.extra_fields or {}))
        if out.num_preempted is not None:
            d.preempted = (d.preempted or 0) + int(out.num_preempted)
        if out.routed_experts is not None:
            d.routed_experts = out.routed_experts
        ids = [int(x) for x in out.token_ids][:max_tokens]
        if not ids:
            raise RuntimeError(f"the rollout server returned no token (request {request_id})")
        with_lp = d.logprobs is not None
        reply_lp = out.log_probs if with_lp else None
        merged, d.mask, lp = await self.ct_merge_assistant_token(
            d.runtime, ids, d.mask, d.logprobs, assistant_logprobs=reply_lp
        )
        d.runtime, d.logprobs = list(merged.token_ids), lp if with_lp else None
        text = self.tokenizer.decode(ids, skip_special_tokens=True).strip()
        finish = finish_reason(out.stop_reason, ids, max_tokens, self._ends())
        d.open_reply = ids[-1] != self._turn_end
        started = time.perf_counter()
        step = await env.step(text, finish_reason=finish)
        d.timing["env"] += time.perf_counter() - started
        valid = step.info.evaluated and step.info.reward_valid and math.isfinite(step.reward)
        score = float(step.reward) if valid else None
        d.turns.append((d.header, score))
        d.messages.append({"role": "assistant", "content": text})
        if step.done or not step.observation:
            return None
        return str(step.observation[-1].content)

    async def _answer(self, d: _Dialogue, user_line: str) -> bool:
        """Append the user's line and the next generation prompt (masked); False when no
        reply would fit in the response any more (the dialogue is cut there)."""
        previous = list(d.messages)
        messages = [*previous, {"role": "user", "content": user_line}]
        runtime, mask, lp = d.runtime, d.mask, d.logprobs
        if d.open_reply:  # a cut reply is closed as a finished one is: its end-of-turn token
            runtime, mask = [*runtime, self._turn_end], [*mask, 0]
            lp = None if lp is None else [*lp, 0.0]
        merged, mask, lp = await self.ct_merge_context_msg(previous, messages, runtime, mask, lp)
        if len(mask) + 1 > self.response_length:
            d.truncated = True
            return False
        d.runtime, d.mask, d.messages = list(merged.token_ids), mask, messages
        d.logprobs = lp if d.logprobs is not None else None
        d.open_reply = False
        if d.runtime[-2:] != self._header_tokens or any(mask[-2:]):
            raise RuntimeError("verl's token builder did not end the context with the generation "
                               "prompt: the next turn's header cannot be recorded")  # fmt: skip
        d.header = len(mask) - 2  # the generation prompt just written: the next turn's header
        return True

    def _output(self, d: _Dialogue, env: EmpathyEnv, seed: int) -> EmpathyOutput:
        """The sample, with every field verl's own agent loops set (``SingleTurnAgentLoop``,
        ``ToolAgentLoop``): the server's per-call fields carried through (``global_steps``,
        ``min_global_steps``, ``max_global_steps``, ...), ``turn_scores`` and ``tool_rewards``
        (none: the sandbox has no tools), the summed ``num_preempted``."""
        term = env.state.termination
        failed = term is not None and term.kind.value == "error"
        rm, mask = encode_turns(d.mask, _place(d.mask, d.turns), failed=failed)
        scores = [score for _header, score in d.turns]
        extra = {
            **d.server,
            "turn_scores": scores,
            "tool_rewards": [],
            "empathos": {
                "scenario_id": env.state.scenario.id,
                "seed": seed,
                "termination": term.kind.value if term is not None else None,
                "truncated": d.truncated,
                "failed": failed,
                "turns": len(d.turns),
                "unscored_turns": sum(s is None for s in scores),
                **_epm_numbers(env, self.world),
            },
        }
        metrics = AgentLoopMetrics(
            generate_sequences=d.timing["gen"],
            tool_calls=d.timing["env"],
            num_preempted=-1 if d.preempted is None else d.preempted,
        )
        return EmpathyOutput(
            prompt_ids=d.runtime[: d.boundary],
            response_ids=d.runtime[d.boundary :],
            response_mask=mask,
            response_logprobs=d.logprobs,
            routed_experts=d.routed_experts,
            multi_modal_data={},
            mm_processor_kwargs=None,
            mm_processor_output=None,
            reward_score=0.0 if failed else float(sum(s for s in scores if s is not None)),
            num_turns=sum(m.get("role") in ("user", "assistant") for m in d.messages),
            metrics=metrics,
            extra_fields=extra,
            token_scores=rm,
        )
