// Drawing a laid-out trace as SVG: containers (frames, branches, seeds) with a title band and a
// collapse toggle, boxes coloured by status with duration and LLM-call badges, edges by kind.
// Every box is focusable (Enter selects it), so the graph works from the keyboard too.

import {clip, ms, s, statusClass} from './dom.js';
import {EDGE_LABELS, hiddenCount, isContainer} from './graph_model.js';
import {HEADER} from './graph_layout.js';

const CHAR = 6.6; // average width of a 12px character, to clip text to a box
const MARKERS = ['flow', 'produces', 'uses', 'validates', 'decomposes', 'reuses', 'backtrack'];

export function edgeClass(kind) {
  return kind.startsWith('next-') ? 'backtrack' : kind;
}

function markerDefs() {
  return s('defs', null, MARKERS.map((kind) => s('marker', {
    id: `arrow-${kind}`, class: `marker marker-${kind}`, viewBox: '0 0 10 10', refX: '9', refY: '5',
    markerUnits: 'userSpaceOnUse', markerWidth: '9', markerHeight: '9', orient: 'auto-start-reverse',
  }, s('path', {d: 'M0,0 L10,5 L0,10 z'}))));
}

function fitText(text, width) {
  return clip(text, Math.max(4, Math.floor(width / CHAR)));
}

/** Badges in a row from (x, y): [{text, cls}] → SVG group; returns the group and its width. */
function badges(items, x, y) {
  const group = s('g', {class: 'badges'});
  let at = x;
  for (const item of items) {
    const width = Math.round(item.text.length * 6.1 + 12);
    group.append(
      s('rect', {class: ['badge', item.cls], x: at, y, width, height: 17, rx: 8.5}),
      s('text', {class: ['badge-text', item.cls], x: at + width / 2, y: y + 12.5, 'text-anchor': 'middle'}, item.text));
    at += width + 5;
  }
  return group;
}

export function title(node) {
  if (node.kind === 'plugin') return `${node.pluginId || 'plugin'} · ${node.op || ''}`;
  if (node.kind === 'frame') return `frame · ${node.label || node.frameId || ''}`;
  if (node.kind === 'branch') return `branch · ${node.label || ''}`;
  if (node.kind === 'seed') return `seed · ${node.label || ''}`;
  if (node.kind === 'result') return `result · ${node.label || ''}`;
  return node.label || node.kind;
}

function llmCount(node) {
  return Math.max(node.llm?.length || 0, Number(node.output?.llmCalls) || 0);
}

function nodeBadges(node) {
  const items = [];
  if (node.status) items.push({text: node.status, cls: statusClass(node.status)});
  if (node.durationMs) items.push({text: ms(node.durationMs), cls: 'badge-time'});
  const llm = llmCount(node);
  if (llm) items.push({text: `LLM ${llm}`, cls: 'badge-llm'});
  if (node.ref) items.push({text: node.ref.startsWith('reuses') ? 'reused' : 'known failure', cls: 'badge-ref'});
  return items;
}

function describe(node) {
  return [title(node), node.label && node.kind === 'plugin' ? node.label : '', node.status || '', node.durationMs ? ms(node.durationMs) : '']
    .filter(Boolean).join(', ');
}

function leaf(node, box, collapsed, model) {
  const cls = ['gnode', `kind-${node.kind}`, statusClass(node.status), collapsed ? 'collapsed' : ''];
  const group = s('g', {
    class: cls, transform: `translate(${box.x} ${box.y})`, 'data-node-id': node.id, tabindex: '0', role: 'button',
    'aria-label': describe(node),
  });
  group.append(
    s('title', null, [title(node), node.label, node.status].filter(Boolean).join('\n')),
    s('rect', {class: 'box', width: box.width, height: box.height, rx: collapsed ? 10 : 6}),
    s('rect', {class: 'strip', width: 5, height: box.height, rx: 2}));
  const inner = box.width - 22;
  if (collapsed) {
    group.append(
      s('text', {class: 'title', x: 30, y: 20}, fitText(title(node), inner - 20)),
      s('text', {class: 'sub', x: 12, y: 37}, `${hiddenCount(model, node.id)} nodes inside · expand to see`),
      badges(nodeBadges(node), 12, box.height - 22),
      toggle(node, 8, 6, true));
    return group;
  }
  const sub = node.kind === 'plugin' ? node.label : node.kind === 'event' || node.kind === 'result' ? '' : node.kind;
  group.append(s('text', {class: 'title', x: 12, y: 19}, fitText(title(node), inner)));
  if (sub) group.append(s('text', {class: 'sub', x: 12, y: 36}, fitText(sub, inner)));
  group.append(badges(nodeBadges(node), 12, box.height - 23));
  return group;
}

