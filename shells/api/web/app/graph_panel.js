// The Graph view: pick a turn of the session, see its execution graph (pan, zoom, collapse a frame,
// branch or seed), click a box to inspect it. `/?session=ID&turn=REQUEST_ID` opens it directly.

import {routes} from './api.js';
import {$, clear, clip, h, ms, pill} from './dom.js';
import {turnFromEntry} from './answer.js';
import {autoCollapse, buildModel, holds, summarize, visibleGraph} from './graph_model.js';
import {layout} from './graph_layout.js';
import {draw, svgCanvas} from './graph_view.js';
import {inspect} from './inspector.js';
import {PanZoom} from './pan_zoom.js';
import {state, syncUrl} from './state.js';

const LEGEND_STATUSES = ['success', 'insufficient', 'no-context', 'rejected', 'error', 'skipped', 'needs-decomposition', 'pending'];
const LEGEND_EDGES = [
  ['flow', 'flow (inside a seed)'],
  ['backtrack', 'backtracking: next candidate / view / branch / planner'],
  ['validates', 'validation'],
  ['uses', 'uses / produces evidence'],
  ['decomposes', 'decomposition (child frame)'],
  ['reuses', 'reuse of an earlier result'],
];

const current = {turn: null, model: null, collapsed: new Set(), selected: null, laid: null, vis: null, generation: 0};
let ui = null;

function skeleton() {
  const {svg, layer} = svgCanvas();
  const canvas = h('div', {class: 'graph-canvas', tabindex: '0', 'aria-label': 'Execution graph: drag to pan, wheel or pinch to zoom, + − 0 and arrows from the keyboard'}, svg);
  const status = h('div', {class: 'graph-status', role: 'status'});
  const inspector = h('aside', {class: 'inspector', id: 'inspector', 'aria-labelledby': 'inspector-title'});
  const turnSelect = h('select', {id: 'graph-turn', 'aria-label': 'Turn'});
  const summary = h('p', {class: 'graph-summary'});
  const legend = h('div', {class: 'legend', hidden: true},
    h('div', {class: 'legend-row'}, LEGEND_STATUSES.map((st) => pill(st, st))),
    h('div', {class: 'legend-row'}, LEGEND_EDGES.map(([cls, label]) => h('span', {class: `legend-edge edge-${cls}`}, h('i'), label))));
  const tool = (label, text, fn) => h('button', {type: 'button', class: 'secondary small', title: label, 'aria-label': label, onclick: fn}, text);
  const view = $('#view-graph');
  clear(view,
    h('div', {class: 'graph-head'},
      h('label', {class: 'turn-pick'}, h('span', null, 'Turn'), turnSelect),
      h('div', {class: 'graph-tools'},
        tool('Fit to view', 'Fit', () => zoom.fit()),
        tool('Zoom out', '−', () => zoom.zoomCenter(1 / 1.25)),
        tool('Zoom in', '+', () => zoom.zoomCenter(1.25)),
        tool('Expand everything', 'Expand all', () => relayout(new Set(), {fit: true})),
        tool('Collapse every seed', 'Collapse seeds', () => relayout(seedsOf(current.model), {fit: true})),
        tool('Show the legend', 'Legend', () => {
          legend.hidden = !legend.hidden;
        }))),
    summary, legend,
    h('div', {class: 'graph-body'}, h('div', {class: 'canvas-wrap'}, canvas, status), inspector));
  const zoom = new PanZoom(svg, layer);
  turnSelect.addEventListener('change', () => showTurn(turnSelect.value));
  canvas.addEventListener('keydown', (event) => {
    const target = event.target.closest?.('[data-toggle], [data-node-id]');
    if (target && (event.key === 'Enter' || event.key === ' ')) {
      event.preventDefault();
      target.dispatchEvent(new MouseEvent('click', {bubbles: true}));
      return;
    }
    zoom.onKey(event);
  });
  svg.addEventListener('click', (event) => {
    const toggleEl = event.target.closest('[data-toggle]');
    if (toggleEl) {
      toggle(toggleEl.dataset.toggle);
      return;
    }
    const nodeEl = event.target.closest('[data-node-id]');
    select(nodeEl ? nodeEl.dataset.nodeId : null);
  });
  svg.addEventListener('dblclick', (event) => {
    const nodeEl = event.target.closest('.gnode.collapsed');
    if (nodeEl) toggle(nodeEl.dataset.nodeId);
  });
  new ResizeObserver(() => {
    if (!current.laid) return;
    const selected = current.selected && current.laid.positions.get(current.selected);
    if (selected) zoom.reveal(selected); // the details sheet opened or closed: keep the selection in sight
    else if (!canvas.dataset.touched) zoom.fit(undefined, undefined, {widthOnly: true, readable: true});
  }).observe(canvas);
  svg.addEventListener('pointerdown', () => {
    canvas.dataset.touched = '1';
  });
  svg.addEventListener('wheel', () => {
    canvas.dataset.touched = '1';
  }, {passive: true});
  return {view, svg, layer, canvas, status, inspector, turnSelect, summary, zoom};
}

function seedsOf(model) {
  return new Set([...(model?.nodes.values() || [])].filter((n) => n.kind === 'seed').map((n) => n.id));
}

function fillTurns() {
  clear(ui.turnSelect, state.turns.map((turn, index) =>
    h('option', {value: turn.requestId, selected: current.turn?.requestId === turn.requestId},
      `#${index + 1} ${clip(turn.userMessage, 70)}`)));
}

