"""empathos's estimators found by name in verl's registry, on verl-shaped batches laid out as the
agent loop lays them out (verl env only)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

pytest.importorskip("verl", reason="verl is not installed (the empathos[verl] environment)")

from verl.trainer.config import AlgoConfig
from verl.trainer.ppo import core_algos

from empathos.errors import ConfigError
from empathos.integrations.verl.layout import PlacedTurn, encode_turns

GEN = 3  # generation-prompt tokens before each reply (masked; the header is its last two)
USER = 4  # user-line tokens after each reply but the last (masked)
# Reply lengths per rollout; rollouts of unequal length; uids: two groups of two, a singleton.
TURNS = [[5, 3, 4], [2, 6], [4, 4, 4, 1], [3], [2, 2]]
UIDS = np.array(["g1", "g1", "g2", "g2", "solo"], dtype=object)
LENGTH = 48


def _layout(scores: list[list[float | None]]) -> tuple[torch.Tensor, torch.Tensor, list]:
    """(token_level_rewards, response_mask, reply spans) of rows laid out by encode_turns."""
    rows, masks, spans = [], [], []
    for lengths, row_scores in zip(TURNS, scores, strict=True):
        mask: list[int] = []
        placed, row_spans = [], []
        for k, (n, score) in enumerate(zip(lengths, row_scores, strict=True)):
            if k:
                mask += [0] * USER
            mask += [0] * GEN
            start = len(mask)
            mask += [1] * n
            placed.append(PlacedTurn(start - 2, start, start + n, score))
            row_spans.append((start, start + n))
        rm, mask = encode_turns(mask, placed)
        pad = LENGTH - len(mask)
        rows.append(rm + [0.0] * pad)
        masks.append(mask + [0] * pad)
        spans.append(row_spans)
    return torch.tensor(rows), torch.tensor(masks), spans


def _scores(seed: int) -> list[list[float | None]]:
    rng = np.random.default_rng(seed)
    out: list[list[float | None]] = [[float(x) for x in rng.normal(size=len(t))] for t in TURNS]
    out[2][1] = None  # an unscored turn between scored ones
    out[1][1] = None  # an unscored last turn
    return out


ALPHA = {"mapo_dialogue": 0.5, "turn_only": 1.0, "batch_only": 0.0}


def _z(values: list[float], eps: float = 1e-6) -> list[float]:
    """(x - mean) / (population std + eps); all 0 for fewer than two values or no spread."""
    x = np.array(values, dtype=np.float64)
    if len(x) < 2 or x.max() == x.min():
        return [0.0] * len(x)
    return list((x - x.mean()) / (x.std() + eps))


def _reference(
    scores: list[list[float | None]], groups: list[int], gamma: float, alpha: float
) -> dict[tuple[int, int], float]:
    """MAPO by hand (MAPO_SPEC, unscored turns dropped), independent of empathos.rl: per-turn
    rewards normalised over the batch; discounted returns normalised over the rollouts of the
    same group that reached the same turn; mixed alpha : 1 - alpha. {(row, turn): advantage}."""
    scored = [(b, k) for b, row in enumerate(scores) for k, v in enumerate(row) if v is not None]
    ret = {}
    for b, k in scored:
        later = [(j, v) for j, v in enumerate(scores[b]) if j >= k and v is not None]
        ret[(b, k)] = sum(gamma ** (j - k) * v for j, v in later)
    wide = dict(zip(scored, _z([scores[b][k] for b, k in scored]), strict=True))
    turn: dict[tuple[int, int], float] = {}
    for key in {(groups[b], k) for b, k in scored}:
        members = [(b, k) for b, k in scored if (groups[b], k) == key]
        turn |= dict(zip(members, _z([ret[m] for m in members]), strict=True))
    return {m: alpha * turn[m] + (1 - alpha) * wide[m] for m in scored}


def _expected(
    name: str, scores: list[list[float | None]], gamma: float, uid: list[int] | None = None
) -> torch.Tensor:
    """The hand-computed advantages spread over each scored reply's tokens."""
    advantage = _reference(scores, uid or [0, 0, 1, 1, 2], gamma, ALPHA[name])
    out = torch.zeros((len(TURNS), LENGTH))
    for b, row_spans in enumerate(_layout(scores)[2]):
        for k, (start, end) in enumerate(row_spans):
            if (b, k) in advantage:
                out[b, start:end] = float(advantage[(b, k)])
    return out