function toggle(node, x, y, collapsed) {
  return s('g', {
    class: 'toggle', transform: `translate(${x} ${y})`, 'data-toggle': node.id, tabindex: '0', role: 'button',
    'aria-label': `${collapsed ? 'Expand' : 'Collapse'} ${node.kind} ${node.label || node.id}`,
  },
  s('rect', {width: 18, height: 18, rx: 4}),
  s('text', {x: 9, y: 13.5, 'text-anchor': 'middle'}, collapsed ? '+' : '−'));
}

function container(node, box) {
  const group = s('g', {class: ['gcontainer', `kind-${node.kind}`, statusClass(node.status)], 'data-container-id': node.id});
  const head = s('g', {
    class: 'chead', 'data-node-id': node.id, tabindex: '0', role: 'button', 'aria-label': describe(node),
    transform: `translate(${box.x} ${box.y})`,
  },
  s('title', null, [title(node), node.status].filter(Boolean).join('\n')),
  s('rect', {class: 'head-band', width: box.width, height: HEADER, rx: 10}));
  const items = nodeBadges(node);
  const badgeWidth = items.reduce((sum, i) => sum + Math.round(i.text.length * 6.1 + 12) + 5, 0);
  const badgeAt = Math.max(box.width / 2, box.width - badgeWidth - 8);
  head.append(
    s('text', {class: 'ctitle', x: 32, y: 22}, fitText(node.kind === 'seed' && node.label ? node.label : title(node), badgeAt - 40)),
    badges(items, badgeAt, 8),
    toggle(node, 8, 8, false));
  group.append(s('rect', {class: 'cbox', x: box.x, y: box.y, width: box.width, height: box.height, rx: 10}), head);
  return group;
}

function pathOf(points) {
  return points.map((p, i) => `${i ? 'L' : 'M'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ');
}

function midpoint(points) {
  if (points.length < 2) return points[0];
  let total = 0;
  const lengths = points.slice(1).map((p, i) => {
    const d = Math.hypot(p.x - points[i].x, p.y - points[i].y);
    total += d;
    return d;
  });
  let walk = total / 2;
  for (let i = 0; i < lengths.length; i += 1) {
    if (walk <= lengths[i]) {
      const t = lengths[i] ? walk / lengths[i] : 0;
      return {x: points[i].x + (points[i + 1].x - points[i].x) * t, y: points[i].y + (points[i + 1].y - points[i].y) * t};
    }
    walk -= lengths[i];
  }
  return points[points.length - 1];
}

function edge(e) {
  if (e.points.length < 2) return null;
  const cls = edgeClass(e.kind);
  const group = s('g', {class: ['gedge', `edge-${cls}`], 'data-edge': `${e.src}>${e.dst}`, 'data-kind': e.kind});
  group.append(s('path', {d: pathOf(e.points), 'marker-end': `url(#arrow-${cls})`}));
  const label = EDGE_LABELS[e.kind] ?? e.kind;
  if (label) {
    const at = midpoint(e.points);
    const text = e.count > 1 ? `${label} ×${e.count}` : label;
    const width = text.length * 5.8 + 8;
    group.append(
      s('rect', {class: 'elabel-bg', x: at.x - width / 2, y: at.y - 8, width, height: 15, rx: 3}),
      s('text', {class: 'elabel', x: at.x, y: at.y + 3.5, 'text-anchor': 'middle'}, text));
  }
  return group;
}

/** Draw `laid` (from graph_layout.layout) into `layer`, replacing what was there. */
export function draw(layer, model, vis, laid) {
  const containers = s('g', {class: 'containers'});
  const edges = s('g', {class: 'edges'});
  const boxes = s('g', {class: 'boxes'});
  const ordered = [...vis.visible].sort((a, b) => model.nodes.get(a).depth - model.nodes.get(b).depth);
  for (const id of ordered) {
    const node = model.nodes.get(id);
    const box = laid.positions.get(id);
    if (!box) continue;
    if (isContainer(node) && !vis.collapsed.has(id)) containers.append(container(node, box));
    else boxes.append(leaf(node, box, vis.collapsed.has(id), model));
  }
  for (const e of laid.edges) {
    const drawn = edge(e);
    if (drawn) edges.append(drawn);
  }
  layer.replaceChildren(containers, edges, boxes);
}

export function svgCanvas() {
  const layer = s('g', {class: 'viewport'});
  const svg = s('svg', {class: 'graph-svg', role: 'group', 'aria-label': 'Execution graph', width: '100%', height: '100%'}, markerDefs(), layer);
  return {svg, layer};
}
