"""MAPOTrainer where a GPU run would first go wrong, on TRL 1.16's own code path (one
``train()`` step, tiny model, CPU): failed dialogues out of the loss and of every normalisation,
the numbers TRL logs are MAPO's, sampling log-probs at the sampling temperature (TRL's
off-policy mask reads them).

The run samples at temperature 0.5 with ``off_policy_mask_threshold`` set, and its simulated
user fails (a fatal endpoint error) after some replies, so some dialogues end as ``error``
after a scored first turn."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch
from trl_run import GENERATIONS, Run, run_trainer

from empathos.llm import ChatRequest
from empathos.llm.scripted import fault
from empathos.rl import AdvantageConfig, TurnBatch, compute_advantages
from empathos.train import toy

pytestmark = pytest.mark.slow

TEMPERATURE = 0.5


def failing_user(request: ChatRequest) -> str:
    """Fails (fatally, no retry) when the supporter's last reply has a length divisible by 3."""
    if len(request.messages[-1].content.strip()) % 3 == 0:
        raise fault("fatal", "the user model is down")
    return toy.user_states_feeling(request)  # type: ignore[return-value]


def _logps_probe(trainer: Any, model: Any, inputs: dict[str, Any]) -> None:
    """TRL's own per-token log-probs of the batch (its ``_get_per_token_logps_and_entropies``,
    at its temperature) before the first update, next to the rollout's sampling log-probs."""
    if hasattr(trainer, "probed"):
        return
    ids = torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], dim=1)
    attention = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], dim=1)
    with torch.no_grad():
        logps, _, _ = trainer._get_per_token_logps_and_entropies(
            model, ids, attention, inputs["completion_ids"].size(1)
        )
    trainer.probed = logps.detach()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return run_trainer(
        tmp_path_factory.mktemp("fidelity"),
        estimator="mapo",
        user=failing_user,
        probe=_logps_probe,
        temperature=TEMPERATURE,
        off_policy_mask_threshold=0.05,
    )


def _rows(run: Run) -> list[dict[str, Any]]:
    out = run.outputs[0]
    return [{k: v[i] for k, v in out.items()} for i in range(len(out["completion_ids"]))]


def _batch(rows: list[dict[str, Any]], uid: np.ndarray) -> TurnBatch[np.ndarray]:
    t = max(len(r["turn_rewards"]) for r in rows)
    rewards = np.full((len(rows), t), np.nan)
    mask = np.zeros((len(rows), t), dtype=bool)
    for i, r in enumerate(rows):
        mask[i, : len(r["turn_rewards"])] = True
        for k, x in enumerate(r["turn_rewards"]):
            if x is not None:
                rewards[i, k] = x
    return TurnBatch(rewards=rewards, valid=~np.isnan(rewards), turn_mask=mask, uid=uid)


def _loss_row(run: Run, completion: list[int]) -> tuple[int, torch.Tensor, torch.Tensor]:
    batch = run.loss_inputs[0]
    want = torch.tensor(completion)
    for i in range(batch["completion_ids"].shape[0]):
        if torch.equal(batch["completion_ids"][i, : len(completion)].cpu(), want):
            mask = batch["completion_mask"][i] * batch["tool_mask"][i]
            return i, batch["advantages"][i].cpu(), mask.bool().cpu()
    raise AssertionError("the completion did not reach the loss")


def _failed(rows: list[dict[str, Any]]) -> list[int]:
    return [i for i, r in enumerate(rows) if r["dialogue_error"] is not None]


