# ruff: noqa: E501  (JavaScript and CSS lines)
"""The stylesheet and the script of the HTML report (plain strings, inlined into the page).

The script reads the report's JSON (``#report-data``), draws every plot with plotly.js, and
renders a dialogue on demand: its details are stored gzip-compressed and base64-encoded,
one string per dialogue, and unpacked with the browser's ``DecompressionStream``. All record
text goes into the page through ``textContent``, never as HTML.
"""

from __future__ import annotations

__all__ = ["CSS", "LOADER", "SCRIPT"]

#: Unpacks the inlined, gzip'd plotly.js (``#plotly-gz``) and runs it; ``window.plotlyReady``
#: resolves once ``Plotly`` exists.
LOADER = r"""
window.unpackGzip = async function(b64){
  const bin = atob(b64), bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  return await new Response(stream).text();
};
window.plotlyReady = (async function(){
  const code = await window.unpackGzip(document.getElementById('plotly-gz').textContent);
  const s = document.createElement('script');
  s.textContent = code;
  document.head.appendChild(s);
})();
"""

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d2329;background:#f6f7f9}
header{background:#243447;color:#fff;padding:14px 24px}
header h1{margin:0;font-size:20px}header p{margin:4px 0 0;opacity:.85}
nav{padding:6px 24px;background:#e9edf2;position:sticky;top:0;z-index:5}
nav a{margin-right:14px;color:#243447;text-decoration:none;font-weight:600}
section{background:#fff;margin:16px 24px;padding:12px 18px;border-radius:6px;box-shadow:0 1px 2px #0002}
h2{font-size:17px;margin:6px 0 10px}
table{border-collapse:collapse;font-size:12.5px}
#sec-leaderboard,#sec-usage{overflow-x:auto}
th,td{border-bottom:1px solid #e3e6ea;padding:3px 7px;text-align:right;white-space:nowrap}
th:first-child,td:first-child{text-align:left}
td .ci{color:#6b7480;font-size:11px;display:block}
.grid2{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:10px}
.plot{min-height:360px}
.filters{display:flex;flex-wrap:wrap;gap:8px;margin-bottom:8px}
.filters select,.filters input{font:inherit;padding:3px 6px}
#dlg-list{max-height:340px;overflow:auto;border:1px solid #e3e6ea}
#dlg-list tr{cursor:pointer}#dlg-list tr:hover{background:#eef4fb}
#dlg-list tr.sel{background:#dbe9f8}
.o-success{color:#2a9d4b;font-weight:600}.o-failure{color:#d1495b;font-weight:600}
.o-other{color:#8a8f98;font-weight:600}.o-error{color:#b26b00;font-weight:600}
.turn{border-left:3px solid #c9d3de;margin:10px 0;padding:2px 10px}
.line{margin:4px 0;white-space:pre-wrap}
.who{font-weight:700;margin-right:6px}
.user .who{color:#7a4eb0}.assistant .who{color:#1f6fb2}
.director{color:#6b5a00;background:#fff8db;padding:4px 8px;border-radius:4px;white-space:pre-wrap;font-size:12.5px}
details.eval{background:#f3f7f3;padding:4px 8px;border-radius:4px;margin:4px 0;font-size:12.5px}
details.eval table td{white-space:normal;text-align:left;vertical-align:top}
.state{font-family:ui-monospace,monospace;font-size:12px;color:#3d4650}
.muted{color:#6b7480}
.note{color:#6b7480;font-size:12.5px}
"""

SCRIPT = r"""
window.plotlyReady.then(function(){
'use strict';
const D = JSON.parse(document.getElementById('report-data').textContent);
const CFG = {responsive: true, displaylogo: false};
function draw(id, fig){
  const div = document.getElementById(id);
  if (!div || !fig) return;
  Plotly.react(div, fig.data, fig.layout, CFG);
}
function el(tag, attrs, ...kids){
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v; else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const k of kids) if (k !== null && k !== undefined)
    e.appendChild(typeof k === 'string' ? document.createTextNode(k) : k);
  return e;
}
function fmt(x, d){ return (x === null || x === undefined) ? '-' : Number(x).toFixed(d === undefined ? 2 : d); }
function vec(p){ return p ? '(' + p.map(x => fmt(x, 1)).join(', ') + ')' : '-'; }

// ---- plots
for (const [id, fig] of Object.entries(D.figs)) draw(id, fig);
const modelSel = document.getElementById('traj-model');
function drawTraj(){ const t = D.traj[modelSel.value]; draw('traj-3d', t[0]); draw('traj-proj', t[1]); }
if (modelSel) {
  for (const m of D.models) modelSel.appendChild(el('option', {value: m, text: m}));
  modelSel.addEventListener('change', drawTraj);
  drawTraj();
}

// ---- dialogue list and filter
const C = D.dialogue_columns;  // column names of D.dialogues rows
const col = Object.fromEntries(C.map((c, i) => [c, i]));
const fModel = document.getElementById('f-model'), fOutcome = document.getElementById('f-outcome');
const fLabel = document.getElementById('f-label'), fText = document.getElementById('f-text');
for (const m of D.models) fModel.appendChild(el('option', {value: m, text: m}));
for (const o of ['success', 'failure', 'other', 'error']) fOutcome.appendChild(el('option', {value: o, text: o}));
const labelOpts = new Set();
for (const r of D.dialogues) for (const g of D.groupings) labelOpts.add(g + ': ' + r[col[g]]);
for (const l of [...labelOpts].sort()) fLabel.appendChild(el('option', {value: l, text: l}));
const tbody = document.querySelector('#dlg-list tbody');
const count = document.getElementById('dlg-count');
function matches(r){
  if (fModel.value && r[col.model] !== fModel.value) return false;
  if (fOutcome.value && r[col.outcome] !== fOutcome.value) return false;
  if (fLabel.value) {
    const [g, l] = fLabel.value.split(': ');
    if (r[col[g]] !== l) return false;
  }
  const q = fText.value.trim().toLowerCase();
  if (q && !(r[col.scenario] + ' ' + r[col.model]).toLowerCase().includes(q)) return false;
  return true;
}
function renderList(){
  tbody.textContent = '';
  let n = 0;
  D.dialogues.forEach((r, i) => {
    if (!matches(r)) return;
    n += 1;
    const tr = el('tr', {'data-index': String(i), 'data-scenario': r[col.scenario]},
      el('td', {text: r[col.scenario]}), el('td', {text: r[col.model]}),
      el('td', {text: String(r[col.trial])}),
      el('td', {class: 'o-' + r[col.outcome], text: r[col.outcome]}),
      el('td', {text: r[col.termination]}), el('td', {text: String(r[col.turns])}),
      el('td', {text: fmt(r[col.epmq])}));
    tr.addEventListener('click', () => openDialogue(i));
    tbody.appendChild(tr);
  });
  count.textContent = n + ' of ' + D.dialogues.length + ' dialogues';
}
for (const f of [fModel, fOutcome, fLabel]) f.addEventListener('change', renderList);
fText.addEventListener('input', renderList);
renderList();

async function unpack(b64){ return JSON.parse(await window.unpackGzip(b64)); }
function ratingsTable(rows){
  const t = el('table', {}, el('tr', {}, el('th', {text: 'indicator'}), el('th', {text: 'level'}),
    el('th', {text: 'evidence'}), el('th', {text: 'reasoning'})));
  for (const [k, lv, ev, rs] of rows)
    t.appendChild(el('tr', {}, el('td', {text: k}), el('td', {text: lv === null ? 'missing' : String(lv)}),
      el('td', {text: ev}), el('td', {text: rs})));
  return t;
}
async function openDialogue(i){
  const r = D.dialogues[i];
  for (const tr of tbody.querySelectorAll('tr.sel')) tr.classList.remove('sel');
  const row = tbody.querySelector('tr[data-index="' + i + '"]');
  if (row) row.classList.add('sel');
  const box = document.getElementById('dlg-view');
  box.textContent = 'loading...';
  const x = await unpack(D.details[i]);
  box.textContent = '';
  box.appendChild(el('h3', {text: r[col.scenario] + ' - ' + r[col.model] + ' (trial ' + r[col.trial] + ')'}));
  box.appendChild(el('p', {},
    el('span', {class: 'o-' + r[col.outcome], text: r[col.outcome]}),
    ' ' + x.end.kind + ' at turn ' + x.end.turn + (x.end.reason ? ': ' + x.end.reason : '') +
    ' | EPM-Q ' + fmt(r[col.epmq]) + ' | ' + D.groupings.map(g => g + ' ' + r[col[g]]).join(', ')));
  box.appendChild(el('div', {id: 'dlg-state', class: 'plot'}));
  const turns = [0], series = {C: [x.p0[0]], A: [x.p0[1]], P: [x.p0[2]], norm: [x.norm0], E: [0], align: [null]};
  for (const e of x.evals) {
    turns.push(e.turn); series.C.push(e.P[0]); series.A.push(e.P[1]); series.P.push(e.P[2]);
    series.norm.push(e.norm); series.E.push(e.E); series.align.push(e.align);
  }
  const tr = (k, name, extra) => Object.assign({x: turns, y: series[k], name: name, mode: 'lines+markers'}, extra || {});
  Plotly.newPlot('dlg-state', [tr('C', 'C'), tr('A', 'A'), tr('P', 'P'), tr('norm', '||P||'),
    tr('E', 'E_total'), tr('align', 'alignment', {yaxis: 'y2', line: {dash: 'dot'}})],
    {title: 'State, energy and alignment per turn', xaxis: {title: 'turn'},
     yaxis2: {overlaying: 'y', side: 'right', range: [-1, 1], title: 'alignment'},
     margin: {l: 50, r: 50, t: 40, b: 40}, height: 320}, CFG);
  if (x.iedr.length) {
    const d = el('details', {class: 'eval'}, el('summary', {text: 'IEDR (initial deficit P_0 = ' + vec(x.p0) + ')'}));
    d.appendChild(ratingsTable(x.iedr));
    box.appendChild(d);
  }
  const byTurn = (list) => { const m = {}; for (const a of list) (m[a.turn] = m[a.turn] || []).push(a); return m; };
  const dir = byTurn(x.director), evs = byTurn(x.evals);
  const nTurns = Math.max(x.turns.length, ...Object.keys(dir).map(Number), ...Object.keys(evs).map(Number));
  for (let t = 0; t <= nTurns; t++) {
    const div = el('div', {class: 'turn', 'data-turn': String(t)});
    if (t > 0) div.appendChild(el('div', {class: 'muted', text: 'turn ' + t}));
    for (const a of (dir[t] || []))
      div.appendChild(el('div', {class: 'director', text: 'director: ' + a.action +
        (a.source ? ' [' + a.source + ']' : '') + (a.honoured ? '' : ' (not honoured)') +
        (a.note ? ' - ' + a.note : '') + (a.detail ? '\n' + a.detail.trim() : '')}));
    const line = x.turns[t - 1];
    if (line) {
      div.appendChild(el('div', {class: 'line user'}, el('span', {class: 'who', text: 'user'}), line[0]));
      div.appendChild(el('div', {class: 'line assistant'}, el('span', {class: 'who', text: 'model'}), line[1]));
    }
    for (const e of (evs[t] || [])) {
      const head = 'evaluation: ' + (e.scored ? 'scored' : 'unscored (' + (e.why || '?') + ')') +
        ' | P ' + vec(e.P) + ' v ' + vec(e.v) + ' | dE ' + fmt(e.dE) + ' E_total ' + fmt(e.E) +
        ' | alignment ' + fmt(e.align) + ' | ||P|| ' + fmt(e.norm) + (e.zone ? ' | in zone' : '');
      const d = el('details', {class: 'eval'}, el('summary', {class: 'state', text: head}));
      d.appendChild(ratingsTable(e.ratings));
      div.appendChild(d);
    }
    if (div.childNodes.length > (t > 0 ? 1 : 0)) box.appendChild(div);
  }
  box.appendChild(el('p', {class: 'director', text: 'end: ' + x.end.kind + ' at turn ' + x.end.turn +
    (x.end.reason ? ' - ' + x.end.reason : '')}));
  if (x.usage.length) {
    const t = el('table', {}, el('tr', {}, el('th', {text: 'role'}), el('th', {text: 'calls'}),
      el('th', {text: 'prompt tokens'}), el('th', {text: 'completion tokens'}), el('th', {text: 'cost (USD)'})));
    for (const u of x.usage) t.appendChild(el('tr', {}, ...u.map((v, j) => el('td', {text: j === 4 ? fmt(v, 4) : String(v)}))));
    box.appendChild(t);
  }
  box.scrollIntoView({block: 'start'});
}
window.empathosOpenDialogue = openDialogue;
}).catch(function(e){ console.error('report failed to start: ' + e); });
"""
