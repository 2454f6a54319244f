"""`empathos verl prepare` output loads with verl's RL dataset; the example config composes
with verl's default trainer config (verl env)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("verl", reason="verl is not installed (the empathos[verl] environment)")

from omegaconf import OmegaConf

from empathos.llm.offline import load_offline_model

REPO = Path(__file__).resolve().parents[2]


def _prepare(out: Path) -> str:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "empathos",
            "verl",
            "prepare",
            "builtin",
            "--out",
            str(out),
            "--val-fraction",
            "0.25",
            "--seed",
            "3",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
def test_prepared_dataset_loads_with_verls_dataset_and_the_bundled_tokenizer(
    tmp_path: Path,
) -> None:
    from empathos.integrations.verl.dataset import EmpathyDataset

    stdout = _prepare(tmp_path / "data")
    assert "train:" in stdout and "val:" in stdout
    tokenizer = load_offline_model().tokenizer
    config = OmegaConf.create(
        {
            "prompt_key": "prompt",
            "max_prompt_length": 1024,
            "return_raw_chat": True,
            "cache_dir": str(tmp_path / "cache"),
            "filter_overlong_prompts": True,
        }
    )
    ids: dict[str, set[str]] = {}
    for split in ("train", "val"):
        ds = EmpathyDataset(str(tmp_path / "data" / f"{split}.parquet"), tokenizer, config)
        assert len(ds) > 0
        ids[split] = set()
        for i in range(len(ds)):
            row = ds[i]
            # verl's agent loop tokenizes raw_prompt with the chat template, as here
            messages = [{"role": m["role"], "content": m["content"]} for m in row["raw_prompt"]]
            tokens = tokenizer.apply_chat_template(
                messages, add_generation_prompt=True, tokenize=True, return_dict=True
            )["input_ids"]
            assert len(tokens) > 10
            kwargs = row["interaction_kwargs"]
            assert kwargs["name"] == "empathos"
            ids[split].add(kwargs["scenario_id"])
            assert [m["role"] for m in messages] == ["system", "user"]
    assert not ids["train"] & ids["val"], "the split is by scenario"


def test_example_config_composes_with_verls_default_trainer_config() -> None:
    from hydra import compose, initialize_config_dir
    from verl.trainer.config import AlgoConfig
    from verl.utils.config import omega_conf_to_dataclass

    with initialize_config_dir(config_dir=str(REPO / "examples" / "verl"), version_base=None):
        cfg = compose(config_name="mapo_qwen2_5_7b")
    assert cfg.algorithm.adv_estimator == "mapo_dialogue"
    algo = omega_conf_to_dataclass(cfg.algorithm)
    assert isinstance(algo, AlgoConfig) and algo.gamma == 0.85
    actor = cfg.actor_rollout_ref.actor
    assert (actor.clip_ratio_low, actor.clip_ratio_high, actor.clip_ratio_c) == (0.2, 0.28, 10.0)
    assert cfg.actor_rollout_ref.rollout.n == 4 and cfg.data.train_batch_size == 16
    assert cfg.actor_rollout_ref.rollout.multi_turn.max_assistant_turns == 15
    # keys verl's default config did not have would have failed the compose; a few it did have
    assert "critic" in cfg and "trainer" in cfg
    OmegaConf.resolve(cfg)  # every interpolation resolves