def test_a_failed_dialogue_leaves_its_peers_advantages_as_if_it_were_absent(run: Run) -> None:
    rows = _rows(run)
    failed = _failed(rows)
    kept = [i for i in range(len(rows)) if i not in failed]
    assert failed and kept, "the user failed in some dialogues, not all"
    assert any(rows[i]["turn_rewards"][0] is not None for i in failed), (
        "a failed dialogue had a scored turn (it would move the statistics if it counted)"
    )
    uid = np.arange(len(rows)) // GENERATIONS
    absent = [rows[i] for i in kept]
    expected = compute_advantages("mapo", _batch(absent, uid[kept]), AdvantageConfig()).advantages
    for j, i in enumerate(kept):
        _, adv, mask = _loss_row(run, rows[i]["completion_ids"])
        for k, (start, end) in enumerate(rows[i]["turn_spans"]):
            if rows[i]["turn_rewards"][k] is not None:
                got = adv[start:end].double()
                assert torch.allclose(got, torch.tensor(expected[j, k]), atol=1e-6)
                assert mask[start:end].all()
    for i in failed:
        _, adv, mask = _loss_row(run, rows[i]["completion_ids"])
        assert not mask.any() and torch.all(adv == 0), "a failed dialogue is out of the loss"
    logs = run.trainer.state.log_history[0]
    assert logs["mapo/dialogues/failed"] == len(failed)


def test_trls_logged_advantages_spread_and_zero_spread_share_are_mapos(run: Run) -> None:
    rows = _rows(run)
    failed = set(_failed(rows))
    uid = np.arange(len(rows)) // GENERATIONS
    kept = [i for i in range(len(rows)) if i not in failed]
    batch = _batch([rows[i] for i in kept], uid[kept])
    result = compute_advantages("mapo", batch, AdvantageConfig())
    logs = run.trainer.state.log_history[0]
    scored = batch.rewards[batch.valid]
    assert logs["reward_std"] == pytest.approx(float(scored.std()), abs=1e-6)
    assert logs["frac_reward_zero_std"] == pytest.approx(result.stats["turn/degenerate_rate"])
    table = list(run.trainer._logs["advantages"])  # the completions table's "advantage"
    turns = list(run.trainer._logs["extra"]["turn_advantages"])
    assert len(table) == len(turns) == len(rows)
    on = result.loss_mask
    for j, i in enumerate(kept):
        lengths = np.array([e - s for s, e in rows[i]["turn_spans"]], dtype=float)
        n = len(lengths)
        want = [float(result.advantages[j, k]) if on[j, k] else None for k in range(n)]
        assert turns[i] == pytest.approx(want)
        w = lengths * on[j, :n]
        mean = float((result.advantages[j, :n] * w).sum() / w.sum()) if w.sum() else 0.0
        assert table[i] == pytest.approx(mean, abs=1e-6)
    for i in failed:
        assert table[i] == 0.0 and all(x is None for x in turns[i])
    per_token = np.concatenate([
        np.repeat(result.advantages[j, k], e - s)
        for j, i in enumerate(kept)
        for k, (s, e) in enumerate(rows[i]["turn_spans"]) if on[j, k]
    ])  # fmt: skip
    assert logs["mapo/advantages/token_mean"] == pytest.approx(per_token.mean(), abs=1e-6)
    assert logs["mapo/advantages/token_std"] == pytest.approx(per_token.std(), abs=1e-6)


def test_sampling_logprobs_are_at_the_sampling_temperature_as_trls_off_policy_mask_reads(
    run: Run,
) -> None:
    batch = run.loss_inputs[0]
    mask = (batch["completion_mask"] * batch["tool_mask"]).bool()
    sampled = batch["sampling_per_token_logps"]
    trl = run.trainer.probed  # TRL's log-probs at its temperature, same weights
    assert mask.any()
    # measured: at most ~1.5e-3 apart (generate's cached forward against TRL's fused head);
    # at temperature 1 they would be up to ~0.2 apart
    gap = (sampled[mask] - trl[mask]).abs().max()
    assert gap < 5e-3, f"the rollout's log-probs are not at the sampling temperature: {gap}"
    keep = run.trainer.get_off_policy_mask(
        batch["advantages"], trl, sampled, mask.to(trl.dtype), 0.05
    )
    assert bool(keep.all()), "TRL's off-policy mask drops nothing on a fresh, on-policy batch"
    logs = run.trainer.state.log_history[0]
    assert math.isfinite(float(logs["loss"]))