function summaryLine(model, turn) {
  const sum = summarize(model);
  const statuses = Object.entries(sum.byStatus).map(([st, n]) => [pill(`${st} ${n}`, st), ' ']);
  clear(ui.summary,
    pill(turn.status || '?', turn.status), ' ',
    `${sum.calls} plugin calls `, statuses,
    ` · ${sum.backtracks} backtracks · ${sum.frames} frame${sum.frames === 1 ? '' : 's'} (max depth ${sum.maxDepth}) · `,
    `${sum.llmCalls} LLM calls · ${ms(turn.durationMs)}`);
}

/** Make sure the session's turns (with final traces) are loaded; refetch when a trace is still pending. */
async function loadTurn(requestId) {
  let turn = state.turns.find((t) => t.requestId === requestId);
  const pending = turn?.trace?.nodes?.some((n) => n.status === 'pending');
  if (state.session && (!turn || !turn.trace || pending)) {
    const explained = await routes.explain(state.session.session_id);
    state.turns = explained.turns.map(turnFromEntry);
    turn = state.turns.find((t) => t.requestId === requestId);
  }
  return turn;
}

export async function showTurn(requestId) {
  if (!ui) ui = skeleton();
  if (!state.session || !state.turns.length) {
    clear(ui.summary, state.session ? 'No turns yet: ask a question, then open its execution graph here.' : 'Open a session to see the execution graph of its turns.');
    ui.layer.replaceChildren();
    clear(ui.turnSelect);
    inspect(ui.inspector, {nodes: new Map()}, null, select);
    return;
  }
  const generation = ++current.generation;
  ui.status.textContent = 'Loading the trace…';
  let turn;
  try {
    turn = await loadTurn(requestId || state.turns[state.turns.length - 1].requestId);
  } catch (err) {
    ui.status.textContent = `Could not load the trace: ${err.message}`;
    return;
  }
  if (generation !== current.generation) return;
  if (!turn) {
    ui.status.textContent = `This session has no turn ${requestId}.`;
    return;
  }
  current.turn = turn;
  current.model = buildModel(turn.trace);
  current.selected = null;
  fillTurns();
  summaryLine(current.model, turn);
  syncUrl({turn: turn.requestId});
  delete ui.canvas.dataset.touched;
  inspect(ui.inspector, current.model, null, select);
  await relayout(autoCollapse(current.model), {fit: true});
}

async function relayout(collapsed, {fit = false, reveal = null} = {}) {
  if (!current.model) return;
  const generation = ++current.generation;
  current.collapsed = collapsed;
  current.vis = visibleGraph(current.model, collapsed);
  ui.status.textContent = `Laying out ${current.vis.visible.size} boxes…`;
  ui.view.classList.add('laying-out');
  let laid;
  try {
    laid = await layout(current.model, current.vis);
  } catch (err) {
    ui.status.textContent = `Layout failed: ${err.message || err}`;
    ui.view.classList.remove('laying-out');
    return;
  }
  if (generation !== current.generation) return;
  current.laid = laid;
  draw(ui.layer, current.model, current.vis, laid);
  ui.svg.dataset.request = current.turn.requestId;
  ui.svg.dataset.boxes = String(current.vis.visible.size);
  ui.svg.dataset.layouts = String((Number(ui.svg.dataset.layouts) || 0) + 1); // tests and bench wait on it
  ui.status.textContent = '';
  ui.view.classList.remove('laying-out');
  if (fit) {
    delete ui.canvas.dataset.touched;
    ui.zoom.fit(laid.width, laid.height, {widthOnly: true, readable: true});
  }
  else ui.zoom.bounds = {width: laid.width, height: laid.height};
  if (reveal && laid.positions.get(reveal)) ui.zoom.reveal(laid.positions.get(reveal));
  if (current.selected) highlight(current.selected);
}

function toggle(id) {
  const collapsed = new Set(current.collapsed);
  if (collapsed.has(id)) collapsed.delete(id);
  else collapsed.add(id);
  relayout(collapsed, {reveal: id});
}

function highlight(id) {
  for (const el of ui.layer.querySelectorAll('.selected')) el.classList.remove('selected');
  if (!id) return;
  ui.layer.querySelector(`[data-node-id="${CSS.escape(id)}"]`)?.classList.add('selected');
  for (const el of ui.layer.querySelectorAll('.gedge')) {
    const [src, dst] = el.dataset.edge.split('>');
    if (src === id || dst === id) el.classList.add('selected');
  }
}

/** Select a node (expanding what hides it), show it in the inspector. */
export async function select(id) {
  current.selected = id;
  ui.view.classList.toggle('has-selection', Boolean(id));
  if (id && current.model && !current.vis.visible.has(id)) {
    const collapsed = new Set([...current.collapsed].filter((c) => !holds(current.model, c, id)));
    await relayout(collapsed, {reveal: id});
  }
  highlight(id);
  inspect(ui.inspector, current.model || {nodes: new Map()}, id, select);
  if (id) ui.inspector.scrollTop = 0;
  // On a phone the inspector opens as a sheet below the canvas, which shrinks: keep the node in sight.
  const rect = id && current.laid?.positions.get(id);
  if (rect) ui.zoom.reveal(rect);
}

export function initGraph() {
  ui = skeleton();
}
