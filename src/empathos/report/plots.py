"""Interactive figures of the HTML report, as plotly figure dicts (data + layout).

Built with ``plotly.graph_objects`` (so every property is validated) and turned into plain
JSON-ready dicts; the page draws them with the inlined plotly.js. Trajectories of one model
and one outcome share a trace (lines separated by gaps) to keep the page small.
"""

from __future__ import annotations

import functools
import textwrap
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from empathos.report.data import DialogueSummary, ReportData

__all__ = [
    "OUTCOME_COLOURS",
    "PALETTE",
    "RADAR_FILL_MAX",
    "breakdown_figure",
    "heatmap_figure",
    "leaderboard_figure",
    "page_template",
    "trajectory_figures",
    "usage_figure",
    "wrap_label",
]

Figure = dict[str, Any]
#: A colour per model, enough for a large leaderboard (plotly's default cycle repeats at 10).
PALETTE: tuple[str, ...] = tuple(qualitative.Dark24)
#: The static radar figures fill polygons up to this many models; beyond it only outlines.
RADAR_FILL_MAX = 6
OUTCOME_COLOURS = {"success": "#2a9d4b", "failure": "#d1495b", "other": "#8a8f98"}
AXES = ("C", "A", "P")
_PROJ = ((0, 1), (0, 2), (1, 2))
_LAYOUT = {"margin": {"l": 50, "r": 20, "t": 40, "b": 40}}


@functools.cache
def page_template() -> dict[str, Any]:
    """The plotly template (``plotly_white``) the page gives every figure: sent once, not
    with each figure (building it into every figure was most of the time these take)."""
    out: dict[str, Any] = pio.templates["plotly_white"].to_plotly_json()
    return out


def wrap_label(label: str, sep: str = "\n", width: int = 14) -> str:
    """A breakdown label for an axis: underscores as spaces, lines of about ``width``
    characters joined by ``sep`` (long labels such as ``physical_mental_health`` are not
    clipped at the plot's edge)."""
    return sep.join(textwrap.wrap(label.replace("_", " "), width)) or label


def _plain(fig: go.Figure) -> Figure:
    out: Figure = fig.to_plotly_json()
    out["layout"].pop("template", None)  # plotly's default; the page applies page_template()
    return out


def leaderboard_figure(data: ReportData) -> Figure:
    """EPM-Q per model with its 95% bootstrap interval."""
    names = data.model_names
    ys = [m.row.epmq or 0.0 for m in data.models]
    cis = [m.ci.get("epmq") or (y, y) for m, y in zip(data.models, ys, strict=True)]
    lo = [y - ci[0] for y, ci in zip(ys, cis, strict=True)]
    hi = [ci[1] - y for y, ci in zip(ys, cis, strict=True)]
    fig = go.Figure(
        go.Bar(
            x=names,
            y=ys,
            error_y={"type": "data", "array": hi, "arrayminus": lo, "visible": True},
            marker_color="#3b6ea8",
            hovertemplate="%{x}<br>EPM-Q %{y:.2f}<extra></extra>",
        )
    )
    fig.update_layout(title="EPM-Q with 95% bootstrap interval", yaxis_title="EPM-Q", **_LAYOUT)
    return _plain(fig)


def breakdown_figure(data: ReportData, grouping: str) -> Figure:
    """Mean EPM-Q per model (rows) and label of ``grouping`` (columns: domain, mechanism,
    persona), as a heatmap with the value in each cell.

    Readable at a full leaderboard (16 models and more): a row per model, so the plot grows
    with the models instead of overplotting them; no legend (the models are the rows, the
    colour bar is narrow), column labels wrapped."""
    per_model = data.breakdowns.get(grouping, {})
    labels = sorted({lab for per in per_model.values() for lab in per})
    names = data.model_names
    z: list[list[float | None]] = []
    n: list[list[int]] = []
    for name in names:
        per = per_model.get(name, {})
        z.append([round(per[lab][0], 2) if lab in per else None for lab in labels])
        n.append([per[lab][1] if lab in per else 0 for lab in labels])
    fig = go.Figure(
        go.Heatmap(
            z=z, x=labels, y=names, customdata=n, colorscale="RdYlGn",
            texttemplate="%{z:.1f}", textfont={"size": 11}, xgap=1, ygap=1,
            colorbar={"thickness": 12, "title": {"text": "EPM-Q"}},
            hovertemplate="%{y}<br>%{x}: %{z:.2f} (%{customdata} dialogues)<extra></extra>",
        )
    )  # fmt: skip
    fig.update_layout(
        title=f"EPM-Q by {grouping}",
        xaxis={
            "type": "category", "side": "top", "tickmode": "array", "tickvals": labels,
            "ticktext": [wrap_label(lab, "<br>") for lab in labels], "tickfont": {"size": 11},
        },
        yaxis={"type": "category", "automargin": True, "autorange": "reversed"},
        height=160 + 26 * len(names),
        margin={"l": 60, "r": 20, "t": 110, "b": 20},
    )  # fmt: skip
    return _plain(fig)


