"""SIMULATION: a fast, language-model-free stand-in for the EMPA sandbox (MAPO_SPEC 7).

This is a simulation built to study credit assignment over long dialogues; it is not a model
of real people and its numbers say nothing about real users or real models.

- **Persona** (per scenario): IEDR levels drawn at random give P_0 through the rubric's
  scoring keys (:mod:`empathos.rubric`); a threshold level (low / medium / high) scales how
  much support it takes to register progress.
- **Actions**: a discrete set of support strategies (:data:`STRATEGIES`).
- **Hidden effects** (not observed by the policy): pushing the proactive axis (advice)
  while the affective deficit is still large gives a small visible gain now and a backfire
  two turns later; deep moves (resonance, reframing, affirmation) only land once the
  cognitive or affective deficit has eased; repeating a strategy loses effect and then
  reads as performative (negative on every axis); progress on an axis already resolved
  registers weakly.
- **Noisy judge**: the turn's true effect per indicator is observed with Gaussian noise and
  quantised to the MDEP levels; v_t comes from those levels through the rubric, and the
  state moves by the *judged* v_t, as in the real sandbox. A judge call fails with a small
  probability: the turn is unscored (P unchanged, no reward).
- **What the policy sees** (:meth:`SimEnv.observation`): only what a dialogue policy could
  read from the conversation. Not the persona's P_0, not P_t, not its threshold: the
  direction (better / no change / worse, per axis) of the judge's reading of its last move,
  which reaches it as noisily as a user's reaction does (each axis is replaced by a random
  direction with probability ``SimConfig.obs_noise``), the running sum of those directions,
  its own strategy history, and the turn.
- **Dynamics and termination** are those of the EPM core (:mod:`empathos.epm`), vectorised
  over episodes. Everything is deterministic under the seed of the generator passed in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field

from empathos.epm import (
    EPMConfig,
    half_space_distance,
    in_zone,
    init_dynamics,
    step_batch,
    thresholds,
)
from empathos.epm.termination import failure_codes, success_codes, termination_codes
from empathos.rubric import EMPATHY_RUBRIC, action_vectors

__all__ = [
    "OBS_DIM",
    "SIMULATION_LABEL",
    "STRATEGIES",
    "Personas",
    "SimConfig",
    "SimEnv",
    "StepOut",
    "sample_personas",
]

SIMULATION_LABEL = "SIMULATION (empathos.rl.sim): not real users, not a real model"
F64 = NDArray[np.float64]
I64 = NDArray[np.int64]
B = NDArray[np.bool_]

# Intended per-axis effect of each strategy (C, A, P), in "level units" before the judge.
STRATEGIES: tuple[str, ...] = (
    "explore",  # ask open questions about the situation
    "reflect",  # reflect content and meaning back
    "validate",  # name and validate the expressed emotion
    "resonate",  # resonate with the unexpressed emotion (needs rapport)
    "reframe",  # offer a new view of the situation (needs the feeling heard)
    "affirm",  # affirm values and strengths (needs the feeling heard)
    "advise",  # concrete, actionable advice
    "reassure",  # generic reassurance
)
_BASE = np.array(
    [
        [1.3, 0.3, 0.0],
        [2.0, 0.5, 0.0],
        [0.4, 2.0, 0.0],
        [0.8, 2.8, 0.8],
        [2.8, 0.8, 1.3],
        [0.4, 1.0, 2.8],
        [0.0, 0.0, 1.7],
        [0.0, 1.2, 0.3],
    ]
)
OBS_DIM = 7 + 2 * len(STRATEGIES)
"""Width of :meth:`SimEnv.observation`."""
_THRESHOLD_SCALE = np.array([0.8, 1.0, 1.3])  # low / medium / high: support needed per level
_IEDR_SCORES = np.array([[ind.scores[lv] for lv in range(4)] for ind in EMPATHY_RUBRIC.iedr])
_IEDR_AXIS = np.array([EMPATHY_RUBRIC.axis_index(ind.axis) for ind in EMPATHY_RUBRIC.iedr])


class SimConfig(BaseModel):
    """Parameters of the simulated environment (fixed before any comparison is read)."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    min_turns: int = Field(8, ge=1, description="No success or failure before this turn")
    max_turns: int = Field(20, ge=1, description="Timeout turn")
    judge_noise: float = Field(0.45, ge=0.0, description="Std of the judge's noise, level units")
    judge_fail: float = Field(0.03, ge=0.0, le=1.0, description="Chance a turn goes unscored")
    repeat_decay: float = Field(0.75, gt=0.0, le=1.0, description="Effect kept per recent repeat")
    performative_after: int = Field(
        3, ge=2, le=5, description="This many uses of one strategy in a row read as performative"
    )
    backfire_delay: int = Field(2, ge=1, le=4, description="Turns until premature advice backfires")
    eased: float = Field(
        0.55,
        gt=0.0,
        le=1.0,
        description="An axis is eased when its remaining deficit share is below",
    )
    obs_noise: float = Field(
        0.25,
        ge=0.0,
        le=1.0,
        description="Chance that the policy reads an axis of its last move's direction wrong "
        "(replaced by a random direction)",
    )


