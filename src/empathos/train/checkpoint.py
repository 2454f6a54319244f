"""A training run's state on disk: checkpoints, every random generator, and resuming.

A checkpoint (``checkpoints/step-NNNNNN``) holds the trainable weights, the optimizer, the
schedule, every generator (:func:`rng_state`), the step, and an adapter or model directory
that ``empathos run --policy`` loads. :func:`resumed_config` gives the run's own config for
``--resume`` and refuses flags or a config file that contradict it.
"""

from __future__ import annotations

import contextlib
import json
import random
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from empathos.errors import ConfigError
from empathos.records.io import write_text_atomic
from empathos.train.config import TrainConfig, load_train_config
from empathos.train.parts import TrainParts

__all__ = [
    "RunState",
    "preserved_rng",
    "restore_checkpoint",
    "resumed_config",
    "rng_state",
    "save_checkpoint",
    "set_rng_state",
]


@dataclass(frozen=True)
class RunState:
    """Where a run stands: the last step done and the skipped steps in a row before it."""

    step: int = 0
    skipped_in_row: int = 0


def rng_state() -> dict[str, Any]:
    """Every generator the trainer touches: torch's (and CUDA's, per device), numpy's and
    Python's global ones."""
    state: dict[str, Any] = {
        "torch": torch.get_rng_state(),
        "numpy": np.random.get_state(),
        "python": random.getstate(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: Mapping[str, Any]) -> None:
    """Put back what :func:`rng_state` returned."""
    torch.set_rng_state(state["torch"])
    np.random.set_state(state["numpy"])
    random.setstate(state["python"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


@contextlib.contextmanager
def preserved_rng() -> Iterator[None]:
    """Every generator of :func:`rng_state` as it was before the block, whatever the block
    drew or seeded (``torch.manual_seed`` reseeds CUDA too)."""
    saved = rng_state()
    try:
        yield
    finally:
        set_rng_state(saved)


def save_checkpoint(parts: TrainParts, root: Path, state: RunState, data_position: int) -> Path:
    """Write ``root/step-NNNNNN`` (via a temporary folder) and point ``root/latest`` at it."""
    target = root / f"step-{state.step:06d}"
    tmp = root / f".tmp-{state.step:06d}"
    tmp.mkdir(parents=True, exist_ok=True)
    model = parts.policy.model
    trainable = {
        n: p.detach().cpu().clone() for n, p in model.named_parameters() if p.requires_grad
    }
    torch.save(trainable, tmp / "trainable.pt")
    torch.save(parts.optimizer.state_dict(), tmp / "optimizer.pt")
    torch.save(parts.scheduler.state_dict(), tmp / "scheduler.pt")
    torch.save(rng_state(), tmp / "rng.pt")
    export = tmp / ("adapter" if parts.policy.lora else "model")
    model.save_pretrained(export)
    if not parts.policy.lora:
        parts.policy.tokenizer.save_pretrained(export)
    saved = {"step": state.step, "data_position": data_position,
             "skipped_in_row": state.skipped_in_row}  # fmt: skip
    (tmp / "state.json").write_text(json.dumps(saved) + "\n", encoding="utf-8")
    if target.exists():
        shutil.rmtree(target)
    tmp.rename(target)
    write_text_atomic(root / "latest", target.name + "\n")
    return target


def restore_checkpoint(parts: TrainParts, root: Path) -> RunState:
    """Load ``root/latest`` into ``parts`` (weights, optimizer, schedule, generators). A
    checkpoint of another shape (another LoRA rank, another model) is one ConfigError
    naming the first parameter that differs."""
    latest = root / "latest"
    if not latest.is_file():
        raise ConfigError(f"no checkpoint to resume from in {root}", field="--resume")
    target = root / latest.read_text(encoding="utf-8").strip()
    state = json.loads((target / "state.json").read_text(encoding="utf-8"))
    trainable = torch.load(target / "trainable.pt", map_location="cpu")
    params = dict(parts.policy.model.named_parameters())
    for name, value in trainable.items():
        here = params.get(name)
        if here is None or here.shape != value.shape:
            found = "no such parameter" if here is None else f"shape {tuple(here.shape)}"
            raise ConfigError(
                f"checkpoint {target} does not match this policy: {name} has shape "
                f"{tuple(value.shape)} there, {found} here (another LoRA rank or model?)",
                field="--resume",
            )
    with torch.no_grad():
        for name, value in trainable.items():
            params[name].copy_(value.to(params[name].device, params[name].dtype))
    parts.optimizer.load_state_dict(torch.load(target / "optimizer.pt", map_location="cpu"))
    parts.scheduler.load_state_dict(torch.load(target / "scheduler.pt"))
    set_rng_state(torch.load(target / "rng.pt", weights_only=False))
    return RunState(step=int(state["step"]), skipped_in_row=int(state.get("skipped_in_row", 0)))


def _leaves(value: Any, prefix: str = "") -> dict[str, Any]:
    """A JSON-like tree as ``dotted.key -> leaf`` (lists are leaves)."""
    if not isinstance(value, dict) or (prefix and not value):
        return {prefix: value}
    out: dict[str, Any] = {}
    for key, child in value.items():
        out.update(_leaves(child, f"{prefix}.{key}" if prefix else str(key)))
    return out


def resumed_config(path: Path | None, overrides: Mapping[str, Any]) -> TrainConfig:
    """The config a ``--resume`` continues with: the run's own ``config.yaml`` (in the run
    directory that ``--out``, else the config file, names). The config file (``path``) and
    the flags (``overrides``, None: not given) must agree with it: a field that differs is
    refused, all of them named in one ConfigError."""
    given = load_train_config(path, overrides)
    saved_file = given.out / "config.yaml"
    if not saved_file.is_file() or not (given.out / "checkpoints" / "latest").is_file():
        raise ConfigError(
            f"no training run to resume in {given.out} (no config.yaml and checkpoint)",
            field="--resume",
        )
    saved = load_train_config(saved_file)
    ours, theirs = _leaves(given.model_dump(mode="json")), _leaves(saved.model_dump(mode="json"))
    if path is not None:
        keys = set(ours) | set(theirs)
    else:
        named = [k for k, v in overrides.items() if v is not None]
        keys = {k for k in ours if any(k == n or k.startswith(n + ".") for n in named)}
    differ = sorted(k for k in keys - {"out"} if ours.get(k) != theirs.get(k))
    if differ:
        shown = "; ".join(f"{k}: {ours.get(k)!r} given, {theirs.get(k)!r} in the run"
                          for k in differ)  # fmt: skip
        raise ConfigError(
            f"contradicts the run's own config ({saved_file}): {shown} (leave them out to "
            "continue the run as it was, or start a new run in another --out)",
            field="--resume",
        )
    return saved.model_copy(update={"out": given.out})
