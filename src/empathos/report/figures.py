"""Static figures for papers (matplotlib): the same plots as the HTML report, as PNG and SVG.

Each function draws one figure and returns it; :func:`save_figures` writes them all.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; never a window

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from empathos.report.data import ReportData
from empathos.report.labels import GROUPINGS
from empathos.report.plots import OUTCOME_COLOURS

__all__ = [
    "heatmap_plot",
    "leaderboard_plot",
    "radar_plot",
    "save_figures",
    "trajectory_plot",
]

_PROJ = ((0, 1, "C", "A"), (0, 2, "C", "P"), (1, 2, "A", "P"))


def leaderboard_plot(data: ReportData) -> Figure:
    """EPM-Q per model with 95% bootstrap intervals."""
    fig, ax = plt.subplots(figsize=(max(4.0, 0.6 * len(data.models) + 2), 3.2))
    ys = [m.row.epmq if m.row.epmq is not None else 0.0 for m in data.models]
    cis = [m.ci.get("epmq") or (y, y) for m, y in zip(data.models, ys, strict=True)]
    lo = [y - ci[0] for y, ci in zip(ys, cis, strict=True)]
    hi = [ci[1] - y for y, ci in zip(ys, cis, strict=True)]
    x = np.arange(len(ys))
    ax.bar(x, ys, yerr=[lo, hi], capsize=3, color="#3b6ea8")
    ax.set_xticks(x, data.model_names, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("EPM-Q")
    ax.set_title("EPM-Q with 95% bootstrap interval", fontsize=10)
    fig.tight_layout()
    return fig


def radar_plot(data: ReportData, grouping: str) -> Figure:
    """Mean EPM-Q per label of ``grouping``, one polygon per model."""
    per_model = data.breakdowns.get(grouping, {})
    labels = sorted({lab for per in per_model.values() for lab in per})
    fig = plt.figure(figsize=(5.2, 4.4))
    ax = fig.add_subplot(projection="polar")
    if labels:
        angles = np.linspace(0, 2 * math.pi, len(labels), endpoint=False).tolist()
        for name in data.model_names:
            per = per_model.get(name, {})
            r = [per[lab][0] if lab in per else np.nan for lab in labels]
            ax.plot([*angles, angles[0]], [*r, r[0]], label=name, linewidth=1.2)
            ax.fill([*angles, angles[0]], [*r, r[0]], alpha=0.12)
        ax.set_xticks(angles, labels, fontsize=7)
    ax.set_title(f"EPM-Q by {grouping}", fontsize=10)
    ax.legend(fontsize=6, loc="upper right", bbox_to_anchor=(1.35, 1.1))
    fig.tight_layout()
    return fig


def heatmap_plot(data: ReportData) -> Figure:
    """Models x scenarios, mean EPM-Q over trials."""
    names, sids = data.model_names, data.scenario_ids
    z = np.full((len(names), len(sids)), np.nan)
    acc: dict[tuple[int, int], list[float]] = {}
    mi = {m: i for i, m in enumerate(names)}
    si = {s: j for j, s in enumerate(sids)}
    for d in data.dialogues:
        if d.epmq is not None:
            acc.setdefault((mi[d.model], si[d.scenario_id]), []).append(d.epmq)
    for (i, j), v in acc.items():
        z[i, j] = float(np.mean(v))
    fig, ax = plt.subplots(
        figsize=(max(5.0, 0.28 * len(sids) + 3), max(2.0, 0.35 * len(names) + 1.4))
    )
    im = ax.imshow(z, aspect="auto", cmap="RdYlGn")
    ax.set_xticks(range(len(sids)), sids, rotation=90, fontsize=6)
    ax.set_yticks(range(len(names)), names, fontsize=7)
    fig.colorbar(im, ax=ax, label="EPM-Q")
    ax.set_title("Per case (mean EPM-Q over trials)", fontsize=10)
    fig.tight_layout()
    return fig


def trajectory_plot(data: ReportData, model: str) -> Figure:
    """One model's trajectories in 3-D and the three projections, coloured by outcome."""
    fig = plt.figure(figsize=(12, 3.4))
    ax3 = fig.add_subplot(1, 4, 1, projection="3d")
    axes = [fig.add_subplot(1, 4, k) for k in (2, 3, 4)]
    for d in data.dialogues:
        if d.model != model or not d.trajectory:
            continue
        p = np.asarray(d.trajectory)
        colour = OUTCOME_COLOURS.get(d.outcome, "#b26b00")
        ax3.plot(p[:, 0], p[:, 1], p[:, 2], color=colour, linewidth=0.8)
        ax3.scatter(p[0, 0], p[0, 1], p[0, 2], color="#222", s=4)
        for ax, (a, b, _, _) in zip(axes, _PROJ, strict=True):
            ax.plot(p[:, a], p[:, b], color=colour, linewidth=0.8)
            ax.scatter(p[0, a], p[0, b], color="#222", s=4)
    ax3.set_xlabel("C")
    ax3.set_ylabel("A")
    ax3.set_zlabel("P")
    for ax, (_, _, xa, ya) in zip(axes, _PROJ, strict=True):
        lo, hi = ax.get_xlim()[1], ax.get_ylim()[1]
        ax.add_patch(
            Rectangle((-1, -1), max(lo, 1) + 1, max(hi, 1) + 1, color="#2a9d4b", alpha=0.12)
        )
        ax.set_xlabel(xa)
        ax.set_ylabel(ya)
    handles = [Line2D([], [], color=c, label=o) for o, c in OUTCOME_COLOURS.items()]
    axes[-1].legend(handles=handles, fontsize=7, loc="lower right")
    fig.suptitle(f"{model}: trajectories (shaded: every axis >= -1)", fontsize=10)
    fig.tight_layout()
    return fig


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "model"


def save_figures(data: ReportData, out: Path) -> list[Path]:
    """Write every figure as PNG and SVG under ``out``; returns the files written."""
    out.mkdir(parents=True, exist_ok=True)
    figs: list[tuple[str, Figure]] = [("leaderboard", leaderboard_plot(data))]
    figs += [(f"radar_{g}", radar_plot(data, g)) for g in GROUPINGS]
    figs.append(("heatmap", heatmap_plot(data)))
    written: list[Path] = []
    for name, fig in figs:
        written += _save(fig, out, name)
    for m in data.model_names:
        written += _save(trajectory_plot(data, m), out, f"trajectories_{_slug(m)}")
    return written


def _save(fig: Figure, out: Path, name: str) -> list[Path]:
    paths = [out / f"{name}.png", out / f"{name}.svg"]
    fig.savefig(paths[0], dpi=110)
    fig.savefig(paths[1])
    plt.close(fig)
    return paths
