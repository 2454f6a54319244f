"""`empathos train`: MAPO on a local causal LM with the sandbox as the environment.

The shell around :mod:`empathos.train`: reads the config (YAML + flags), builds the role
models, selects training and held-out scenarios, scores evaluations with the leaderboard's
EPM-Q, shows a progress bar. Bad input exits 2 with one line.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from empathos.epm import EPMConfig
from empathos.errors import ConfigError, ScenarioError
from empathos.llm import EndpointConfig, ModelClient, build_model
from empathos.records import DialogueRecord
from empathos.sandbox import Roles
from empathos.scenarios import LoadResult, Scenario, load_scenarios

__all__ = ["build_train_roles", "epmq_scorer", "register", "split_scenarios"]

_OFFLINE_CAPS = {"user": 40, "director": 24, "judge": 12}


def build_train_roles(config: Any) -> Roles:
    """User, judge and (director_mode model) director from ``config.roles``; a missing role
    runs on the bundled offline model."""
    from empathos.llm.roles import build_role_model

    clients: dict[str, ModelClient] = {}
    for name in ("user", "judge", "director"):
        if name == "director" and config.rollout.director_mode == "rules":
            continue
        role = config.roles.get(name)
        if role is None:
            clients[name] = build_model(
                EndpointConfig(kind="offline", max_tokens=_OFFLINE_CAPS[name]), name
            )
            continue
        if role.kind == "local":
            raise ConfigError("kind local plays the policy only", field=f"roles.{name}.kind")
        clients[name] = build_role_model(role, name)
    return Roles(user=clients["user"], judge=clients["judge"], director=clients.get("director"))


def split_scenarios(
    config: Any, loaded: LoadResult | None = None
) -> tuple[list[Scenario], list[Scenario]]:
    """Training and held-out scenarios (held-out: ``eval.cases``, else the last share) of
    ``loaded`` (default: ``config.scenarios`` loaded here). Invalid scenarios are left out;
    naming one as a case is an error that says why it is invalid."""
    loaded = loaded if loaded is not None else load_scenarios(config.scenarios)
    if not loaded.scenarios:
        first = loaded.errors[0] if loaded.errors else None
        raise ScenarioError(first.problem if first else "no scenario found",
                            file=first.file if first else config.scenarios)  # fmt: skip
    pool = loaded.select(config.cases, language=config.language)
    if config.eval.cases is not None:
        held = loaded.select(config.eval.cases, language=config.language)
        held_ids = {s.id for s in held}
        train = [s for s in pool if s.id not in held_ids]
    else:
        n_eval = max(1, round(config.eval.fraction * len(pool))) if len(pool) > 1 else 0
        train, held = pool[: len(pool) - n_eval], pool[len(pool) - n_eval :]
    if not train:
        raise ConfigError("no training scenario left after the held-out split", field="cases")
    return train, held


def epmq_scorer(records: Sequence[DialogueRecord], config: EPMConfig) -> float | None:
    """EPM-Q of the records, as the leaderboard computes it."""
    from empathos.scoring.leaderboard import score_records

    return score_records("eval", records, config).epmq


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def _scenarios(config: Any, err: Console) -> tuple[list[Scenario], list[Scenario]]:
    """The training and held-out scenarios; each invalid scenario of the source (e.g. a
    degenerate P_0) is named on stderr and never trained on."""
    loaded = load_scenarios(config.scenarios)
    train, held = split_scenarios(config, loaded)
    for problem in loaded.errors:
        err.print(f"skipped: {problem.line()}", markup=False, highlight=False, soft_wrap=True)
    return train, held


def _progress(
    err: Console, steps: int
) -> tuple[Progress, TaskID, Callable[[dict[str, Any]], None]]:
    """The progress bar, its task, and the callback that shows each metrics row."""
    progress = Progress(
        TextColumn("[bold]train"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[info]}"),
        TimeElapsedColumn(),
        console=err,
    )
    task = progress.add_task("train", total=steps, info="")

    def on_metrics(row: dict[str, Any]) -> None:
        if "eval/mean_turn_reward" in row:
            progress.console.print(
                f"eval @ step {row['step']}: mean turn reward "
                f"{_fmt(row.get('eval/mean_turn_reward'))}, success "
                f"{_fmt(row.get('eval/success_rate'), 2)}, EPM-Q {_fmt(row.get('eval/epmq'), 1)}",
                markup=False,
                highlight=False,
            )
        if row.get("step", 0) == 0:
            return
        info = (
            f"reward {_fmt(row.get('reward/mean_turn'))} | "
            f"KL {_fmt(row.get('update/approx_kl'), 4)}"
            f" | clip {_fmt(row.get('update/clip_frac'), 3)} | "
            f"{_fmt(row.get('rollout/tokens_per_s'), 1)} tok/s rollout"
        )
        if "skipped" in row:
            info = f"skipped: {row['skipped']}"
            progress.console.print(f"step {row['step']} skipped: {row['skipped']}", markup=False)
        progress.update(task, completed=row["step"], info=info)

    return progress, task, on_metrics


def _train(config_path: Path | None, overrides: dict[str, Any], resume: bool) -> None:
    from empathos.train import TrainerCallbacks, build_trainer, load_train_config
    from empathos.train.checkpoint import resumed_config

    err = Console(stderr=True)
    if resume:  # the run's own config.yaml; a config file or flags may not contradict it
        config = resumed_config(config_path, overrides)
    else:
        config = load_train_config(config_path, overrides)
    if not resume and (config.out / "checkpoints" / "latest").is_file():
        raise ConfigError(
            f"{config.out} holds a training run: pass --resume to continue it, or --out",
            field="--out",
        )
    roles = build_train_roles(config)
    train, held = _scenarios(config, err)
    progress, task, on_metrics = _progress(err, config.steps)
    trainer = build_trainer(
        config, roles, train, held, resume=resume, scorer=epmq_scorer,
        callbacks=TrainerCallbacks(
            on_metrics=on_metrics,
            on_warning=lambda text: err.print(f"warning: {text}", markup=False, soft_wrap=True),
        ),
    )  # fmt: skip
    err.print(
        f"train: {len(train)} scenarios, held out: {len(held)} | estimator {config.estimator} | "
        f"{config.rollout.scenarios_per_step} x {config.rollout.rollouts_per_scenario} rollouts "
        f"per step | out {config.out}",
        markup=False,
        highlight=False,
    )
    progress.update(task, completed=trainer.step)
    with progress:
        trainer.run()
    err.print(f"done: {config.out / 'metrics.jsonl'}", markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    """Mount ``train`` on the main app."""

    @app.command("train")
    def train_cmd(
        config: Annotated[
            Path | None, typer.Option("--config", help="Train config YAML (see docs/train.md).")
        ] = None,
        policy: Annotated[
            str | None, typer.Option(help="HF causal LM directory (default: bundled SmolLM2).")
        ] = None,
        out: Annotated[Path | None, typer.Option(help="Run directory.")] = None,
        steps: Annotated[int | None, typer.Option(min=1, help="Policy updates.")] = None,
        estimator: Annotated[
            str | None, typer.Option(help="Advantage estimator (mapo_dialogue, grpo, ...).")
        ] = None,
        scenarios_per_step: Annotated[
            int | None, typer.Option(min=1, help="Scenarios per step.")
        ] = None,
        rollouts: Annotated[
            int | None, typer.Option(min=1, help="G: rollouts per scenario.")
        ] = None,
        max_turns: Annotated[int | None, typer.Option(min=1, help="Turn cap.")] = None,
        max_new_tokens: Annotated[int | None, typer.Option(min=1, help="Tokens per reply.")] = None,
        lr: Annotated[float | None, typer.Option(help="Peak learning rate.")] = None,
        seed: Annotated[int | None, typer.Option(help="Seed.")] = None,
        eval_every: Annotated[
            int | None, typer.Option(min=1, help="Evaluate every N steps.")
        ] = None,
        kl: Annotated[str | None, typer.Option(help="none, loss or reward.")] = None,
        resume: Annotated[
            bool,
            typer.Option(
                help="Continue the run in --out from its last checkpoint, with the run's own "
                "config (flags or a --config that contradict it are refused)."
            ),
        ] = False,
    ) -> None:
        """Train a local causal LM with MAPO (or a baseline) in the sandbox."""
        overrides = {
            "policy.path": policy,
            "out": out,
            "steps": steps,
            "estimator": estimator,
            "rollout.scenarios_per_step": scenarios_per_step,
            "rollout.rollouts_per_scenario": rollouts,
            "rollout.max_turns": max_turns,
            "rollout.max_new_tokens": max_new_tokens,
            "lr": lr,
            "seed": seed,
            "eval.every": eval_every,
            "kl": kl,
        }
        _train(config, overrides, resume)
