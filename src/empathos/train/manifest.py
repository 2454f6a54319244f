"""A training run's ``manifest.json``: the versions, the policy, the step, the roles and
scenarios, and the files of the user's copies the rewards read, each with its sha256."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import torch

from empathos import __version__
from empathos.canonical import file_hashes
from empathos.records.io import write_text_atomic
from empathos.sage.copy import read_sage
from empathos.scenarios import Scenario
from empathos.train.config import TrainConfig

__all__ = ["data_files", "write_train_manifest"]


def data_files(config: TrainConfig) -> dict[str, str]:
    """The files of the user's copies the rewards read, each with its sha256 (by its path
    relative to the copy): for a ``sage_*`` reward, SAGE's profiles and prompt code at
    ``rollout.sage_data``, so the manifest names exactly what a run was trained against."""
    r = config.rollout
    if not r.reward.startswith("sage_") or r.sage_data is None:
        return {}
    root = Path(r.sage_data)
    return file_hashes(root, read_sage(root).files)


def write_train_manifest(
    out: Path, status: str, policy: Any, *, step: int, roles: dict[str, str],
    train: Sequence[Scenario], held_out: Sequence[Scenario], data: dict[str, str],
) -> None:  # fmt: skip
    """Write ``out/manifest.json`` atomically (``data``: :func:`data_files`, left out when
    empty)."""
    import peft
    import transformers

    params = list(policy.model.parameters())
    manifest = {
        "kind": "train",
        "status": status,
        "empathos": __version__,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "peft": peft.__version__,
        "device": str(policy.device),
        "dtype": str(policy.dtype).replace("torch.", ""),
        "policy": policy.name,
        "lora": policy.lora,
        "trainable_parameters": sum(p.numel() for p in params if p.requires_grad),
        "parameters": sum(p.numel() for p in params),
        "step": step,
        "roles": roles,
        "train_scenarios": [s.id for s in train],
        "eval_scenarios": [s.id for s in held_out],
        **({"data_files": data} if data else {}),
        "updated_at": datetime.now(UTC).isoformat(),
    }
    write_text_atomic(out / "manifest.json", json.dumps(manifest, indent=2) + "\n")
