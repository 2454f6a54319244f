"""The self-contained HTML report: one file with plotly.js inlined, compact JSON data, and
the dialogues' details bzip2-compressed, the dialogues of one model together in packs of up
to about 2 MB of JSON (unpacked by the page when a dialogue of the pack is first opened)."""

from __future__ import annotations

import bz2
import functools
import gzip
import html
import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
from plotly.offline import get_plotlyjs

from empathos.epm import INDEX_NAMES
from empathos.records import DialogueRecord, IndicatorRating
from empathos.report.assets import BUNZIP2, CSS, LOADER, SCRIPT
from empathos.report.data import ReportData
from empathos.report.labels import GROUPINGS
from empathos.report.plots import (
    breakdown_figure,
    heatmap_figure,
    leaderboard_figure,
    page_template,
    trajectory_figures,
    usage_figure,
)
from empathos.report.tables import plural
from empathos.scoring.usage import usage_summary

__all__ = [
    "DIALOGUE_COLUMNS",
    "PACK_BYTES",
    "DialoguePacks",
    "dialogue_detail",
    "json_for_script",
    "leaderboard_html",
    "pack_dialogues",
    "render_html",
    "text85",
]

DIALOGUE_COLUMNS = (
    "model", "scenario", "trial", "outcome", "termination", "turns", "epmq", *GROUPINGS,
    "pack", "item",
)  # fmt: skip

#: A pack closes once its JSON reaches this many bytes (bzip2 compresses 900 kB blocks on
#: their own, so larger packs gain little, and the page unpacks one pack at a time).
PACK_BYTES = 2_000_000


def _r(x: float | None, d: int = 3) -> float | None:
    return None if x is None else round(x, d)


def _ratings(ratings: dict[str, IndicatorRating]) -> list[list[Any]]:
    return [[k, r.level, r.evidence, r.reasoning] for k, r in ratings.items()]


def dialogue_detail(rec: DialogueRecord) -> dict[str, Any]:
    """Everything the dialogue panel shows, as compact JSON-ready data."""
    usage = [
        [role, u.calls, u.input_tokens, u.cached_input_tokens, u.output_tokens, u.cost_usd]
        for role, u in usage_summary([rec]).roles.items()
    ]
    return {
        "p0": [_r(x) for x in rec.initial_state.P],
        "norm0": _r(rec.initial_state.p_norm),
        "iedr": _ratings(rec.iedr.ratings),
        "turns": [[t.user, t.assistant] for t in rec.turns],
        "director": [
            {
                "turn": a.turn,
                "action": a.action,
                "detail": a.detail,
                "source": a.source,
                "honoured": a.honoured,
                "note": a.note,
            }
            for a in rec.director
        ],
        "evals": [
            {
                "turn": e.turn,
                "scored": e.scored,
                "why": e.unscored_reason,
                "ratings": _ratings(e.ratings),
                "P": [_r(x) for x in e.state.P],
                "v": [_r(x) for x in e.state.v] if e.state.v is not None else None,
                "dE": _r(e.state.delta_E),
                "E": _r(e.state.E_total),
                "align": _r(e.state.alignment),
                "norm": _r(e.state.p_norm),
                "zone": e.state.in_zone,
            }
            for e in rec.evaluations
        ],
        "end": {
            "kind": rec.termination.kind.value,
            "turn": rec.termination.turn,
            "reason": rec.termination.reason or "",
        },
        "usage": usage,
    }


@dataclass(frozen=True, slots=True)
class DialoguePacks:
    """The dialogues' details as packs: ``packs[k]`` is :func:`text85` of bzip2 of the JSON array of
    the details of some dialogues of one model; dialogue ``i`` is ``where[i] = (k, j)``, item
    ``j`` of pack ``k``."""

    packs: list[str]
    where: list[tuple[int, int]]


