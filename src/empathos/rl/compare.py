"""Compare advantage estimators on the SIMULATED environment: same budget, same seeds.

Each estimator trains one policy per seed with identical rollout budgets, persona streams,
evaluation personas and policy initialisations (common random numbers), so differences come
from the estimator. Results are a table with 95% intervals over seeds, learning-curve PNGs and
a JSON with every curve. Every output is labelled as a simulation.

Intervals: a rate (success, its area under the curve, and the paired difference of success
rates) gets a bootstrap percentile interval over seeds (:func:`rate_interval`), which stays
inside the rate's range ([0, 1], or [-1, 1] for a difference) by construction; the other
metrics (EPM-Q-like, distance) get a t-interval (:func:`interval`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field
from scipy import stats as sps

from empathos.records.io import write_text_atomic
from empathos.rl.advantages import get_estimator
from empathos.rl.sim import SIMULATION_LABEL
from empathos.rl.sim_training import TrainConfig, TrainResult, train

__all__ = [
    "LENGTH_METRICS",
    "METRICS",
    "RATES",
    "CompareConfig",
    "MetricSummary",
    "aggregate",
    "interval",
    "metrics_for",
    "plot_curves",
    "rate_interval",
    "run_compare",
    "write_outputs",
]

RATES = frozenset({"success", "auc_success"})
_BOOTSTRAP_RESAMPLES = 9999
METRICS: dict[str, str] = {
    "success": "final success rate",
    "epmq": "EPM-Q-like score",
    "final_distance": "final half-space distance",
    "auc_success": "area under the success curve",
    "length": "mean dialogue length (turns)",
    "length_drift": "mean dialogue length, last evaluation minus the first",
}
LENGTH_METRICS: dict[str, str] = {
    "success": "share closed at the best turn",
    "return": "mean dialogue return (sum of the turn rewards)",
    "length": "mean dialogue length (turns)",
    "length_gap": "mean dialogue length minus the best length",
    "length_drift": "mean dialogue length, last evaluation minus the first",
    "auc_success": "area under the success curve",
}


def metrics_for(env: str) -> dict[str, str]:
    """The table's metrics for the simulation ``env`` ('epm' or 'length')."""
    return LENGTH_METRICS if env == "length" else METRICS


class CompareConfig(BaseModel):
    """What to compare and with which budget."""

    estimators: list[str] = Field(description="Registered estimator names, in table order")
    seeds: int = Field(ge=1, description="Seeds per estimator (the same seeds for each)")
    train: TrainConfig = Field(description="Training run settings (estimator is overridden)")


class MetricSummary(BaseModel):
    """Mean over seeds with a 95% interval and the seed-to-seed standard deviation."""

    mean: float = Field(description="Mean over seeds")
    low: float = Field(
        description="Lower end of the 95% interval (NaN with one seed; null in compare.json)"
    )
    high: float = Field(
        description="Upper end of the 95% interval (NaN with one seed; null in compare.json)"
    )
    std: float = Field(
        description="Seed-to-seed sample standard deviation (NaN with one seed; null in JSON)"
    )


def interval(values: Sequence[float]) -> MetricSummary:
    """Mean, 95% t-interval and sample std of ``values`` (one per seed)."""
    x = np.asarray(values, dtype=np.float64)
    mean = float(x.mean())
    if len(x) < 2:
        return MetricSummary(mean=mean, low=math.nan, high=math.nan, std=math.nan)
    sd = float(x.std(ddof=1))
    half = float(sps.t.ppf(0.975, len(x) - 1)) * sd / math.sqrt(len(x))
    return MetricSummary(mean=mean, low=mean - half, high=mean + half, std=sd)


def rate_interval(values: Sequence[float]) -> MetricSummary:
    """Mean, 95% bootstrap percentile interval and sample std of a rate (one per seed).

    The percentile interval of resampled means lies between the smallest and the largest
    value, so a rate's interval never leaves its range (a t-interval of rates near 0 or 1
    does). Deterministic (a fixed resampling seed). With few seeds it is narrower than it
    should be (percentile bootstrap under-covers for small n): read it as a rough guide."""
    x = np.asarray(values, dtype=np.float64)
    mean = float(x.mean())
    if len(x) < 2:
        return MetricSummary(mean=mean, low=math.nan, high=math.nan, std=math.nan)
    sd = float(x.std(ddof=1))
    if sd == 0.0:
        return MetricSummary(mean=mean, low=mean, high=mean, std=0.0)
    res = sps.bootstrap(
        (x,),
        np.mean,
        confidence_level=0.95,
        n_resamples=_BOOTSTRAP_RESAMPLES,
        method="percentile",
        random_state=np.random.default_rng(0),
    )
    ci = res.confidence_interval
    return MetricSummary(mean=mean, low=float(ci.low), high=float(ci.high), std=sd)


