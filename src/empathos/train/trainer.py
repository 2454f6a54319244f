"""``empathos train``: MAPO on a local causal LM with the sandbox as the environment.

A step: G rollouts for each of a batch of training scenarios in the real sandbox (the roles on
their endpoints), per-turn EPM rewards, advantages from the registry by name, an update of
epochs x minibatches of the PPO clip loss on the policy's own tokens. Held-out evaluation runs
before the first step, every ``eval.every`` steps and after the last. Checkpoints hold the
trainable weights (and an adapter or model directory usable by ``empathos run --policy``),
the optimizer, the scheduler, every random generator, the step and the data position;
``resume`` continues exactly. The run directory holds ``config.yaml``, ``manifest.json``,
``metrics.jsonl`` and (when installed) TensorBoard events.
"""

from __future__ import annotations

import asyncio
import copy
import json
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml

from empathos import __version__
from empathos.epm import EPMConfig
from empathos.errors import ConfigError, EmpathosError
from empathos.llm.local import LocalPolicy
from empathos.records import DialogueRecord
from empathos.records.io import write_text_atomic
from empathos.sandbox import Roles, SandboxConfig
from empathos.scenarios import Scenario
from empathos.train.config import TrainConfig
from empathos.train.policy import LoraSettings, load_trainable_policy
from empathos.train.rollout import Dialogue, Job, collect, mean_turn_reward
from empathos.train.update import (
    Sample,
    UpdateSettings,
    advantages_for,
    policy_update,
    reference_logprobs,
)

__all__ = ["Scorer", "Trainer", "TrainerCallbacks", "sandbox_config"]

Scorer = Callable[[Sequence[DialogueRecord], EPMConfig], float | None]


@dataclass
class TrainerCallbacks:
    """Hooks for the shell: a row of metrics was written; a step started."""

    on_metrics: Callable[[dict[str, Any]], None] | None = None
    on_step_start: Callable[[int], None] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


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
        reward="delta_e" if r.reward == "delta_e" else "distance",
    )


def _stable_seed(*parts: int) -> int:
    return int(np.random.SeedSequence([abs(p) for p in parts]).generate_state(1)[0])


