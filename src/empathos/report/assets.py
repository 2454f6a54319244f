# ruff: noqa: E501  (JavaScript and CSS lines)
"""The stylesheet and the script of the HTML report (plain strings, inlined into the page).

The script reads the report's JSON (``#report-data``), draws every plot with plotly.js, and
renders a dialogue on demand. The dialogues' details are stored in packs (the dialogues of
one model together), bzip2-compressed and base-85 encoded; the page unpacks a pack with
:data:`BUNZIP2` when a dialogue of it is first opened and keeps it. plotly.js itself is
gzip'd and unpacked with the browser's ``DecompressionStream``. All record text goes into the
page through ``textContent``, never as HTML.
"""

from __future__ import annotations

__all__ = ["BUNZIP2", "CSS", "LOADER", "SCRIPT"]

#: ``window.bunzip2(bytes)``: a bzip2 decoder (one or more concatenated streams, as Python's
#: ``bz2.compress`` writes them) from a ``Uint8Array`` to a ``Uint8Array``. Browsers
#: decompress only gzip and deflate natively; bzip2 makes the dialogues about 40% smaller.
#: The block CRCs are not checked (the data comes with the page).
BUNZIP2 = r"""
window.bunzip2 = function(src){
  let pos = 0, bitBuf = 0, bitCount = 0;
  function bits(n){
    while (bitCount < n) {
      if (pos >= src.length) throw new Error('bzip2: unexpected end of data');
      bitBuf = ((bitBuf << 8) | src[pos++]) & 0x7fffffff; bitCount += 8;  // n <= 24: fits
    }
    bitCount -= n;
    return (bitBuf >>> bitCount) & ((1 << n) - 1);
  }
  let out = new Uint8Array(Math.max(1024, src.length * 6)), outLen = 0;
  function put(b){
    if (outLen === out.length) { const o = new Uint8Array(out.length * 2); o.set(out); out = o; }
    out[outLen++] = b;
  }
  const MAXLEN = 20;
  while (pos < src.length) {
    if (bits(8) !== 0x42 || bits(8) !== 0x5a || bits(8) !== 0x68) throw new Error('bzip2: bad header');
    const level = bits(8) - 0x30;
    if (level < 1 || level > 9) throw new Error('bzip2: bad block size');
    const tt = new Uint32Array(level * 100000);
    for (;;) {
      const m1 = bits(24), m2 = bits(24);
      bits(16); bits(16);  // block CRC (stream CRC after the end marker), not checked
      if (m1 === 0x177245 && m2 === 0x385090) {  // end of stream: the next starts on a byte
        pos -= bitCount >> 3; bitCount = 0; bitBuf = 0;
        break;
      }
      if (m1 !== 0x314159 || m2 !== 0x265359) throw new Error('bzip2: bad block header');
      if (bits(1)) throw new Error('bzip2: randomised blocks are not supported');
      const origPtr = bits(24);
      // symbol map: which byte values occur
      const used = bits(16), seqToByte = [];
      for (let i = 0; i < 16; i++) if (used & (0x8000 >>> i)) {
        const w = bits(16);
        for (let j = 0; j < 16; j++) if (w & (0x8000 >>> j)) seqToByte.push(i * 16 + j);
      }
      const alphaSize = seqToByte.length + 2;
      const nGroups = bits(3), nSelectors = bits(15);
      if (nGroups < 2 || nGroups > 6 || nSelectors < 1) throw new Error('bzip2: bad tables');
      const mtfGroups = [0, 1, 2, 3, 4, 5].slice(0, nGroups), selectors = new Uint8Array(nSelectors);
      for (let i = 0; i < nSelectors; i++) {
        let j = 0;
        while (bits(1)) if (++j >= nGroups) throw new Error('bzip2: bad selector');
        const g = mtfGroups[j];
        mtfGroups.splice(j, 1); mtfGroups.unshift(g);
        selectors[i] = g;
      }
      // Huffman tables: canonical codes from code lengths (limit/base/perm per length)
      const tables = [];
      for (let g = 0; g < nGroups; g++) {
        const lens = new Uint8Array(alphaSize);
        let len = bits(5);
        for (let s = 0; s < alphaSize; s++) {
          for (;;) {
            if (len < 1 || len > MAXLEN) throw new Error('bzip2: bad code length');
            if (!bits(1)) break;
            len += bits(1) ? -1 : 1;
          }
          lens[s] = len;
        }
        let minLen = MAXLEN, maxLen = 0;
        for (const l of lens) { if (l < minLen) minLen = l; if (l > maxLen) maxLen = l; }
        const perm = [], limit = new Int32Array(MAXLEN + 2), base = new Int32Array(MAXLEN + 2);
        let code = 0;
        for (let l = minLen; l <= maxLen; l++) {
          base[l] = code - perm.length;
          for (let s = 0; s < alphaSize; s++) if (lens[s] === l) { perm.push(s); code++; }
          limit[l] = code - 1;
          code <<= 1;
        }
        tables.push({minLen, maxLen, perm, limit, base});
      }
      // symbols: MTF/RLE2 decoding into tt (byte values), counting each byte
      const mtf = seqToByte.slice(), counts = new Int32Array(256);
      let n = 0, sel = 0, left = 0, t = null, runLen = 0, runBit = 1;
      const EOB = alphaSize - 1;
      for (;;) {
        if (left === 0) {
          if (sel >= nSelectors) throw new Error('bzip2: out of selectors');
          t = tables[selectors[sel++]]; left = 50;
        }
        left--;
        let l = t.minLen, c = bits(l);
        while (c > t.limit[l]) { if (++l > t.maxLen) throw new Error('bzip2: bad code'); c = (c << 1) | bits(1); }
        const sym = t.perm[c - t.base[l]];
        if (sym <= 1) {  // RUNA, RUNB: bijective base-2 run of the front byte
          runLen += (sym + 1) * runBit; runBit <<= 1;
          continue;
        }
        if (runLen) {
          const b = mtf[0];
          if (n + runLen > tt.length) throw new Error('bzip2: block too long');
          counts[b] += runLen;
          while (runLen--) tt[n++] = b;
          runLen = 0; runBit = 1;
        }
        if (sym === EOB) break;
        const k = sym - 1, b = mtf[k];
        mtf.splice(k, 1); mtf.unshift(b);
        if (n >= tt.length) throw new Error('bzip2: block too long');
        counts[b]++; tt[n++] = b;
      }
      if (origPtr >= n) throw new Error('bzip2: bad origin pointer');
      // inverse BWT: link each position to the next in the original order
      const start = new Int32Array(256);
      for (let i = 0, s = 0; i < 256; i++) { start[i] = s; s += counts[i]; }
      for (let i = 0; i < n; i++) { const b = tt[i] & 0xff; tt[start[b]++] |= i << 8; }
      // walk the links, undoing the initial run-length step (4 equal bytes + a count)
      let p = tt[origPtr] >>> 8, last = -1, same = 0;
      for (let i = 0; i < n; i++) {
        const e = tt[p], b = e & 0xff; p = e >>> 8;
        if (same === 4) { for (let r = 0; r < b; r++) put(last); same = 0; last = -1; continue; }
        if (b === last) same++; else { last = b; same = 1; }
        put(b);
      }
    }
  }
  return out.subarray(0, outLen);
};
"""