def _final_metrics(res: TrainResult) -> dict[str, float]:
    steps = np.asarray(res.eval_steps, dtype=np.float64)
    succ = np.asarray(res.eval["success"])
    span = steps[-1] - steps[0]
    area = np.sum(np.diff(steps) * (succ[1:] + succ[:-1]) / 2.0)
    auc = float(area / span) if span > 0 else float(succ[-1])
    finals = {key: values[-1] for key, values in res.eval.items()}
    drift = res.eval["length"][-1] - res.eval["length"][0]
    return {**finals, "auc_success": auc, "length_drift": drift}


def aggregate(
    runs: dict[str, list[TrainResult]],
    baseline: str | None = "grpo",
    metrics: dict[str, str] = METRICS,
) -> list[dict[str, Any]]:
    """One table row per estimator: each of ``metrics`` summarised over seeds, plus the paired
    difference in final success against ``baseline`` (same seeds) when it was run."""
    finals = {name: [_final_metrics(r) for r in rs] for name, rs in runs.items()}
    rows: list[dict[str, Any]] = []
    for name, per_seed in finals.items():
        row: dict[str, Any] = {"estimator": name, "seeds": len(per_seed)}
        for metric in metrics:
            summarise = rate_interval if metric in RATES else interval
            row[metric] = summarise([m[metric] for m in per_seed]).model_dump()
        if baseline in finals and name != baseline:
            diff = [
                a["success"] - b["success"] for a, b in zip(per_seed, finals[baseline], strict=True)
            ]
            row[f"success_minus_{baseline}"] = rate_interval(diff).model_dump()
        rows.append(row)
    return rows


def run_compare(
    cfg: CompareConfig, on_step: Callable[[str, int, int], None] | None = None
) -> dict[str, list[TrainResult]]:
    """Train every estimator on every seed (0..seeds-1); ``on_step(name, seed, step)``."""
    for name in cfg.estimators:
        get_estimator(name)  # unknown names fail before any work, listing the valid ones
    runs: dict[str, list[TrainResult]] = {}
    for name in cfg.estimators:
        tc = cfg.train.model_copy(update={"estimator": name})
        for seed in range(cfg.seeds):

            def step_cb(step: int, _n: str = name, _s: int = seed) -> None:
                if on_step is not None:
                    on_step(_n, _s, step)

            runs.setdefault(name, []).append(train(tc, seed, step_cb))
    return runs


def plot_curves(runs: dict[str, list[TrainResult]], out: Path, env: str = "epm") -> list[Path]:
    """Learning curves (mean over seeds with a 95% band, computed like the table's
    intervals): eval success, eval EPM-Q-like (env 'length': eval dialogue length) and
    training-batch return per step. Returns the PNG paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths: list[Path] = []
    panels = (
        ("eval", "success", "success rate (held-out personas)"),
        ("eval", "length", "mean dialogue length (turns)")
        if env == "length"
        else ("eval", "epmq", "EPM-Q-like score (held-out personas)"),
        ("train", "return", "training batch: mean dialogue return"),
    )
    for source, key, label in panels:
        fig, ax = plt.subplots(figsize=(7, 4.2))
        for name, rs in runs.items():
            curves = np.array([getattr(r, source)[key] for r in rs])
            x = np.asarray(rs[0].eval_steps if source == "eval" else range(1, curves.shape[1] + 1))
            mean = curves.mean(axis=0)
            ax.plot(x, mean, label=name)
            if len(rs) > 1:
                summarise = rate_interval if key in RATES else interval
                bands = [summarise(curves[:, i].tolist()) for i in range(curves.shape[1])]
                low, high = [b.low for b in bands], [b.high for b in bands]
                ax.fill_between(x, low, high, alpha=0.15)
        ax.set_xlabel("policy update")
        ax.set_ylabel(label)
        ax.set_title(f"SIMULATION: {label}", fontsize=10)
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = out / f"curve_{source}_{key}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


def _finite_or_null(obj: Any) -> Any:
    """``obj`` with every NaN or infinite float replaced by None (JSON ``null``)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite_or_null(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite_or_null(v) for v in obj]
    return obj


def write_outputs(
    cfg: CompareConfig, runs: dict[str, list[TrainResult]], table: list[dict[str, Any]], out: Path
) -> list[Path]:
    """Write ``compare.json`` (label, config, table, every curve) and the PNGs into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    curves = {
        name: [
            {"seed": s, "train": r.train, "eval_steps": r.eval_steps, "eval": r.eval}
            for s, r in enumerate(rs)
        ]
        for name, rs in runs.items()
    }
    doc = {
        "label": SIMULATION_LABEL,
        "config": cfg.model_dump(mode="json"),
        "metrics": metrics_for(cfg.train.env),
        "table": table,
        "curves": curves,
    }
    # strict JSON: an undefined number (an interval over one seed) is written as null
    text = json.dumps(_finite_or_null(doc), indent=1, allow_nan=False)
    path = write_text_atomic(out / "compare.json", text)
    return [path, *plot_curves(runs, out, cfg.train.env)]
