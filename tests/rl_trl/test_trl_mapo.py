"""MAPOTrainer on TRL 1.16's real GRPOTrainer, one training step on the CPU (tiny random model,
scripted roles): the token layout, the advantages that reach TRL's loss, the match with TRL's
own GRPO advantage, the LoRA update and the logs."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch
from trl_run import GENERATIONS, Run

from empathos.rl import AdvantageConfig, TurnBatch, compute_advantages

pytestmark = pytest.mark.slow


def _rows(run: Run) -> list[dict[str, Any]]:
    out = run.outputs[0]
    return [{k: v[i] for k, v in out.items()} for i in range(len(out["completion_ids"]))]


def _loss_row(run: Run, completion: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """(advantages, loss mask) of the row of the loss's batch holding ``completion`` (TRL
    shuffles the rows before the loss)."""
    batch = run.loss_inputs[0]
    n = len(completion)
    want = torch.tensor(completion)
    for i in range(batch["completion_ids"].shape[0]):
        if torch.equal(batch["completion_ids"][i, :n].cpu(), want):
            mask = batch["completion_mask"][i] * batch["tool_mask"][i]
            return batch["advantages"][i].cpu(), mask.bool().cpu()
    raise AssertionError("the completion did not reach the loss")


def _turn_batch(rows: list[dict[str, Any]]) -> TurnBatch[np.ndarray]:
    t = max(len(r["turn_rewards"]) for r in rows)
    rewards = np.full((len(rows), t), np.nan)
    valid = np.zeros((len(rows), t), dtype=bool)
    mask = np.zeros((len(rows), t), dtype=bool)
    for i, r in enumerate(rows):
        mask[i, : len(r["turn_rewards"])] = True
        for k, x in enumerate(r["turn_rewards"]):
            if x is not None:
                rewards[i, k], valid[i, k] = x, True
    uid = np.arange(len(rows)) // GENERATIONS
    return TurnBatch(rewards=rewards, valid=valid, turn_mask=mask, uid=uid)


def test_env_mask_and_spans_are_the_recorded_replies(mapo_run: Run) -> None:
    rows = _rows(mapo_run)
    assert len(rows) == 2 * GENERATIONS
    for row in rows:
        record = row["dialogue_record"]
        assert len(row["turn_spans"]) == len(record.turns) == 2
        ones = np.zeros(len(row["completion_ids"]), dtype=bool)
        for (start, end), turn in zip(row["turn_spans"], record.turns, strict=True):
            ids = row["completion_ids"][start:end]
            text = mapo_run.tokenizer.decode(ids, skip_special_tokens=True).strip()
            assert text == turn.assistant
            ones[start:end] = True
        assert np.array_equal(np.asarray(row["env_mask"], dtype=bool), ones)
        between = row["completion_ids"][row["turn_spans"][0][1] : row["turn_spans"][1][0]]
        assert record.turns[1].user in mapo_run.tokenizer.decode(between)
        assert record.turns[0].user in mapo_run.tokenizer.decode(row["prompt_ids"])
        assert len(row["logprobs"]) == len(row["completion_ids"])


def test_turn_tokens_carry_the_mapo_advantage_of_their_turn(mapo_run: Run) -> None:
    rows = _rows(mapo_run)
    batch = _turn_batch(rows)
    assert np.nanstd(batch.rewards) > 0  # the judge's rule gave varied rewards
    expected = compute_advantages("mapo", batch, AdvantageConfig()).advantages
    assert np.abs(expected).max() > 0
    for i, row in enumerate(rows):
        adv, mask = _loss_row(mapo_run, row["completion_ids"])
        on = torch.zeros(adv.shape, dtype=torch.bool)
        for k, (start, end) in enumerate(row["turn_spans"]):
            assert torch.allclose(adv[start:end].double(), torch.tensor(expected[i, k]), atol=1e-6)
            on[start:end] = True
        assert torch.all(adv[~on] == 0)  # user lines, templates, padding
        assert torch.equal(mask, on)


def test_grpo_estimator_equals_trls_own_grpo_once_aligned(grpo_run: Run) -> None:
    # TRL: (R - mean_group) / (sample std + 1e-4); ours: (R - mean_group) / (population std +
    # 1e-6). Aligned: ours * (pop std + 1e-6) / (sample std + 1e-4) equals TRL's.
    rows = _rows(grpo_run)
    totals = np.array([sum(x for x in r["turn_rewards"] if x is not None) for r in rows])
    groups = totals.reshape(-1, GENERATIONS)
    assert groups.std(axis=1).max() > 0
    trl = grpo_run.trainer.trl_advantages.cpu().numpy()
    for i, row in enumerate(rows):
        g = groups[i // GENERATIONS]
        factor = (g.std() + 1e-6) / (g.std(ddof=1) + 1e-4)
        adv, _ = _loss_row(grpo_run, row["completion_ids"])
        for start, end in row["turn_spans"]:
            ours = adv[start:end].double().numpy()
            assert np.allclose(ours * factor, trl[i], atol=1e-5)
            expected_ours = 0.0 if g.std() == 0 else (totals[i] - g.mean()) / (g.std() + 1e-6)
            assert np.allclose(ours, expected_ours, atol=1e-5)
    logs = grpo_run.trainer.state.log_history[0]  # with beta > 0 and loss_type "grpo"
    assert all(math.isfinite(float(logs[k])) for k in ("loss", "kl", "grad_norm"))


def test_the_step_changes_the_lora_weights_and_logs_finite_metrics(mapo_run: Run) -> None:
    changed = [
        n for n, w in mapo_run.lora_before.items() if not torch.equal(w, mapo_run.lora_after[n])
    ]
    assert changed and len(mapo_run.lora_before) > 0
    logs = mapo_run.trainer.state.log_history[0]
    for key in ("loss", "grad_norm", "reward", "mapo/turns/valid", "mapo/turn/degenerate_rate"):
        assert math.isfinite(float(logs[key])), key
    assert logs["mapo/turns/valid"] == 2 * 2 * GENERATIONS