def heatmap_figure(data: ReportData) -> Figure:
    """Models x scenarios: mean EPM-Q (and, by the menu, mean final ||P||) over trials."""
    names = data.model_names
    sids = data.scenario_ids
    cell: dict[tuple[str, str], list[DialogueSummary]] = {}
    for d in data.dialogues:
        cell.setdefault((d.model, d.scenario_id), []).append(d)

    def grid(metric: str) -> list[list[float | None]]:
        out: list[list[float | None]] = []
        for m in names:
            row: list[float | None] = []
            for s in sids:
                vals = [
                    v
                    for d in cell.get((m, s), [])
                    if (v := (d.epmq if metric == "epmq" else d.final_norm)) is not None
                ]
                row.append(round(sum(vals) / len(vals), 2) if vals else None)
            out.append(row)
        return out

    fig = go.Figure()
    for i, (metric, title, scale) in enumerate(
        (("epmq", "EPM-Q", "RdYlGn"), ("final", "final ||P||", "RdYlGn_r"))
    ):
        fig.add_trace(
            go.Heatmap(
                z=grid(metric), x=sids, y=names, colorscale=scale, visible=i == 0, name=title,
                hovertemplate="%{y}<br>%{x}<br>" + title + " %{z:.2f}<extra></extra>",
            )
        )  # fmt: skip
    buttons = [
        {"label": t, "method": "update", "args": [{"visible": [i == 0, i == 1]}]}
        for i, t in enumerate(("EPM-Q", "final ||P||"))
    ]
    fig.update_layout(
        title="Per case (mean over trials)",
        updatemenus=[{"buttons": buttons, "x": 1.0, "y": 1.15, "xanchor": "right"}],
        xaxis={"type": "category", "tickangle": -45},
        yaxis={"type": "category", "automargin": True},
        height=max(300, 40 + 28 * len(names)),
        **_LAYOUT,
    )
    return _plain(fig)


def _short(x: float) -> float | int:
    """``x`` to 2 decimals, written without ``.0`` when whole (states are often integers)."""
    r = round(x, 2)
    return int(r) if r.is_integer() else r


def _lines(dialogues: Sequence[DialogueSummary], dims: Sequence[int]) -> list[list[Any]]:
    cols: list[list[Any]] = [[] for _ in dims]
    text: list[Any] = []
    for d in dialogues:
        for pt in d.trajectory:
            for c, k in zip(cols, dims, strict=True):
                c.append(_short(pt[k]))
            text.append(d.scenario_id)
        for c in cols:
            c.append(None)
        text.append(None)
    return [*cols, text]


def _region_mesh(hi: float) -> go.Mesh3d:
    """The in-zone success region (every axis >= -1), cut at ``hi``: a translucent box."""
    lo = -1.0
    xs = [lo, hi, hi, lo, lo, hi, hi, lo]
    ys = [lo, lo, hi, hi, lo, lo, hi, hi]
    zs = [lo, lo, lo, lo, hi, hi, hi, hi]
    return go.Mesh3d(
        x=xs, y=ys, z=zs, alphahull=0, opacity=0.15, color="#2a9d4b",
        name="success region (every axis >= -1)", hoverinfo="name", showlegend=True,
    )  # fmt: skip


def _inject(fig: Figure, arrays: Sequence[dict[str, list[Any]]]) -> Figure:
    """Put the point arrays into the figure's traces, in order. plotly validates every element
    of an array it is given (a deep copy and a check per point); the arrays here are plain
    numbers and strings, so the traces are validated without them and they are added after."""
    for trace, cols in zip(fig["data"], arrays, strict=True):
        trace.update(cols)
    return fig


