"""EMPA dialogues as TRL 1.16's ``rollout_func``: one completion is one whole dialogue.

``GRPOTrainer(..., rollout_func=empa_rollout_func(scenarios, roles))`` calls the function with
the prompts of its generation batch (TRL's sampler has already repeated each prompt
``num_generations`` times, consecutively) and the trainer. Each prompt is a scenario id; each
row becomes one dialogue played by the sandbox's own turn loop
(:class:`~empathos.sandbox.EmpathyEnv`: user, director and judge on the given role endpoints),
the policy's turns sampled from the trainer's model (:mod:`.samplers`). All dialogues of a
call advance together, one batched generation per round.

What each key holds, per row (token layout: :mod:`.tokens`):

- ``prompt_ids``, ``completion_ids``: the opening, and the whole dialogue after it;
- ``logprobs``: the sampling log-prob of each completion token (0 on environment tokens);
- ``env_mask``: 1 on the policy's tokens, 0 on the user's lines and template tokens;
- ``turn_rewards``: one entry per policy turn, the sandbox's reward (``SandboxConfig.reward``:
  the decrease of the EPM distance by default), None for an unscored turn;
- ``turn_spans``: ``[start, end)`` of each turn's reply in ``completion_ids``;
- ``outcome``: d(P_0) - d(P_last scored), the dialogue's EPM progress (None: nothing scored);
- ``dialogue_error``: why the dialogue failed (None unless it ended as an error);
- ``scenario_id``, ``termination`` (the ending's kind, or ``"truncated"``), ``seed``,
  ``dialogue_record`` (the :class:`~empathos.records.DialogueRecord`).

A dialogue stops early, as ``truncated``, when its next turn would not fit in the trainer's
``max_completion_length`` (it counts the whole dialogue). A dialogue that cannot start (the
judge gave no initial deficit, say) is one masked end-of-sequence token with no turns and a
``dialogue_error``.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from empathos.errors import ConfigError
from empathos.integrations.trl.samplers import (
    ReplySampler,
    needs_lockstep,
    round_plan,
    sampler_for,
    trainer_tokenizer,
)
from empathos.integrations.trl.tokens import DialogueTokens, next_turn_ids, opening_ids
from empathos.sandbox import EmpathyEnv, EnvStep, Roles, SandboxConfig, state_packet
from empathos.scenarios import Scenario

__all__ = ["EmpaRollout", "empa_rollout_func", "scenario_rows"]


@dataclass
class _Game:
    """One dialogue in progress."""

    env: EmpathyEnv
    seed: int
    tokens: DialogueTokens | None = None
    rewards: list[float | None] = field(default_factory=list)
    start: float | None = None
    last: float | None = None
    truncated: bool = False

    @property
    def live(self) -> bool:
        return self.tokens is not None and not self.env.done and not self.truncated


def scenario_rows(scenarios: Iterable[Scenario]) -> list[dict[str, str]]:
    """Dataset rows for the trainer, one per scenario: ``{"prompt": scenario id}``."""
    return [{"prompt": s.id} for s in scenarios]


def _eos_ids(tokenizer: Any, trainer: Any) -> set[int]:
    ids = {int(tokenizer.eos_token_id)}
    ids.update(int(x) for x in getattr(trainer, "eos_token_ids", []) or [])
    return ids


class EmpaRollout:
    """The rollout function (see the module docstring); build it with
    :func:`empa_rollout_func`."""

    def __init__(
        self,
        scenarios: Mapping[str, Scenario],
        roles: Roles,
        sandbox: SandboxConfig,
        *,
        max_reply_tokens: int,
        seed: int,
    ) -> None:
        self.scenarios = dict(scenarios)
        self.roles = roles
        self.sandbox = sandbox
        self.max_reply_tokens = max_reply_tokens
        self.seed = seed

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        """Play one dialogue per prompt; TRL's ``rollout_func`` contract."""
        found = [self._scenario(p) for p in prompts]
        step = int(trainer.state.global_step)
        rank = int(trainer.accelerator.process_index)
        train = 1 if trainer.model.training else 0
        seeds = [
            int(np.random.SeedSequence([self.seed, step, rank, train, i]).generate_state(1)[0])
            for i in range(len(prompts))
        ]
        budget = int(trainer.max_completion_length)
        if budget < 2:
            raise ConfigError("must leave room for a reply", field="max_completion_length")
        games = asyncio.run(self._play(found, seeds, trainer, sampler_for(trainer), budget))
        return self._output(games, trainer_tokenizer(trainer))

    def _scenario(self, prompt: Any) -> Scenario:
        sid = prompt if isinstance(prompt, str) else None
        if sid is None or sid not in self.scenarios:
            known = ", ".join(sorted(self.scenarios)[:5])
            raise ConfigError(
                f"{prompt!r} is not a scenario id of the rollout function (e.g. {known}): "
                "build the dataset with empathos.integrations.trl.scenario_rows",
                field="prompt",
            )
        return self.scenarios[sid]

    async def _play(
        self,
        scenarios: Sequence[Scenario],
        seeds: Sequence[int],
        trainer: Any,
        sampler: ReplySampler,
        budget: int,
    ) -> list[_Game]:
        tokenizer = trainer_tokenizer(trainer)
        name = str(getattr(trainer.model, "name_or_path", "") or "trl-policy")
        games = [_Game(EmpathyEnv(self.roles, self.sandbox, model_name=name), s) for s in seeds]
        await asyncio.gather(
            *(g.env.reset(sc, seed=g.seed) for g, sc in zip(games, scenarios, strict=True))
        )
        for g in games:
            if not g.env.done:
                messages = [m.model_dump() for m in g.env.observation()]
                g.tokens = DialogueTokens(opening_ids(tokenizer, messages))
                g.start = g.last = state_packet(g.env.state).distance
        eos = _eos_ids(tokenizer, trainer)
        # fillers only where an engine shared by several processes hands back equal shares
        lockstep = needs_lockstep(trainer)
        while True:
            active = [g for g in games if g.live]
            rooms = [min(self.max_reply_tokens, budget - len(_tok(g).completion_ids))
                     for g in active]  # fmt: skip
            go, cap = round_plan(trainer, len(active), max(rooms, default=1))
            if not go:
                break
            filler = len(games) - len(active) if lockstep else 0
            await self._round(active, rooms, cap, sampler, tokenizer, eos, budget, filler)
        return games

    async def _round(
        self,
        active: list[_Game],
        rooms: list[int],
        cap: int,
        sampler: ReplySampler,
        tokenizer: Any,
        eos: set[int],
        budget: int,
        filler: int,
    ) -> None:
        """One turn of every active dialogue: sample the replies (``cap``: the round's cap,
        agreed over the processes; each reply is then cut to its dialogue's ``room``), step
        the environments, append the next user lines. ``filler`` one-token prompts are sent
        along, and their replies dropped."""
        pad = [[min(eos)]] * filler
        samples = sampler([_tok(g).context for g in active] + pad, cap)[: len(active)]
        texts, ends = [], []
        for g, s, room in zip(active, samples, rooms, strict=True):
            ids, lps = s.ids[:room], s.logprobs[:room]
            _tok(g).add_reply(ids, lps)
            closed = bool(ids) and ids[-1] in eos
            texts.append(tokenizer.decode(ids, skip_special_tokens=True).strip())
            ends.append(ids[-1] if closed else None)
        steps = await asyncio.gather(
            *(
                g.env.step(text, finish_reason="stop" if end is not None else "length")
                for g, text, end in zip(active, texts, ends, strict=True)
            )
        )
        for g, st, end in zip(active, steps, ends, strict=True):
            self._after(g, st, tokenizer, end, budget)

    @staticmethod
    def _after(g: _Game, st: EnvStep, tokenizer: Any, end: int | None, budget: int) -> None:
        info = st.info
        scored = info.evaluated and info.reward_valid and math.isfinite(st.reward)
        g.rewards.append(float(st.reward) if scored else None)
        if scored and info.packet is not None:
            g.last = info.packet.distance
        if st.done or not st.observation or st.observation[-1].role != "user":
            return
        tokens = _tok(g)
        ids = next_turn_ids(tokenizer, st.observation[-1].content, end)
        if len(tokens.completion_ids) + len(ids) + 1 > budget:
            g.truncated = True
            return
        tokens.add_context(ids)

    def _output(self, games: Sequence[_Game], tokenizer: Any) -> dict[str, list[Any]]:
        out: dict[str, list[Any]] = {}
        eos = int(tokenizer.eos_token_id)
        for g in games:
            tokens = g.tokens or DialogueTokens([eos])
            if not tokens.completion_ids:
                tokens.add_context([eos])
            record = g.env.record()
            term = g.env.state.termination
            error = None
            if g.tokens is None or (term is not None and term.kind.value == "error"):
                error = (term.reason if term is not None else None) or "the dialogue failed"
            ending = "truncated" if g.truncated else (term.kind.value if term else "unfinished")
            scored = any(r is not None for r in g.rewards)
            progress = g.start - g.last if g.start is not None and g.last is not None else None
            row = {
                "prompt_ids": tokens.prompt_ids,
                "completion_ids": tokens.completion_ids,
                "logprobs": tokens.logprobs,
                "env_mask": tokens.env_mask,
                "turn_rewards": list(g.rewards),
                "turn_spans": [list(s) for s in tokens.spans],
                "outcome": progress if scored else None,
                "dialogue_error": error,
                "scenario_id": record.scenario_id,
                "termination": ending,
                "seed": g.seed,
                "dialogue_record": record,
            }
            for key, value in row.items():
                out.setdefault(key, []).append(value)
        return out


def _tok(g: _Game) -> DialogueTokens:
    if g.tokens is None:
        raise RuntimeError("a dialogue that did not start has no tokens")
    return g.tokens


def empa_rollout_func(
    scenarios: Iterable[Scenario],
    roles: Roles,
    sandbox: SandboxConfig | None = None,
    *,
    max_reply_tokens: int = 256,
    seed: int = 0,
) -> EmpaRollout:
    """A ``rollout_func`` for TRL's ``GRPOTrainer`` / :class:`MAPOTrainer` playing EMPA
    dialogues of ``scenarios`` with ``roles`` (user, judge, optional director) under
    ``sandbox`` (default settings when None); each reply at most ``max_reply_tokens``;
    environment seeds drawn from ``seed``, TRL's step, the process and the row."""
    if max_reply_tokens < 1:
        raise ConfigError("must be at least 1", field="max_reply_tokens")
    by_id = {s.id: s for s in scenarios}
    if not by_id:
        raise ConfigError("no scenario given", field="scenarios")
    config = sandbox or SandboxConfig()
    EmpathyEnv(roles, config)  # a missing role fails now, not on the first training step
    return EmpaRollout(by_id, roles, config, max_reply_tokens=max_reply_tokens, seed=seed)