#: ``window.un85``: base-85 text (``html.text85``) to bytes. Unpacks the inlined, gzip'd plotly.js (``#plotly-gz``) and runs it; ``window.plotlyReady``
#: resolves once ``Plotly`` exists.
LOADER = r"""
window.un85 = function(s){
  const A = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%,()*+-;.=:?@^_`{|}~';
  const val = new Uint8Array(128);
  for (let i = 0; i < 85; i++) val[A.charCodeAt(i)] = i;
  const n = s.length, rest = n % 5;
  const out = new Uint8Array(Math.floor(n / 5) * 4 + (rest ? rest - 1 : 0));
  for (let i = 0, o = 0; i < n; i += 5) {
    let acc = 0;
    for (let j = i; j < i + 5; j++) acc = acc * 85 + (j < n ? val[s.charCodeAt(j)] : 84);
    const w = acc >>> 0, bytes = [w >>> 24, (w >>> 16) & 255, (w >>> 8) & 255, w & 255];
    for (let b = 0; b < 4 && o < out.length; b++) out[o++] = bytes[b];
  }
  return out;
};
window.unpackGzip = async function(text){
  const bytes = window.un85(text);
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
td .ci{color:#6b7480;font-size:11px;display:block;white-space:normal}
#leaderboard th{white-space:normal;vertical-align:bottom}
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
  Plotly.react(div, fig.data, Object.assign({template: D.template}, fig.layout), CFG);
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

const packs = {};  // pack index -> its dialogues' details, unpacked on first use
function detailOf(r){
  const k = r[col.pack];
  if (!(k in packs))
    packs[k] = JSON.parse(new TextDecoder('utf-8').decode(window.bunzip2(window.un85(D.packs[k]))));
  return packs[k][r[col.item]];
}
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
  const x = detailOf(r);
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
     margin: {l: 50, r: 50, t: 40, b: 40}, height: 320, template: D.template}, CFG);
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
      el('th', {text: 'prompt tokens'}), el('th', {text: 'of them cached'}), el('th', {text: 'completion tokens'}),
      el('th', {text: 'cost (USD)'})));
    for (const u of x.usage) t.appendChild(el('tr', {}, ...u.map((v, j) => el('td', {text: j === 5 ? (v === null ? '-' : fmt(v, 4)) : String(v)}))));
    box.appendChild(t);
  }
  box.scrollIntoView({block: 'start'});
}
window.empathosOpenDialogue = openDialogue;
}).catch(function(e){ console.error('report failed to start: ' + e); });
"""
