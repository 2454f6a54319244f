"""Static figures for papers (matplotlib): the same plots as the HTML report, as PNG and SVG.

Each function draws one figure and returns it; :func:`save_figures` writes them all.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, cast

import matplotlib

matplotlib.use("Agg")  # files only; never a window

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from empathos.report.data import ReportData
from empathos.report.labels import GROUPINGS
from empathos.report.plots import OUTCOME_COLOURS, RADAR_FILL_MAX, wrap_label

__all__ = [
    "heatmap_plot",
    "leaderboard_plot",
    "radar_plot",
    "save_figures",
    "save_summary_figures",
    "save_trajectory_figures",
    "trajectory_plot",
]

_PROJ = ((0, 1, "C", "A"), (0, 2, "C", "P"), (1, 2, "A", "P"))
_ERROR_COLOUR = "#b26b00"


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
    """Mean EPM-Q per label of ``grouping``, one polygon per model.

    As readable at 16 models as at 2: a colour per model (tab20, then dashed), outlines only
    beyond ``RADAR_FILL_MAX`` models, the legend in its own column beside the plot (never
    over it), axis labels wrapped; saved with a tight bounding box, so nothing is clipped."""
    per_model = data.breakdowns.get(grouping, {})
    labels = sorted({lab for per in per_model.values() for lab in per})
    names = data.model_names
    ncol = 1 if len(names) <= 18 else 2
    fig = plt.figure(figsize=(6.2 + 1.6 * ncol, 4.8))
    ax = fig.add_axes((0.07, 0.08, 0.58 - 0.1 * ncol, 0.8), projection="polar")
    tab20 = plt.get_cmap("tab20")
    colours = [tab20(i) for i in range(tab20.N)]
    if labels:
        angles = np.linspace(0, 2 * math.pi, len(labels), endpoint=False).tolist()
        for i, name in enumerate(names):
            per = per_model.get(name, {})
            r = [per[lab][0] if lab in per else np.nan for lab in labels]
            colour = colours[i % len(colours)]
            style = "-" if i < len(colours) else "--"
            ax.plot([*angles, angles[0]], [*r, r[0]], style, color=colour, label=name, lw=1.2)
            if len(names) <= RADAR_FILL_MAX:
                ax.fill([*angles, angles[0]], [*r, r[0]], color=colour, alpha=0.12)
        ax.set_xticks(angles, [wrap_label(lab) for lab in labels], fontsize=7)
        ax.tick_params(axis="x", pad=8)
    ax.set_title(f"EPM-Q by {grouping}", fontsize=10, pad=14)
    if names:
        fig.legend(
            loc="center left", bbox_to_anchor=(0.72 - 0.1 * ncol, 0.5), fontsize=7,
            ncol=ncol, frameon=False,
        )  # fmt: skip
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


def _joined(dialogues: list[np.ndarray]) -> np.ndarray:
    """Trajectories stacked into one array, a row of NaN after each: one line artist draws
    them all (matplotlib breaks a line at NaN), which is much faster than one per dialogue."""
    gap = np.full((1, 3), np.nan)
    return np.concatenate([x for p in dialogues for x in (p, gap)]) if dialogues else gap


class _TrajectoryCanvas:
    """The trajectory figure (3-D and the three projections), built once and redrawn for each
    model by replacing the points: setting up a figure's axes costs more than drawing them."""

    def __init__(self) -> None:
        self.fig = plt.figure(figsize=(12, 3.4))
        # fixed places (no tight_layout: it draws the figure once more to measure it)
        # Axes3D and Line3D: matplotlib's 3-D toolkit has no type hints
        self.ax3 = cast(Any, self.fig.add_axes((0.0, 0.08, 0.25, 0.8), projection="3d"))
        self.axes = [self.fig.add_axes((0.335 + 0.24 * k, 0.16, 0.175, 0.7)) for k in range(3)]
        empty = np.full(1, np.nan)
        self.lines3: dict[str, Any] = {
            o: self.ax3.plot(empty, empty, empty, color=c, linewidth=0.8)[0]
            for o, c in (*OUTCOME_COLOURS.items(), ("error", _ERROR_COLOUR))
        }
        self.lines2 = [
            {o: ax.plot(empty, empty, color=line.get_color(), linewidth=0.8)[0]
             for o, line in self.lines3.items()}
            for ax in self.axes
        ]  # fmt: skip
        dot = "o"  # start points: markers only
        self.start3: Any = self.ax3.plot(empty, empty, empty, dot, color="#222", markersize=1.5)[0]
        self.start2 = [
            ax.plot(empty, empty, dot, color="#222", markersize=1.5)[0] for ax in self.axes
        ]
        self.regions = [Rectangle((-1, -1), 1, 1, color="#2a9d4b", alpha=0.12) for _ in self.axes]
        for ax, region in zip(self.axes, self.regions, strict=True):
            ax.add_patch(region)
        self.ax3.set_xlabel("C")
        self.ax3.set_ylabel("A")
        self.ax3.set_zlabel("P")
        for ax, (_, _, xa, ya) in zip(self.axes, _PROJ, strict=True):
            ax.set_xlabel(xa)
            ax.set_ylabel(ya)
        handles = [Line2D([], [], color=c, label=o) for o, c in OUTCOME_COLOURS.items()]
        self.axes[-1].legend(handles=handles, fontsize=7, loc="lower right")
        self.title = self.fig.suptitle("", fontsize=10)

    def draw(self, data: ReportData, model: str) -> Figure:
        """Show ``model``'s trajectories, coloured by outcome, start points in black."""
        paths: dict[str, list[np.ndarray]] = {o: [] for o in self.lines3}
        for d in data.dialogues:
            if d.model == model and d.trajectory:
                key = d.outcome if d.outcome in paths else "error"
                paths[key].append(np.asarray(d.trajectory, dtype=np.float64))
        every = [p for group in paths.values() for p in group]
        for outcome, group in paths.items():
            p = _joined(group)
            self.lines3[outcome].set_data_3d(p[:, 0], p[:, 1], p[:, 2])
            for lines, (a, b, _, _) in zip(self.lines2, _PROJ, strict=True):
                lines[outcome].set_data(p[:, a], p[:, b])
        s = np.asarray([p[0] for p in every]) if every else np.full((1, 3), np.nan)
        self.start3.set_data_3d(s[:, 0], s[:, 1], s[:, 2])
        pts = np.concatenate(every) if every else np.zeros((1, 3))
        lo = np.minimum(pts.min(axis=0), -1.0)
        hi = np.maximum(pts.max(axis=0), 1.0)
        pad = 0.05 * (hi - lo)
        lo, hi = lo - pad, hi + pad
        self.ax3.set_xlim3d(lo[0], hi[0])
        self.ax3.set_ylim3d(lo[1], hi[1])
        self.ax3.set_zlim3d(lo[2], hi[2])
        for ax, start, region, (a, b, _, _) in zip(
            self.axes, self.start2, self.regions, _PROJ, strict=True
        ):
            start.set_data(s[:, a], s[:, b])
            ax.set_xlim(lo[a], hi[a])
            ax.set_ylim(lo[b], hi[b])
            region.set_width(hi[a] + 1)
            region.set_height(hi[b] + 1)
        self.title.set_text(f"{model}: trajectories (shaded: every axis >= -1)")
        return self.fig