class Personas(NamedTuple):
    """Per-scenario persona: ``p0`` (S, 3) initial deficit, ``threshold`` (S,) 0/1/2."""

    p0: F64
    threshold: I64


def sample_personas(rng: np.random.Generator, n: int) -> Personas:
    """``n`` random personas: IEDR levels 1..3 (weighted to the middle) and a threshold."""
    levels = rng.choice([1, 2, 3], size=(n, len(_IEDR_AXIS)), p=[0.35, 0.45, 0.2])
    scores = np.take_along_axis(_IEDR_SCORES[None, :, :], levels[:, :, None], axis=2)[..., 0]
    p0 = scores @ np.eye(3)[_IEDR_AXIS]  # per-axis sums, (n, 9) x (9, 3)
    return Personas(np.asarray(p0, dtype=np.float64), rng.integers(0, 3, size=n))


class StepOut(NamedTuple):
    """One step for every episode (N,): reward (NaN if unscored or finished), scored, done now,
    termination code (0 = continue), the judged MDEP levels (N, 6), delta_E and alignment
    (0 where unscored)."""

    reward: F64
    scored: B
    done: B
    code: NDArray[np.int8]
    levels: I64
    delta_e: F64
    align: F64


@dataclass
class SimEnv:
    """N simulated dialogues stepped together; see the module docstring (a SIMULATION)."""

    p0: F64
    threshold: I64
    cfg: SimConfig
    rng: np.random.Generator

    def __post_init__(self) -> None:
        n = self.p0.shape[0]
        self.epm = EPMConfig(min_turns=self.cfg.min_turns, max_turns=self.cfg.max_turns)
        self.r0, self.v_star0 = init_dynamics(self.p0)
        self.th = thresholds(self.r0, self.epm)
        self.P = self.p0.copy()
        self.E = np.zeros(n)
        self.t = 0
        self.active = np.ones(n, dtype=bool)
        self.recent = np.full((n, 4), -1, dtype=np.int64)  # last 4 strategies, newest last
        self.uses = np.zeros((n, len(STRATEGIES)))
        self.pending = np.zeros((n, self.cfg.backfire_delay + 1, 3))
        self.seen = np.zeros((n, 3))  # the direction of the last move, as the policy read it
        self.seen_sum = np.zeros((n, 3))
        w = self.cfg.max_turns + 1
        self.dE_hist = np.zeros((n, w))
        self.norm_hist = np.zeros((n, w))
        self.norm_hist[:, -1] = self.r0
        self.n_scored = np.ones(n, dtype=np.int64)  # the t = 0 point
        self.align_sum = np.zeros(n)

    @property
    def n(self) -> int:
        """Number of episodes N."""
        return int(self.p0.shape[0])

    def observation(self) -> F64:
        """(N, OBS_DIM) features a dialogue policy could read from the conversation: the
        direction of the judge's reading of its last move per axis (+1 / 0 / -1, noisy), the
        running sum of those directions, its strategy counts, its last strategy and the
        turn. Neither P_0, P_t nor the persona's threshold, nor the hidden effects."""
        k = len(STRATEGIES)
        last = np.zeros((self.n, k))
        has = self.recent[:, -1] >= 0
        last[np.flatnonzero(has), self.recent[has, -1]] = 1.0
        return np.concatenate(
            [
                self.seen,
                self.seen_sum / self.cfg.max_turns,
                self.uses / self.cfg.max_turns,
                last,
                np.full((self.n, 1), self.t / self.cfg.max_turns),
            ],
            axis=1,
        )

    def _read_direction(self, levels: I64) -> F64:
        """The direction per axis of the judge's reading, as the policy reads it: the sign
        of the judged move, each axis replaced by a random direction with ``obs_noise``."""
        true = np.sign(action_vectors(levels, EMPATHY_RUBRIC))
        flip = self.rng.random(true.shape) < self.cfg.obs_noise
        noise = self.rng.integers(-1, 2, size=true.shape).astype(np.float64)
        return np.where(flip, noise, true)

    def _true_effect(self, action: I64) -> tuple[F64, F64]:
        """Intended progress (N, 3) >= 0 and harm (N, 3) >= 0 of each episode's strategy."""
        cfg = self.cfg
        remaining = np.where(self.p0 < 0, self.P / np.where(self.p0 < 0, self.p0, 1.0), 0.0)
        c_eased = remaining[:, 0] < cfg.eased
        a_eased = remaining[:, 1] < cfg.eased
        prog = _BASE[action].copy()
        harm = np.zeros((self.n, 3))
        early_deep = ((action == 3) & ~c_eased) | (((action == 4) | (action == 5)) & ~a_eased)
        prog[early_deep] *= 0.3
        harm[early_deep & (action == 3), 1] += 0.9  # resonance without rapport: tone mismatch
        harm[early_deep & (action == 4), 1] += 0.9  # reframing unheard pain reads as dismissive
        premature = (action == 6) & ~a_eased  # advice before the feeling is heard
        delayed = np.array([0.0, 1.6, 1.2])
        self.pending[premature, cfg.backfire_delay] += delayed
        same = (self.recent == action[:, None]).sum(axis=1)  # earlier uses in the last 4
        prog *= cfg.repeat_decay ** np.minimum(same, 3)[:, None]
        run = (self.recent[:, -cfg.performative_after + 1 :] == action[:, None]).all(axis=1)
        harm[run] += 1.1  # the same move again and again reads as performative, on every axis
        prog[remaining <= 0.05] *= 0.3  # an axis already resolved registers weakly
        harm += self.pending[:, 0]
        return prog / _THRESHOLD_SCALE[self.threshold][:, None], harm

    def _judge(self, prog: F64, harm: F64) -> I64:
        """Noisy MDEP levels (N, 6) in rubric order C.Prog, C.Neg, A.Prog, A.Neg, P.Prog, P.Neg."""
        s = self.cfg.judge_noise
        xp = prog + self.rng.normal(0.0, s, prog.shape)
        xn = harm + self.rng.normal(0.0, s, harm.shape)
        lp = np.where(xp < 0.6, 0, np.where(xp < 1.8, 1, 2))
        ln = np.where(xn < 0.6, 0, np.where(xn < 1.6, -1, -2))
        return np.stack([lp[:, 0], ln[:, 0], lp[:, 1], ln[:, 1], lp[:, 2], ln[:, 2]], axis=1)

    def step(self, action: I64) -> StepOut:
        """Apply one strategy per episode; finished episodes are left unchanged."""
        self.t += 1
        act = np.asarray(action, dtype=np.int64)
        prog, harm = self._true_effect(act)
        levels = self._judge(prog, harm)
        scored = self.active & (self.rng.random(self.n) >= self.cfg.judge_fail)
        v = np.where(scored[:, None], action_vectors(levels, EMPATHY_RUBRIC), 0.0)
        d_prev = half_space_distance(self.P, self.epm.zone_eps)
        res = step_batch(self.P, self.E, v, self.v_star0, self.epm)
        self.P = np.where(scored[:, None], res.P, self.P)
        self.E = np.where(scored, res.E_total, self.E)
        reward = np.where(scored, d_prev - half_space_distance(self.P, self.epm.zone_eps), np.nan)
        live = self.active
        self.recent[live] = np.concatenate([self.recent[live, 1:], act[live, None]], axis=1)
        self.uses[np.flatnonzero(live), act[live]] += 1.0
        self.pending[live] = np.concatenate(
            [self.pending[live, 1:], np.zeros((int(live.sum()), 1, 3))], axis=1
        )
        seen = self._read_direction(levels)
        self.seen = np.where(live[:, None], seen, self.seen)
        self.seen_sum += np.where(live[:, None], seen, 0.0)
        for hist, value in ((self.dE_hist, res.delta_E), (self.norm_hist, res.p_norm)):
            hist[scored, :-1] = hist[scored, 1:]
            hist[scored, -1] = value[scored]
        self.n_scored += scored
        self.align_sum += np.where(scored, res.alignment, 0.0)
        code = self._terminate()
        done = live & (code != 0)
        self.active = live & ~done
        return StepOut(
            reward,
            scored,
            done,
            np.where(live, code, 0).astype(np.int8),
            levels,
            np.where(scored, res.delta_E, 0.0),
            np.where(scored, res.alignment, 0.0),
        )

    def _terminate(self) -> NDArray[np.int8]:
        """Termination codes (N,) of the EPM core for the current (judged) states."""
        norm = np.linalg.norm(self.P, axis=1)
        proj = np.sum(self.P * self.v_star0, axis=1)
        mean_align = self.align_sum / self.n_scored
        zone = in_zone(self.P, self.epm.zone_eps)
        succ = success_codes(self.t, norm, proj, self.E, mean_align, zone, self.th, self.epm)
        fail = failure_codes(self.t, self.dE_hist, self.norm_hist, self.n_scored, self.epm)
        return termination_codes(self.t, succ, fail, self.epm)
