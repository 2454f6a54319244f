"""Typed configuration of the Empathy Potential Model (EPM_SPEC sections 4-6)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from empathos.errors import ConfigError

__all__ = ["EPMConfig", "PresetName"]

PresetName = Literal["reference", "paper"]


class EPMConfig(BaseModel):
    """Every parameter of the dynamics, termination and scoring. Frozen.

    ``EPMConfig.preset("reference")`` (the default) reproduces the published leaderboard;
    ``EPMConfig.preset("paper")`` follows the paper's appendix.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    name: PresetName = Field(default="reference", description="Preset this config started from.")
    alpha: float = Field(
        default=0.1, gt=0, description="epsilon_dist = epsilon_dir = alpha * r_0 (release: 0.05)."
    )
    min_turns: int = Field(default=12, ge=0, description="No success or failure before this turn.")
    max_turns: int = Field(default=45, ge=1, description="Timeout turn.")
    eval_every: int = Field(default=1, ge=1, description="K: the judge rates every K turns.")
    direction: Literal["fixed", "current"] = Field(
        default="fixed",
        description="Direction per step: fixed v*_0 (reference) or -P_{t-1}/|P_{t-1}| (paper).",
    )
    success_rule: Literal["reference", "paper"] = Field(
        default="reference", description="Which victory conditions apply (EPM_SPEC 5.1)."
    )
    in_zone_success: bool = Field(
        default=True, description="Also accept success when every axis >= -zone_eps."
    )
    zone_eps: float = Field(
        default=1.0, ge=0, description="eps of the half-space distance and in-zone test."
    )
    tau_align: float = Field(
        default=0.7,
        description="paper rule: mean alignment above this is a companionship victory "
        "(no value is published; 0.7 is the project's default).",
    )
    collapse_window: int = Field(
        default=5, ge=1, description="Directional collapse: this many last points all delta_E < 0."
    )
    stagnation_window: int = Field(
        default=5, ge=2, description="Stagnation: window of the sample std of ||P||."
    )
    stagnation_std: float = Field(default=0.5, description="Stagnation: std threshold (strict <).")
    regression_window: int = Field(default=8, ge=1, description="Regression: window length.")
    regression_ratio: float = Field(
        default=0.7, description="Regression: share of negative delta_E that must be exceeded."
    )
    regression_sum: float = Field(
        default=-1.0, description="Regression: window sum of delta_E must be below this."
    )
    unscored_share_limit: float = Field(
        default=0.2, ge=0, le=1, description="A dialogue with a larger unscored share is an error."
    )
    threshold_decimals: int | None = Field(
        default=2, description="Round thresholds to this many decimals (None: no rounding)."
    )
    energy_decimals: int | None = Field(
        default=2,
        description="Compare the energy condition on E_total rounded to this (None: exact).",
    )
    scoring: Literal["reference", "paper"] = Field(
        default="reference", description="EPM-Q index definitions (EPM_SPEC 6.1 or 6.2)."
    )
    weights: tuple[float, float, float] = Field(
        default=(0.4, 0.2, 0.4), description="EPM-Q weights of Outcome, Efficiency, Stability."
    )

    @model_validator(mode="after")
    def _turns(self) -> EPMConfig:
        if self.max_turns < self.min_turns:
            raise ValueError("max_turns must be >= min_turns")
        return self

    @classmethod
    def preset(cls, name: str, **overrides: object) -> EPMConfig:
        """Build a named preset, with optional field overrides."""
        if name == "reference":
            base: dict[str, object] = {}
        elif name == "paper":
            base = {
                "name": "paper",
                "direction": "current",
                "success_rule": "paper",
                "threshold_decimals": None,
                "energy_decimals": None,
                "scoring": "paper",
            }
        else:
            raise ConfigError(
                f"unknown EPM preset {name!r} (valid: reference, paper)", field="preset"
            )
        return cls.model_validate({**base, **overrides})