def trajectory_plot(data: ReportData, model: str) -> Figure:
    """One model's trajectories in 3-D and the three projections, coloured by outcome."""
    return _TrajectoryCanvas().draw(data, model)


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "model"


def save_figures(data: ReportData, out: Path) -> list[Path]:
    """Write every figure as PNG and SVG under ``out``; returns the files written."""
    return save_summary_figures(data, out) + save_trajectory_figures(data, out)


def save_summary_figures(data: ReportData, out: Path) -> list[Path]:
    """The leaderboard, the three radars and the heatmap, as PNG and SVG under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    figs: list[tuple[str, Figure]] = [("leaderboard", leaderboard_plot(data))]
    figs += [(f"radar_{g}", radar_plot(data, g)) for g in GROUPINGS]
    figs.append(("heatmap", heatmap_plot(data)))
    written: list[Path] = []
    for name, fig in figs:
        written += _save(fig, out, name, tight=name.startswith("radar_"))
    return written


def save_trajectory_figures(data: ReportData, out: Path) -> list[Path]:
    """``trajectories_<model>`` for every model, as PNG and SVG under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    if data.model_names:
        canvas = _TrajectoryCanvas()
        for m in data.model_names:
            written += _save(canvas.draw(data, m), out, f"trajectories_{_slug(m)}", close=False)
        plt.close(canvas.fig)
    return written


def _save(
    fig: Figure, out: Path, name: str, *, close: bool = True, tight: bool = False
) -> list[Path]:
    """PNG and SVG of ``fig``; ``tight``: cropped to everything drawn (nothing clipped)."""
    paths = [out / f"{name}.png", out / f"{name}.svg"]
    bbox = "tight" if tight else None
    fig.savefig(paths[0], dpi=110, bbox_inches=bbox)
    fig.savefig(paths[1], bbox_inches=bbox)
    if close:
        plt.close(fig)
    return paths