def _rng_state() -> dict[str, Any]:
    state: dict[str, Any] = {
        "torch": torch.get_rng_state(),
        "numpy": np.random.get_state(),
        "python": random.getstate(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    np.random.set_state(state["numpy"])
    random.setstate(state["python"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


class Trainer:
    """One training run; see the module docstring. ``run()`` trains to ``config.steps``."""

    def __init__(
        self,
        config: TrainConfig,
        roles: Roles,
        train_scenarios: Sequence[Scenario],
        eval_scenarios: Sequence[Scenario],
        *,
        scorer: Scorer | None = None,
        callbacks: TrainerCallbacks | None = None,
    ) -> None:
        if not train_scenarios:
            raise ConfigError("no training scenario left after the held-out split", field="cases")
        self.config = config
        self.roles = roles
        self.train_scenarios = list(train_scenarios)
        self.eval_scenarios = list(eval_scenarios)
        self.scorer = scorer
        self.callbacks = callbacks or TrainerCallbacks()
        self.out = Path(config.out)
        self.step = 0
        self.skipped_in_row = 0
        self.policy: LocalPolicy | None = None
        self.reference: Any = None
        self.optimizer: torch.optim.Optimizer | None = None
        self.scheduler: Any = None
        self._tb: Any = None

    # -- set-up ---------------------------------------------------------------------------
    def setup(self, *, resume: bool = False) -> None:
        """Load the policy, build optimizer and scheduler; restore the last checkpoint when
        ``resume``. Writes config.yaml and manifest.json."""
        cfg = self.config
        torch.manual_seed(cfg.seed)
        np.random.seed(cfg.seed % 2**32)
        random.seed(cfg.seed)
        lora = cfg.policy.lora
        settings = (
            LoraSettings(
                r=lora.r,
                alpha=lora.alpha,
                dropout=lora.dropout,
                target_modules=tuple(lora.target_modules),
            )
            if lora is not None
            else None
        )
        self.policy = load_trainable_policy(
            cfg.policy.path,
            lora=settings,
            device=cfg.policy.device,
            bf16=cfg.policy.bf16,
            where="policy.path",
        )
        model = self.policy.model
        if lora is None:
            model.requires_grad_(True)
            if cfg.kl != "none":
                self.reference = copy.deepcopy(model).requires_grad_(False).eval()
        if cfg.policy.gradient_checkpointing:
            model.gradient_checkpointing_enable(
                gradient_checkpointing_kwargs={"use_reentrant": False}
            )
            if lora is not None:
                model.enable_input_require_grads()
        params = [p for p in model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
        from transformers import get_cosine_schedule_with_warmup

        total = cfg.steps * cfg.epochs * cfg.minibatches
        self.scheduler = get_cosine_schedule_with_warmup(
            self.optimizer, round(cfg.warmup * total), total
        )
        self.out.mkdir(parents=True, exist_ok=True)
        if resume:
            self._restore()
        else:
            (self.out / "metrics.jsonl").write_text("", encoding="utf-8")
        write_text_atomic(
            self.out / "config.yaml",
            yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False, allow_unicode=True),
        )
        self._write_manifest("running")
        if cfg.tensorboard:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError:
                self._tb = None
            else:
                self._tb = SummaryWriter(str(self.out / "tensorboard"))

    def _write_manifest(self, status: str) -> None:
        import peft
        import transformers

        assert self.policy is not None
        n_train = sum(p.numel() for p in self.policy.model.parameters() if p.requires_grad)
        n_all = sum(p.numel() for p in self.policy.model.parameters())
        manifest = {
            "kind": "train",
            "status": status,
            "empathos": __version__,
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "peft": peft.__version__,
            "device": str(self.policy.device),
            "dtype": str(self.policy.dtype).replace("torch.", ""),
            "policy": self.policy.name,
            "lora": self.policy.lora,
            "trainable_parameters": n_train,
            "parameters": n_all,
            "step": self.step,
            "roles": self.roles.names(),
            "train_scenarios": [s.id for s in self.train_scenarios],
            "eval_scenarios": [s.id for s in self.eval_scenarios],
            "updated_at": datetime.now(UTC).isoformat(),
        }
        write_text_atomic(self.out / "manifest.json", json.dumps(manifest, indent=2) + "\n")

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
        assert self.policy is not None
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
        """Held-out rollouts under a fixed sampling seed; training's generators are untouched."""
        if not self.eval_scenarios:
            return {}
        with torch.random.fork_rng(devices=[]):
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
        assert self.policy is not None and self.optimizer is not None
        cfg = self.config
        step = self.step + 1
        t0, c0 = time.perf_counter(), time.process_time()
        dialogues = asyncio.run(self._collect(self.jobs_for(step), evaluation=False))
        t_roll, c_roll = time.perf_counter() - t0, time.process_time() - c0
        samples_flat = [
            (i, t, turn) for i, d in enumerate(dialogues) for t, turn in enumerate(d.turns)
        ]
        gen_tokens = sum(len(turn.token_ids) for _, _, turn in samples_flat)
        row: dict[str, Any] = {"step": step, "data_position": step * cfg.rollout.scenarios_per_step}
        row["rollout/dialogues"] = len(dialogues)
        row["rollout/errors"] = sum(d.error is not None for d in dialogues)
        row["rollout/success_rate"] = float(np.mean([d.success for d in dialogues]))
        row["rollout/turns"] = len(samples_flat)
        row["rollout/tokens_per_s"] = gen_tokens / max(t_roll, 1e-9)
        turn_kl = None
        if cfg.kl == "reward" and samples_flat:
            ref = reference_logprobs(self.policy, self.reference, [s for _, _, s in samples_flat],
                                     cfg.micro_batch)  # fmt: skip
            t_max = max(len(d.turns) for d in dialogues)
            turn_kl = np.zeros((len(dialogues), t_max))
            for (i, t, turn), lr in zip(samples_flat, ref, strict=True):
                turn_kl[i, t] = float(sum(turn.logprobs) - float(lr.sum()))
            row["rollout/turn_kl"] = float(turn_kl[turn_kl != 0].mean()) if turn_kl.any() else 0.0
        result, rewards, valid = advantages_for(
            dialogues, cfg.estimator, cfg.advantage, cfg.rollout.reward, turn_kl, cfg.kl_coef
        )
        row["reward/mean_turn"] = float(rewards[valid].mean()) if valid.any() else math.nan
        row["reward/valid_turns"] = int(valid.sum())
        row["reward/unscored_turns"] = int(len(samples_flat) - valid.sum())
        row.update({f"adv/{k}": v for k, v in result.stats.items()})
        adv = np.asarray(result.advantages, dtype=np.float64)
        in_loss = np.asarray(result.loss_mask, dtype=bool)
        samples = [
            Sample(turn, float(adv[i, t]), bool(in_loss[i, t])) for i, t, turn in samples_flat
        ]
        if not any(s.in_loss for s in samples):
            reason = (
                "no turn was scored by the judge in this step"
                if not valid.any()
                else "no turn entered the loss"
            )
            self.skipped_in_row += 1
            row["skipped"] = reason
            self.step = step
            return row
        self.skipped_in_row = 0
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
        t1, c1 = time.perf_counter(), time.process_time()
        try:
            stats = policy_update(self.policy, self.optimizer, self.scheduler, samples, settings,
                                  gen, self.reference)  # fmt: skip
        except torch.OutOfMemoryError:
            raise ConfigError(
                f"the update ran out of memory at micro_batch {cfg.micro_batch}: lower "
                "micro_batch (gradient accumulation keeps the minibatch), enable "
                "policy.gradient_checkpointing, or shorten rollout.max_new_tokens",
                field="micro_batch",
            ) from None
        t_upd, c_upd = time.perf_counter() - t1, time.process_time() - c1
        upd_tokens = sum(
            len(s.turn.token_ids) + len(s.turn.prompt_ids) for s in samples if s.in_loss
        )
        row.update({f"update/{k}": v for k, v in stats.items()})
        row["update/tokens_per_s"] = upd_tokens * cfg.epochs / max(t_upd, 1e-9)
        row["update/lr"] = float(self.scheduler.get_last_lr()[0])
        row["time/rollout_s"] = t_roll
        row["time/update_s"] = t_upd
        # CPU seconds of this process (all threads): on a shared machine wall time says more
        # about the neighbours than about the trainer
        row["time/rollout_cpu_s"] = c_roll
        row["time/update_cpu_s"] = c_upd
        self.step = step
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
        with (self.out / "metrics.jsonl").open("a", encoding="utf-8") as f:
            f.write(json.dumps(clean) + "\n")
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
        assert self.policy is not None and self.optimizer is not None
        root = self.out / "checkpoints"
        target = root / f"step-{self.step:06d}"
        tmp = root / f".tmp-{self.step:06d}"
        tmp.mkdir(parents=True, exist_ok=True)
        model = self.policy.model
        trainable = {
            n: p.detach().cpu().clone() for n, p in model.named_parameters() if p.requires_grad
        }
        torch.save(trainable, tmp / "trainable.pt")
        torch.save(self.optimizer.state_dict(), tmp / "optimizer.pt")
        torch.save(self.scheduler.state_dict(), tmp / "scheduler.pt")
        torch.save(_rng_state(), tmp / "rng.pt")
        export = tmp / ("adapter" if self.policy.lora else "model")
        model.save_pretrained(export)
        if not self.policy.lora:
            self.policy.tokenizer.save_pretrained(export)
        state = {
            "step": self.step,
            "data_position": self.step * self.config.rollout.scenarios_per_step,
            "skipped_in_row": self.skipped_in_row,
        }
        (tmp / "state.json").write_text(json.dumps(state) + "\n", encoding="utf-8")
        if target.exists():
            import shutil

            shutil.rmtree(target)
        tmp.rename(target)
        write_text_atomic(root / "latest", target.name + "\n")
        self._write_manifest("running")
        return target

    def _restore(self) -> None:
        assert self.policy is not None and self.optimizer is not None
        root = self.out / "checkpoints"
        latest = root / "latest"
        if not latest.is_file():
            raise ConfigError(f"no checkpoint to resume from in {root}", field="--resume")
        target = root / latest.read_text(encoding="utf-8").strip()
        state = json.loads((target / "state.json").read_text(encoding="utf-8"))
        trainable = torch.load(target / "trainable.pt", map_location="cpu")
        params = dict(self.policy.model.named_parameters())
        missing = [n for n in trainable if n not in params]
        if missing:
            raise ConfigError(
                f"checkpoint {target} does not match this policy (e.g. {missing[0]})",
                field="--resume",
            )
        with torch.no_grad():
            for name, value in trainable.items():
                params[name].copy_(value.to(params[name].device, params[name].dtype))
        self.optimizer.load_state_dict(torch.load(target / "optimizer.pt", map_location="cpu"))
        self.scheduler.load_state_dict(torch.load(target / "scheduler.pt"))
        _set_rng_state(torch.load(target / "rng.pt", weights_only=False))
        self.step = int(state["step"])
        self.skipped_in_row = int(state.get("skipped_in_row", 0))
        metrics = self.out / "metrics.jsonl"
        if metrics.is_file():  # drop rows written after the checkpoint
            keep = [
                line
                for line in metrics.read_text(encoding="utf-8").splitlines()
                if line.strip() and int(json.loads(line)["step"] or 0) <= self.step
            ]
            metrics.write_text("".join(x + "\n" for x in keep), encoding="utf-8")
