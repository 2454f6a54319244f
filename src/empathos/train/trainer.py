"""``empathos train``: MAPO on a local causal LM with the sandbox as the environment.

A step: G rollouts for each of a batch of training scenarios in the real sandbox (the roles on
their endpoints), per-turn EPM rewards, advantages from the registry by name, an update of
epochs x minibatches of the PPO clip loss on the policy's own tokens, its "old"
log-probabilities recomputed by the policy's forward pass. Held-out evaluation runs before
the first step, every ``eval.every`` steps and after the last, and leaves every random
generator as it found it. Checkpoints (:mod:`empathos.train.checkpoint`) hold the trainable
weights (and an adapter or model directory usable by ``empathos run --policy``), the
optimizer, the scheduler, every random generator, the step and the data position; a resumed
run continues exactly. The run directory holds ``config.yaml``, ``manifest.json``,
``metrics.jsonl`` and (when installed) TensorBoard events.

:func:`build_trainer` builds the parts (:func:`~empathos.train.parts.build_parts`), restores
the last checkpoint when resuming, and returns a :class:`Trainer` ready to ``run()``.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml

from empathos.epm import EPMConfig
from empathos.errors import ConfigError, EmpathosError
from empathos.journal import TornLine, append_line, read_lines
from empathos.llm.offline.model_thread import run_on_model_thread
from empathos.records import DialogueRecord
from empathos.records.io import write_text_atomic
from empathos.sandbox import Roles, SandboxConfig
from empathos.scenarios import Scenario
from empathos.train.checkpoint import (
    RunState,
    preserved_rng,
    restore_checkpoint,
    save_checkpoint,
)
from empathos.train.config import TrainConfig
from empathos.train.manifest import data_files, write_train_manifest
from empathos.train.parts import TrainParts, build_parts
from empathos.train.rollout import Dialogue, Job, collect, mean_turn_reward
from empathos.train.update import (
    Sample,
    UpdateSettings,
    advantages_for,
    forward_logprobs,
    policy_update,
    reference_logprobs,
)

__all__ = [
    "Scorer",
    "Trainer",
    "TrainerCallbacks",
    "build_trainer",
    "drop_rows_after",
    "sandbox_config",
]

Scorer = Callable[[Sequence[DialogueRecord], EPMConfig], float | None]


@dataclass
class TrainerCallbacks:
    """Hooks for the shell: a row of metrics was written; a step started."""

    on_metrics: Callable[[dict[str, Any]], None] | None = None
    on_step_start: Callable[[int], None] | None = None
    on_warning: Callable[[str], None] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def drop_rows_after(metrics: Path, step: int) -> TornLine | None:
    """Keep the rows of ``metrics`` up to ``step`` (a resume from that step's checkpoint);
    a torn last line is set aside (:func:`empathos.journal.mend`) and returned."""
    lines, torn = read_lines(metrics)
    keep = [text for _, text in lines if int(json.loads(text)["step"] or 0) <= step]
    if metrics.is_file():
        write_text_atomic(metrics, "".join(x.rstrip("\n") + "\n" for x in keep))
    return torn


def sandbox_config(config: TrainConfig, *, max_turns: int | None = None) -> SandboxConfig:
    """The sandbox settings of training (or evaluation) dialogues."""
    r = config.rollout
    cap = max_turns or r.max_turns
    return SandboxConfig(
        preset=r.epm_preset,
        max_turns=cap,
        min_turns=min(r.min_turns, cap),
        eval_every=1,
        system_prompt=r.system_prompt,
        director=r.director_mode,
        reward=r.reward if r.reward in ("delta_e", "sage_emotion", "sage_outcome") else "distance",
        sage_data=r.sage_data,
    )


def _stable_seed(*parts: int) -> int:
    return int(np.random.SeedSequence([abs(p) for p in parts]).generate_state(1)[0])


class Trainer:
    """One training run over ready-made parts; ``run()`` trains to ``config.steps``.

    Built from :func:`build_trainer` (or directly, with parts of your own): usable once
    constructed. ``start`` is where a resumed run stands (None: a new run, whose
    ``metrics.jsonl`` starts empty). Writes ``config.yaml`` and ``manifest.json``."""

    def __init__(
        self,
        config: TrainConfig,
        roles: Roles,
        train_scenarios: Sequence[Scenario],
        eval_scenarios: Sequence[Scenario],
        parts: TrainParts,
        *,
        start: RunState | None = None,
        scorer: Scorer | None = None,
        callbacks: TrainerCallbacks | None = None,
    ) -> None:
        if not train_scenarios:
            raise ConfigError("no training scenario left after the held-out split", field="cases")
        self.config = config
        self.roles = roles
        self.train_scenarios = list(train_scenarios)
        self.eval_scenarios = list(eval_scenarios)
        self.parts = parts
        self.policy = parts.policy
        self.scorer = scorer
        self.callbacks = callbacks or TrainerCallbacks()
        self.out = Path(config.out)
        self.step = start.step if start is not None else 0
        self.skipped_in_row = start.skipped_in_row if start is not None else 0
        self.out.mkdir(parents=True, exist_ok=True)
        if start is None:
            (self.out / "metrics.jsonl").write_text("", encoding="utf-8")
        else:
            self._drop_rows_after(self.step)
        self.data_files = data_files(config)
        dumped = yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False, allow_unicode=True)
        write_text_atomic(self.out / "config.yaml", dumped)
        self._write_manifest("running")
        self._tb = _tensorboard(self.out) if config.tensorboard else None

    def _drop_rows_after(self, step: int) -> None:
        """Metric rows written after the checkpoint a run resumes from (a last line cut
        short by a crash is set aside first, and named)."""
        torn = drop_rows_after(self.out / "metrics.jsonl", step)
        if torn is not None and self.callbacks.on_warning is not None:
            self.callbacks.on_warning(torn.message())

    def _write_manifest(self, status: str) -> None:
        write_train_manifest(
            self.out, status, self.policy, step=self.step, roles=self.roles.names(),
            train=self.train_scenarios, held_out=self.eval_scenarios, data=self.data_files,
        )  # fmt: skip

    # -- data ------------------------------------------------------------------------------
    def jobs_for(self, step: int) -> list[Job]:
        """The dialogues of training step ``step`` (1-based): a deterministic function of the
        seed and the data position (step - 1) * scenarios_per_step."""
        cfg = self.config
        k, g = cfg.rollout.scenarios_per_step, cfg.rollout.rollouts_per_scenario
        n = len(self.train_scenarios)
        jobs = []
        for j in range(k):
            pos = (step - 1) * k + j
            epoch, idx = divmod(pos, n)
            perm = np.random.default_rng(_stable_seed(cfg.seed, epoch)).permutation(n)
            scenario = self.train_scenarios[int(perm[idx])]
            jobs += [Job(scenario, j, _stable_seed(cfg.seed, step, j, r)) for r in range(g)]
        return jobs

    def eval_jobs(self) -> list[Job]:
        """The held-out dialogues (the same at every evaluation)."""
        g = self.config.eval.rollouts_per_scenario
        return [
            Job(s, u, _stable_seed(self.config.eval.seed, u, r))
            for u, s in enumerate(self.eval_scenarios)
            for r in range(g)
        ]

    async def _collect(self, jobs: Sequence[Job], *, evaluation: bool) -> list[Dialogue]:
        cfg = self.config
        r = cfg.rollout
        max_turns = (cfg.eval.max_turns or r.max_turns) if evaluation else r.max_turns
        temperature = (
            cfg.eval.temperature if evaluation and cfg.eval.temperature is not None
            else r.temperature
        )  # fmt: skip
        return await collect(
            self.policy,
            self.roles,
            sandbox_config(cfg, max_turns=max_turns),
            jobs,
            max_new_tokens=r.max_new_tokens,
            temperature=temperature,
            top_p=r.top_p,
            generation_batch=r.generation_batch,
        )

    # -- evaluation ------------------------------------------------------------------------
    def evaluate(self) -> dict[str, Any]:
        """Held-out rollouts under a fixed sampling seed. Every generator it touches (torch's
        on the CPU and each CUDA device, numpy's, Python's: a retried call draws its jitter
        there) is left as it found it, so evaluating changes no training rollout."""
        if not self.eval_scenarios:
            return {}
        with preserved_rng():
            torch.manual_seed(self.config.eval.seed)
            dialogues = asyncio.run(self._collect(self.eval_jobs(), evaluation=True))
        records = [d.record for d in dialogues if d.record is not None]
        out: dict[str, Any] = {
            "eval/mean_turn_reward": mean_turn_reward(dialogues, self.config.rollout.reward),
            "eval/success_rate": float(np.mean([d.success for d in dialogues])),
            "eval/dialogues": len(dialogues),
            "eval/errors": sum(d.error is not None for d in dialogues),
            "eval/mean_reply_tokens": float(
                np.mean([len(t.token_ids) for d in dialogues for t in d.turns] or [0])
            ),
        }
        if self.scorer is not None and records:
            epmq = self.scorer(records, sandbox_config(self.config).epm())
            out["eval/epmq"] = epmq
        return out

    # -- one step --------------------------------------------------------------------------
    def train_step(self) -> dict[str, Any]:
        """Roll out, compute advantages, update; returns the step's metrics row."""
        cfg = self.config
        step = self.step + 1
        t0, c0 = time.perf_counter(), time.process_time()
        dialogues = asyncio.run(self._collect(self.jobs_for(step), evaluation=False))
        t_roll, c_roll = time.perf_counter() - t0, time.process_time() - c0
        flat = [(i, t, turn) for i, d in enumerate(dialogues) for t, turn in enumerate(d.turns)]
        row = _rollout_row(step, cfg, dialogues, len(flat), t_roll)
        row["time/rollout_cpu_s"] = c_roll
        # the policy's own log-probabilities (the KL-in-reward needs them for every turn)
        old = self._own_logprobs(flat) if cfg.kl == "reward" and flat else None
        turn_kl = self._turn_kl(dialogues, flat, old, row) if old is not None else None
        result, rewards, valid = advantages_for(
            dialogues, cfg.estimator, cfg.advantage, cfg.rollout.reward, turn_kl, cfg.kl_coef
        )
        row["reward/mean_turn"] = float(rewards[valid].mean()) if valid.any() else math.nan
        row["reward/valid_turns"] = int(valid.sum())
        row["reward/unscored_turns"] = int(len(flat) - valid.sum())
        row.update({f"adv/{k}": v for k, v in result.stats.items()})
        adv = np.asarray(result.advantages, dtype=np.float64)
        in_loss = np.asarray(result.loss_mask, dtype=bool)
        samples = [
            Sample(turn, float(adv[i, t]), bool(in_loss[i, t]),
                   None if old is None else old[k])
            for k, (i, t, turn) in enumerate(flat)
        ]  # fmt: skip
        self.step = step
        if not any(s.in_loss for s in samples):
            self.skipped_in_row += 1
            row["skipped"] = (
                "no turn was scored by the judge in this step"
                if not valid.any()
                else "no turn entered the loss"
            )
            return row
        self.skipped_in_row = 0
        row.update(self._update(step, samples))
        return row

    def _own_logprobs(self, flat: Sequence[tuple[int, int, Any]]) -> list[torch.Tensor]:
        self.policy.model.train()  # the mode of the update's forward pass
        turns = [turn for _, _, turn in flat]
        return forward_logprobs(self.policy, self.policy.model, turns, self.config.micro_batch)

    def _turn_kl(
        self,
        dialogues: Sequence[Dialogue],
        flat: Sequence[tuple[int, int, Any]],
        own: Sequence[torch.Tensor],
        row: dict[str, Any],
    ) -> np.ndarray:
        """Each turn's summed k1 KL against the reference, (B, T); its mean goes in ``row``."""
        turns = [turn for _, _, turn in flat]
        ref = reference_logprobs(self.policy, self.parts.reference, turns, self.config.micro_batch)
        turn_kl = np.zeros((len(dialogues), max(len(d.turns) for d in dialogues)))
        for (i, t, _), lp, lr in zip(flat, own, ref, strict=True):
            turn_kl[i, t] = float(lp.sum() - lr.sum())
        row["rollout/turn_kl"] = float(turn_kl[turn_kl != 0].mean()) if turn_kl.any() else 0.0
        return turn_kl

    def _update(self, step: int, samples: Sequence[Sample]) -> dict[str, Any]:
        """The PPO update of one step; its metrics."""
        cfg = self.config
        settings = UpdateSettings(
            epochs=cfg.epochs,
            minibatches=cfg.minibatches,
            micro_batch=cfg.micro_batch,
            grad_clip=cfg.grad_clip,
            loss=cfg.loss.model_copy(update={"kl_coef": cfg.kl_coef if cfg.kl == "loss" else 0.0}),
            kl_in_loss=cfg.kl == "loss",
        )
        gen = torch.Generator()
        gen.manual_seed(_stable_seed(cfg.seed, step, 7))
        parts = self.parts
        t1, c1 = time.perf_counter(), time.process_time()
        try:
            # on the model thread, as the rollouts: one thread forms torch's OpenMP team
            stats = run_on_model_thread(
                policy_update, self.policy, parts.optimizer, parts.scheduler, samples, settings,
                gen, parts.reference,
            )  # fmt: skip
        except torch.OutOfMemoryError:
            raise ConfigError(
                f"the update ran out of memory at micro_batch {cfg.micro_batch}: lower "
                "micro_batch (gradient accumulation keeps the minibatch), enable "
                "policy.gradient_checkpointing, or shorten rollout.max_new_tokens",
                field="micro_batch",
            ) from None
        t_upd, c_upd = time.perf_counter() - t1, time.process_time() - c1
        tokens = sum(len(s.turn.token_ids) + len(s.turn.prompt_ids) for s in samples if s.in_loss)
        row: dict[str, Any] = {f"update/{k}": v for k, v in stats.items()}
        row["update/tokens_per_s"] = tokens * cfg.epochs / max(t_upd, 1e-9)
        row["update/lr"] = float(parts.scheduler.get_last_lr()[0])
        row["time/update_s"] = t_upd
        # CPU seconds of this process (all threads): on a shared machine wall time says more
        # about the neighbours than about the trainer
        row["time/update_cpu_s"] = c_upd
        return row

    # -- the loop --------------------------------------------------------------------------
    def run(self) -> list[dict[str, Any]]:
        """Train from the current step to ``config.steps``; returns the rows written."""
        cfg = self.config
        rows: list[dict[str, Any]] = []
        if self.step == 0:
            rows.append(self._log({"step": 0, **self.evaluate()}))
        while self.step < cfg.steps:
            if self.callbacks.on_step_start is not None:
                self.callbacks.on_step_start(self.step + 1)
            row = self.train_step()
            if self.step % cfg.eval.every == 0 or self.step == cfg.steps:
                row.update(self.evaluate())
            rows.append(self._log(row))
            if self.step % cfg.checkpoint_every == 0 or self.step == cfg.steps:
                self.save_checkpoint()
            if self.skipped_in_row > cfg.max_skipped:
                self._write_manifest("failed")
                raise EmpathosError(
                    f"{self.skipped_in_row} steps in a row were skipped (last: "
                    f"{row.get('skipped')}); see {self.out / 'metrics.jsonl'}",
                    field="roles.judge",
                )
        self._write_manifest("completed")
        if self._tb is not None:
            self._tb.close()
        return rows

    def _log(self, row: dict[str, Any]) -> dict[str, Any]:
        clean = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
        append_line(self.out / "metrics.jsonl", json.dumps(clean))
        if self._tb is not None:
            for k, v in clean.items():
                if isinstance(v, int | float) and not isinstance(v, bool) and k != "step":
                    self._tb.add_scalar(k, v, int(row["step"]))
        if self.callbacks.on_metrics is not None:
            self.callbacks.on_metrics(clean)
        return clean

    # -- checkpoints -----------------------------------------------------------------------
    def save_checkpoint(self) -> Path:
        """Write ``checkpoints/step-NNNNNN`` and point ``checkpoints/latest`` at it."""
        state = RunState(step=self.step, skipped_in_row=self.skipped_in_row)
        position = self.step * self.config.rollout.scenarios_per_step
        target = save_checkpoint(self.parts, self.out / "checkpoints", state, position)
        self._write_manifest("running")
        return target


def _rollout_row(
    step: int, cfg: TrainConfig, dialogues: Sequence[Dialogue], turns: int, t_roll: float
) -> dict[str, Any]:
    """A step's metrics row, with what its rollouts say."""
    tokens = sum(len(turn.token_ids) for d in dialogues for turn in d.turns)
    return {
        "step": step,
        "data_position": step * cfg.rollout.scenarios_per_step,
        "rollout/dialogues": len(dialogues),
        "rollout/errors": sum(d.error is not None for d in dialogues),
        "rollout/success_rate": float(np.mean([d.success for d in dialogues])),
        "rollout/turns": turns,
        "rollout/tokens_per_s": tokens / max(t_roll, 1e-9),
        "time/rollout_s": t_roll,
    }


def _tensorboard(out: Path) -> Any:
    """A TensorBoard writer under ``out``, or None when TensorBoard is not installed."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        return None
    return SummaryWriter(str(out / "tensorboard"))


def build_trainer(
    config: TrainConfig,
    roles: Roles,
    train_scenarios: Sequence[Scenario],
    eval_scenarios: Sequence[Scenario],
    *,
    resume: bool = False,
    scorer: Scorer | None = None,
    callbacks: TrainerCallbacks | None = None,
) -> Trainer:
    """A trainer ready to run: its parts built from ``config`` (seeded, the policy loaded),
    and, when ``resume``, the last checkpoint of ``config.out`` restored into them."""
    if not train_scenarios:
        raise ConfigError("no training scenario left after the held-out split", field="cases")
    parts = build_parts(config)
    start = restore_checkpoint(parts, Path(config.out) / "checkpoints") if resume else None
    return Trainer(config, roles, train_scenarios, eval_scenarios, parts, start=start,
                   scorer=scorer, callbacks=callbacks)  # fmt: skip