@pytest.mark.parametrize(
    ("verl_name", "ours"),
    [("mapo_dialogue", "mapo_dialogue"), ("mapo_turn_only", "turn_only"),
     ("mapo_batch_only", "batch_only")],
)  # fmt: skip
def test_registry_estimator_returns_what_empathos_rl_returns(verl_name: str, ours: str) -> None:
    fn = core_algos.get_adv_estimator_fn(verl_name)
    scores = _scores(0)
    rewards, mask, spans = _layout(scores)
    adv, returns = fn(token_level_rewards=rewards, response_mask=mask,
                      config=AlgoConfig(gamma=0.85), index=UIDS)  # fmt: skip
    assert adv.shape == returns.shape == mask.shape
    torch.testing.assert_close(adv, _expected(ours, scores, 0.85), rtol=0, atol=1e-6)
    assert float(adv[mask == 0].abs().sum()) == 0.0, "user lines and unscored turns get nothing"
    start, end = spans[2][1]
    assert int(mask[2, start:end].sum()) == 0, "the unscored turn's tokens are masked out"


def test_a_padding_row_of_verls_v1_trainer_has_no_turns() -> None:
    fn = core_algos.get_adv_estimator_fn("mapo_dialogue")
    scores = _scores(3)
    rewards, mask, _ = _layout(scores)
    rewards = torch.cat([rewards, torch.zeros((1, LENGTH))])
    mask = torch.cat([mask, torch.zeros((1, LENGTH), dtype=mask.dtype)])
    adv, _ = fn(token_level_rewards=rewards, response_mask=mask, config=AlgoConfig(gamma=0.85),
                index=np.append(UIDS, "g1"))  # fmt: skip
    torch.testing.assert_close(
        adv[:-1], _expected("mapo_dialogue", scores, 0.85), rtol=0, atol=1e-6
    )
    assert float(adv[-1].abs().sum()) == 0.0


def test_an_explicit_gamma_of_one_is_honoured_and_only_a_missing_one_means_mapos() -> None:
    fn = core_algos.get_adv_estimator_fn("mapo_dialogue")
    scores = _scores(1)
    rewards, mask, _ = _layout(scores)
    uids, groups = np.array(["g"] * 4 + ["solo"], dtype=object), [0, 0, 0, 0, 1]  # gamma matters
    for config, gamma in ((AlgoConfig(gamma=1.0), 1.0), (AlgoConfig(), 1.0),
                          ({"gamma": 0.5}, 0.5), (None, 0.85)):  # fmt: skip
        adv, _ = fn(token_level_rewards=rewards, response_mask=mask, config=config, index=uids)
        expected = _expected("mapo_dialogue", scores, gamma, groups)
        torch.testing.assert_close(adv, expected, rtol=0, atol=1e-6)
    one = _expected("mapo_dialogue", scores, 1.0, groups)
    assert not torch.allclose(one, _expected("mapo_dialogue", scores, 0.85, groups), atol=1e-3)


def test_rows_without_the_agent_loops_layout_fail_loudly_saying_what_to_configure() -> None:
    fn = core_algos.get_adv_estimator_fn("mapo_dialogue")
    _, mask, _ = _layout(_scores(2))
    scalar = torch.zeros(mask.shape)  # what verl's tool agent loop gives: one score, last token
    last = mask.shape[1] - 1 - torch.argmax(mask.flip(1), dim=1)
    scalar[torch.arange(mask.shape[0]), last] = 1.0
    with pytest.raises(ConfigError, match="agent_name 'empathos_dialogue'"):
        fn(token_level_rewards=scalar, response_mask=mask, config=AlgoConfig(), index=UIDS)
    rewards, mask, _ = _layout(_scores(2))
    rewards[0, -1] = 0.5  # a reward on a masked token that is no header
    with pytest.raises(ConfigError, match="no empathos turn header"):
        fn(token_level_rewards=rewards, response_mask=mask, config=AlgoConfig(), index=UIDS)


def test_the_layouts_headers_sum_to_zero_and_keep_every_value_finite() -> None:
    scores = _scores(4)
    rewards, mask, spans = _layout(scores)
    assert torch.isfinite(rewards).all()
    totals = [sum(s for s in row if s is not None) for row in scores]
    torch.testing.assert_close(rewards.sum(dim=1), torch.tensor(totals, dtype=torch.float32))
    for b, row in enumerate(scores):
        for (start, end), score in zip(spans[b], row, strict=True):
            assert rewards[b, start - 2 : start].tolist() == ([1.0, -1.0] if score is not None
                                                               else [2.0, -2.0])  # fmt: skip
            assert bool(mask[b, start:end].all()) == (score is not None)