# Base 85: RFC 1924's alphabet (Python's b85encode) with its three characters that a
# <script> element or JSON would escape (&, <, >) swapped for three it does not use: four
# bytes in five characters where base64 takes 5.33 (the page is 6% smaller).
_B85 = np.frombuffer(
    b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%,()*+-;.=:?@^_`{|}~",
    dtype=np.uint8,
)


def text85(raw: bytes) -> str:
    """``raw`` as base-85 text that needs no escaping in JSON or a <script> element (what
    ``base64.b85encode`` writes, three characters swapped, computed with numpy: b85encode
    takes seconds for the packs of a 16-model page); the page decodes it with
    ``window.un85`` (:data:`~empathos.report.assets.LOADER`)."""
    pad = -len(raw) % 4
    words = np.frombuffer(raw + b"\0" * pad, dtype=">u4").astype(np.uint64)
    digits = np.empty((len(words), 5), dtype=np.uint8)
    for i in range(4, -1, -1):
        words, digits[:, i] = np.divmod(words, 85)
    text = _B85[digits].tobytes()
    return text[: len(text) - pad].decode("ascii")


def _compress(raw: bytes) -> str:
    return text85(bz2.compress(raw, 9))


def pack_dialogues(
    models: Sequence[str], records: Sequence[DialogueRecord], *, limit: int = PACK_BYTES
) -> DialoguePacks:
    """Pack the details of dialogue ``i`` (``records[i]`` of model ``models[i]``).

    A pack holds dialogues of one model only, so a dialogue that several models share verbatim
    is stored once per model, and the dialogues of a model, which share the judge's phrasing,
    the rubric keys and the director's templates, compress together (bzip2 takes about 40%
    less than gzip of each dialogue alone on the published sample)."""
    chunks: list[list[str]] = []
    sizes: list[int] = []
    open_pack: dict[str, int] = {}
    where: list[tuple[int, int]] = []
    for model, rec in zip(models, records, strict=True):
        text = json.dumps(dialogue_detail(rec), ensure_ascii=False, separators=(",", ":"))
        k = open_pack.get(model)
        if k is None or sizes[k] >= limit:
            k = open_pack[model] = len(chunks)
            chunks.append([])
            sizes.append(0)
        where.append((k, len(chunks[k])))
        chunks[k].append(text)
        sizes[k] += len(text.encode("utf-8"))
    raws = [("[" + ",".join(c) + "]").encode("utf-8") for c in chunks]
    # bz2 releases the GIL while it compresses: two threads use both cores
    with ThreadPoolExecutor(max_workers=2) as pool:
        packs = list(pool.map(_compress, raws))
    return DialoguePacks(packs=packs, where=where)


def _num(x: float, pct: bool) -> str:
    return f"{100 * x:.0f}%" if pct else f"{x:.2f}"


def _cell(value: float | None, ci: tuple[float, float] | None, pct: bool = False) -> str:
    if value is None:
        return "<td>-</td>"

    def f(x: float) -> str:
        return _num(x, pct)

    band = f'<span class="ci">[{f(ci[0])}, {f(ci[1])}]</span>' if ci else ""
    return f"<td>{f(value)}{band}</td>"


def leaderboard_html(data: ReportData) -> str:
    """The leaderboard as an HTML table, every value with its 95% interval below it."""
    head = ["model", "dialogues", "scenarios", "trials", "errors", "success", "turns to succ.",
            "EPM-Q", "Outcome", "Effic.", "Stab.", *INDEX_NAMES]  # fmt: skip
    rows = ["<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"]
    for m in data.models:
        r = m.row
        tts = r.extra.get("turns_to_success")
        cells = [
            f"<td>{html.escape(r.model)}</td><td>{r.n}</td><td>{m.scenarios}</td>",
            f"<td>{m.trials}</td><td>{r.extra.get('errors', 0)}</td>",
            _cell(r.success_rate, m.ci.get("success_rate"), pct=True),
            _cell(tts["mean"] if tts else None, m.ci.get("turns_to_success")),
            _cell(r.epmq, m.ci.get("epmq")),
            *(_cell(getattr(r, g), m.ci.get(g)) for g in ("outcome", "efficiency", "stability")),
            *(_cell(r.indices.get(k), m.ci.get(k)) for k in INDEX_NAMES),
        ]
        rows.append(f'<tr data-model="{html.escape(r.model)}">' + "".join(cells) + "</tr>")
    return '<table id="leaderboard">' + "".join(rows) + "</table>"


def _cost(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _usage_html(data: ReportData) -> str:
    """Per model: each role, the mean dialogue and the whole run (tokens and cost)."""
    rows = []
    for m in data.models:
        u = m.usage
        parts = [*sorted(u.roles.items()), ("all", u.total)]
        name = html.escape(m.row.model)
        for role, c in parts:
            rows.append(
                f"<tr><td>{name}</td><td>{html.escape(role)}</td><td>{c.calls}</td>"
                f"<td>{c.input_tokens}</td><td>{c.cached_input_tokens}</td>"
                f"<td>{c.output_tokens}</td><td>{_cost(c.cost_usd)}</td></tr>"
            )
        mean = u.per_dialogue
        if mean is not None and u.total.calls:
            rows.append(
                f"<tr><td>{name}</td><td>per dialogue ({u.dialogues})</td>"
                f"<td>{mean.calls:.1f}</td><td>{mean.input_tokens:.0f}</td>"
                f"<td>{mean.cached_input_tokens:.0f}</td><td>{mean.output_tokens:.0f}</td>"
                f"<td>{_cost(mean.cost_usd)}</td></tr>"
            )
    if not any(m.usage.total.calls for m in data.models):
        return '<p class="note">The records carry no model-call usage.</p>'
    head = "<tr><th>model</th><th>role</th><th>calls</th><th>prompt tokens</th>"
    head += "<th>of them cached</th><th>completion tokens</th><th>cost (USD)</th></tr>"
    note = (
        '<p class="note">Cached: the prompt tokens the servers reported as served from their '
        "prefix cache. Cost: the calls priced by the run's price table (-: none was).</p>"
    )
    return '<div id="usage" class="plot"></div><table>' + head + "".join(rows) + "</table>" + note


def _payload(data: ReportData, details: DialoguePacks) -> dict[str, Any]:
    figs: dict[str, Any] = {"fig-leaderboard": leaderboard_figure(data)}
    for g in GROUPINGS:
        figs[f"breakdown-{g}"] = breakdown_figure(data, g)
    figs["heatmap"] = heatmap_figure(data)
    usage = usage_figure(data)
    if usage is not None:
        figs["usage"] = usage
    return {
        "models": data.model_names,
        "template": page_template(),
        "groupings": list(GROUPINGS),
        "figs": figs,
        "traj": {m: list(trajectory_figures(data, m)) for m in data.model_names},
        "dialogue_columns": list(DIALOGUE_COLUMNS),
        "dialogues": [
            [
                d.model,
                d.scenario_id,
                d.trial,
                d.outcome,
                d.termination,
                d.turns,
                _r(d.epmq, 2),
                *(d.labels[g] for g in GROUPINGS),
                *where,
            ]
            for d, where in zip(data.dialogues, details.where, strict=True)
        ],
        "packs": details.packs,
    }


@functools.cache
def _plotly_packed() -> str:
    """plotly.js, gzip'd and base-85 encoded (1.8 MB instead of 4.8 MB); the page unpacks it."""
    raw = get_plotlyjs().encode("utf-8")
    return text85(gzip.compress(raw, 9, mtime=0))


# JSON escapes that keep a string from ending the <script> element or opening a comment in
# it (``</script>``, ``<!--``, ``-->``), and from being read as a line break by an older
# JavaScript parser; each is still the same JSON string.
_SCRIPT_SAFE = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def json_for_script(obj: Any) -> str:
    """``obj`` as JSON to embed in a ``<script>`` element: no string in it can end the
    element or break the JSON (``<`` is written ``\\u003c``, and so on)."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.translate(_SCRIPT_SAFE)


def render_html(
    data: ReportData, details: DialoguePacks, *, title: str, sections: Sequence[str] = ()
) -> str:
    """The whole page. ``details`` holds :func:`pack_dialogues` of ``data.dialogues``;
    ``sections`` are extra HTML sections (the comparison) placed after the leaderboard."""
    counts = f"{plural(len(data.models), 'model')}, {plural(len(data.dialogues), 'dialogue')}"
    notes = "".join(f'<p class="note">{html.escape(n)}</p>' for n in data.notes)
    breakdowns = "".join(f'<div id="breakdown-{g}" class="plot"></div>' for g in GROUPINGS)
    body = f"""
<header><h1>{html.escape(title)}</h1>
<p>{counts}, EPM preset {html.escape(data.preset)}.
Intervals: 95% percentile bootstrap over scenarios (and trials within them), 2,000 resamples.</p>
</header>
<nav><a href="#sec-leaderboard">Leaderboard</a><a href="#sec-breakdowns">Breakdowns</a>
<a href="#sec-cases">Per case</a><a href="#sec-trajectories">Trajectories</a>
<a href="#sec-dialogues">Dialogues</a><a href="#sec-usage">Usage</a></nav>
<section id="sec-leaderboard"><h2>Leaderboard</h2>{leaderboard_html(data)}{notes}
<div id="fig-leaderboard" class="plot"></div></section>
{"".join(sections)}
<section id="sec-breakdowns"><h2>Breakdowns (mean EPM-Q)</h2>
<p class="note">domain: life domain; mechanism: dominant deficit axis x routine (easy, medium)
or hard (hard, very hard); persona: dominant need x receptive (threshold low, medium) or
defensive (high). Scenarios without labels are counted as "unlabelled".</p>
{breakdowns}</section>
<section id="sec-cases"><h2>Per case</h2><div id="heatmap" class="plot"></div></section>
<section id="sec-trajectories"><h2>Trajectories in C/A/P space</h2>
<label>model <select id="traj-model"></select></label>
<div id="traj-3d" class="plot"></div><div id="traj-proj" class="plot"></div></section>
<section id="sec-dialogues"><h2>Dialogues</h2>
<div class="filters"><select id="f-model"><option value="">all models</option></select>
<select id="f-outcome"><option value="">all outcomes</option></select>
<select id="f-label"><option value="">all labels</option></select>
<input id="f-text" type="search" placeholder="scenario id or model">
<span id="dlg-count"></span></div>
<table id="dlg-list"><thead><tr><th>scenario</th><th>model</th><th>trial</th><th>outcome</th>
<th>termination</th><th>turns</th><th>EPM-Q</th></tr></thead><tbody></tbody></table>
<div id="dlg-view"></div></section>
<section id="sec-usage"><h2>Token usage and cost</h2>{_usage_html(data)}</section>
"""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{CSS}</style>"
        f"</head><body>{body}"
        f'<script id="plotly-gz" type="application/octet-stream">{_plotly_packed()}</script>'
        f"<script>{LOADER}{BUNZIP2}</script>"
        f'<script id="report-data" type="application/json">'
        f"{json_for_script(_payload(data, details))}</script>"
        f"<script>{SCRIPT}</script></body></html>\n"
    )