def _trajectories_3d(dls: Sequence[DialogueSummary], hi: float, model: str) -> Figure:
    """The 3-D trajectories, one trace per outcome, the starts and the success region."""
    fig = go.Figure()
    arrays: list[dict[str, list[Any]]] = []
    for outcome, colour in OUTCOME_COLOURS.items():
        group = [d for d in dls if d.outcome == outcome]
        if not group:
            continue
        x, y, z, text = _lines(group, (0, 1, 2))
        fig.add_trace(
            go.Scatter3d(
                mode="lines", name=outcome, line={"color": colour, "width": 3},
                hovertemplate="%{text}<br>C %{x} A %{y} P %{z}<extra>" + outcome + "</extra>",
            )
        )  # fmt: skip
        arrays.append({"x": x, "y": y, "z": z, "text": text})
    starts = [d.trajectory[0] for d in dls]
    fig.add_trace(
        go.Scatter3d(
            x=[p[0] for p in starts], y=[p[1] for p in starts], z=[p[2] for p in starts],
            mode="markers", name="start P_0", marker={"size": 3, "color": "#222"},
        )
    )  # fmt: skip
    fig.add_trace(_region_mesh(hi))
    arrays += [{}, {}]
    fig.update_layout(
        title=f"{model}: trajectories in C/A/P space",
        scene={"xaxis_title": "C", "yaxis_title": "A", "zaxis_title": "P"},
        height=520,
        **_LAYOUT,
    )
    return _inject(_plain(fig), arrays)


def _projections(dls: Sequence[DialogueSummary], hi: float, model: str) -> Figure:
    """The trajectories' three 2-D projections (C-A, C-P, A-P) with the success region."""
    proj = make_subplots(rows=1, cols=3, subplot_titles=("C-A", "C-P", "A-P"))
    arrays: list[dict[str, list[Any]]] = []
    for outcome, colour in OUTCOME_COLOURS.items():
        group = [d for d in dls if d.outcome == outcome]
        for col, (a, b) in enumerate(_PROJ, start=1) if group else ():
            u, v, t = _lines(group, (a, b))
            proj.add_trace(
                go.Scatter(
                    mode="lines", name=outcome, legendgroup=outcome,
                    showlegend=col == 1, line={"color": colour, "width": 1.5},
                    hovertemplate="%{text}<extra></extra>",
                ),
                row=1, col=col,
            )  # fmt: skip
            arrays.append({"x": u, "y": v, "text": t})
    starts = [d.trajectory[0] for d in dls]
    for col, (a, b) in enumerate(_PROJ, start=1):
        proj.add_trace(
            go.Scatter(
                x=[p[a] for p in starts], y=[p[b] for p in starts], mode="markers",
                name="start P_0", legendgroup="start", showlegend=col == 1,
                marker={"size": 4, "color": "#222"},
            ),
            row=1, col=col,
        )  # fmt: skip
        arrays.append({})
        proj.add_shape(
            type="rect", x0=-1, y0=-1, x1=hi, y1=hi, row=1, col=col,
            fillcolor="rgba(42,157,75,0.12)", line={"width": 0},
        )  # fmt: skip
        proj.update_xaxes(title_text=AXES[a], row=1, col=col)
        proj.update_yaxes(title_text=AXES[b], row=1, col=col)
    proj.update_layout(title=f"{model}: 2-D projections", height=380, **_LAYOUT)
    return _inject(_plain(proj), arrays)


def trajectory_figures(data: ReportData, model: str) -> tuple[Figure, Figure]:
    """The 3-D trajectories of one model's dialogues and their three 2-D projections."""
    dls = [d for d in data.dialogues if d.model == model and d.trajectory]
    hi = max([2.0, *(max(p) for d in dls for p in d.trajectory)])
    return _trajectories_3d(dls, hi, model), _projections(dls, hi, model)


def usage_figure(data: ReportData) -> Figure | None:
    """Tokens per role and model (None when no record carries token counts)."""
    roles = sorted({r for m in data.models for r in m.usage.roles})
    if not roles or not any(
        u.input_tokens + u.output_tokens for m in data.models for u in m.usage.roles.values()
    ):
        return None
    fig = go.Figure()
    for role in roles:
        counts = [m.usage.roles.get(role) for m in data.models]
        fig.add_trace(
            go.Bar(
                name=role,
                x=data.model_names,
                y=[0 if c is None else c.input_tokens + c.output_tokens for c in counts],
            )
        )
    fig.update_layout(barmode="stack", title="Tokens per role", yaxis_title="tokens", **_LAYOUT)
    return _plain(fig)