def test_a_fresh_verl_process_finds_our_estimators_and_agent_loop_through_the_plugin() -> None:
    """verl loads empathos's ``verl.plugins`` entry point on ``import verl``: nothing imports
    empathos in the process, as in verl's trainer and agent loop workers."""
    import subprocess
    import sys

    code = (
        "import verl\n"
        "from verl.trainer.ppo import core_algos\n"
        "from verl.experimental.agent_loop.agent_loop import _agent_loop_registry as reg\n"
        "names = ('mapo_dialogue', 'mapo_turn_only', 'mapo_batch_only')\n"
        "print([core_algos.get_adv_estimator_fn(n).__name__ for n in names])\n"
        "print(reg['empathos_dialogue']['_target_'])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()
    assert lines[-2] == str(["empathos_mapo_dialogue", "empathos_turn_only", "empathos_batch_only"])
    assert lines[-1] == "empathos.integrations.verl.agent_loop.EmpathyAgentLoop"


def test_another_alpha_under_a_taken_name_is_refused_and_honoured_under_a_new_one() -> None:
    from empathos.integrations.verl.estimator import register_estimators

    with pytest.raises(ConfigError, match=r"already holds \w+ alpha 0\.5; register"):
        register_estimators(alpha=1.0)
    again = register_estimators()  # the same alpha again: the registered functions
    assert again["mapo_dialogue"] is core_algos.get_adv_estimator_fn("mapo_dialogue")
    register_estimators(alpha=1.0, names={"mapo_dialogue": "mapo_alpha_one_test"})
    rewards, mask, _ = _layout(_scores(5))
    one, turn_only = (core_algos.get_adv_estimator_fn(n)(
        token_level_rewards=rewards, response_mask=mask, config=AlgoConfig(gamma=0.85),
        index=UIDS)[0] for n in ("mapo_alpha_one_test", "mapo_turn_only"))  # fmt: skip
    torch.testing.assert_close(one, turn_only, rtol=0, atol=1e-6)  # alpha 1: A_turn alone


def test_a_new_estimator_of_empathos_rl_appears_in_verls_registry() -> None:
    from empathos.integrations.verl.estimator import default_names, register_estimators
    from empathos.rl import advantages

    name = "zz_registry_probe"
    advantages.register_estimator(name)(advantages.get_estimator("batch_only"))
    try:
        assert default_names()[name] == f"mapo_{name}"
        register_estimators()
        assert core_algos.get_adv_estimator_fn(f"mapo_{name}").__name__ == f"empathos_{name}"
    finally:
        advantages._REGISTRY.pop(name, None)
        core_algos.ADV_ESTIMATOR_REGISTRY.pop(f"mapo_{name}", None)


def test_verl_0_9_0_is_refused_in_one_line() -> None:
    from empathos.errors import MissingExtraError
    from empathos.integrations.verl.version import require_verl

    with pytest.raises(MissingExtraError) as err:
        require_verl("0.9.0")
    assert "\n" not in str(err.value) and "verl>=0.9.1" in str(err.value)
    require_verl("0.9.1")
    require_verl()  # the installed one


def test_the_estimator_refuses_a_response_mask_rewrite_naming_the_setting() -> None:
    from verl.trainer.config import RolloutCorrectionConfig

    fn = core_algos.get_adv_estimator_fn("mapo_dialogue")
    scores = _scores(0)
    rewards, mask, _ = _layout(scores)
    for bypass in (False, True):
        rc = RolloutCorrectionConfig(rollout_rs="token_k1", rollout_rs_threshold=2.0,
                                     bypass_mode=bypass)  # fmt: skip
        config = AlgoConfig(gamma=0.85, rollout_correction=rc)
        if bypass:
            adv, _ = fn(token_level_rewards=rewards, response_mask=mask, config=config, index=UIDS)
            torch.testing.assert_close(adv, _expected("mapo_dialogue", scores, 0.85))
        else:
            with pytest.raises(ConfigError, match=r"algorithm\.rollout_correction\.rollout_rs"):
                fn(token_level_rewards=rewards, response_mask=mask, config=config, index=UIDS)


def test_registered_mapo_turnwise_is_empathos_rls() -> None:
    """Issue 38's estimator reaches verl through the generic registry: verl's ``mapo_turnwise``
    gives what ``empathos.rl`` gives for the same turns, on each scored reply's tokens."""
    from empathos.rl import AdvantageConfig, TurnBatch, compute_advantages

    scores = _scores(1)
    rewards, mask, spans = _layout(scores)
    fn = core_algos.get_adv_estimator_fn("mapo_turnwise")
    adv, _ = fn(token_level_rewards=rewards, response_mask=mask,
                config=AlgoConfig(gamma=0.85), index=UIDS)  # fmt: skip
    width = max(len(row) for row in scores)
    r = np.zeros((len(scores), width))
    valid = np.zeros((len(scores), width), dtype=bool)
    turns = np.zeros((len(scores), width), dtype=bool)
    for b, row in enumerate(scores):
        for k, x in enumerate(row):
            turns[b, k] = True
            if x is not None:
                r[b, k], valid[b, k] = x, True
    uid = np.unique(UIDS.astype(str), return_inverse=True)[1]
    res = compute_advantages(
        "mapo_turnwise", TurnBatch(r, valid, turns, uid), AdvantageConfig(gamma=0.85)
    )
    want = torch.zeros_like(adv)
    for b, row_spans in enumerate(spans):
        for k, (start, end) in enumerate(row_spans):
            if valid[b, k]:
                want[b, start:end] = float(res.advantages[b, k])
    assert float(want.abs().sum()) > 0
    torch.testing.assert_close(adv, want, rtol=0, atol=1e-6)
