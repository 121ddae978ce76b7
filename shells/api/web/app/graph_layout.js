// Layout with elkjs (vendor/elkjs-0.12.1): the layered algorithm over the nested containers, in a Web
// Worker so a large trace never freezes the page. Coordinates come back absolute (ROOT), ready to draw.

import {isContainer, LAYOUT_REVERSED} from './graph_model.js';

const WORKER_URL = '/vendor/elkjs-0.12.1/elk-worker.min.js';
export const HEADER = 34; // a container's title band
export const SIZES = {
  plugin: [236, 70],
  event: [216, 46],
  result: [216, 52],
  collapsed: [248, 64],
  other: [216, 46],
};

let elk = null;

function engine() {
  if (elk) return elk;
  if (!window.ELK) throw new Error('the layout library (elkjs) did not load');
  const policy = window.trustedTypes
    ? window.trustedTypes.createPolicy('mrpvm-worker', {
      createScriptURL: (url) => {
        if (url !== WORKER_URL) throw new Error(`refusing worker script ${url}`);
        return url;
      },
    })
    : {createScriptURL: (url) => url};
  elk = new window.ELK({workerFactory: () => new Worker(policy.createScriptURL(WORKER_URL))});
  return elk;
}

const LABEL_CHAR = 6.8; // average width of a character of a 12-12.5px label
const MAX_BOX_WIDTH = 420;
const MAX_CONTAINER_WIDTH = 620;

/** A box is widened (up to MAX_BOX_WIDTH) so its label is shown whole, not cut. */
export function sizeOf(node, collapsed) {
  if (collapsed) return SIZES.collapsed;
  const [width, height] = SIZES[node.kind] || SIZES.other;
  const label = node.kind === 'plugin' ? `${node.pluginId || ''} · ${node.op || ''}` : node.label || node.kind;
  return [Math.max(width, Math.min(MAX_BOX_WIDTH, Math.ceil(label.length * LABEL_CHAR) + 30)), height];
}

/** A container's minimum width: room for its title (a seed's intent) beside its badges. */
function containerOptions(node) {
  const title = node.kind === 'seed' ? node.label || '' : `${node.kind} · ${node.label || ''}`;
  const width = Math.max(CONTAINER_MIN_WIDTH, Math.min(MAX_CONTAINER_WIDTH, Math.ceil(title.length * LABEL_CHAR) + 200));
  return width === CONTAINER_MIN_WIDTH ? CONTAINER_OPTIONS : {...CONTAINER_OPTIONS, 'elk.nodeSize.minimum': `(${HEADER + 30}, ${width})`};
}

const ROOT_OPTIONS = {
  'elk.algorithm': 'layered',
  'elk.direction': 'DOWN',
  'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
  'elk.json.shapeCoords': 'ROOT',
  'elk.json.edgeCoords': 'ROOT',
  'elk.edgeRouting': 'ORTHOGONAL',
  'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
  'elk.layered.spacing.nodeNodeBetweenLayers': '38',
  'elk.spacing.nodeNode': '22',
  'elk.spacing.edgeNode': '14',
  'elk.spacing.edgeEdge': '10',
  'elk.spacing.componentComponent': '28',
  'elk.padding': '[top=12,left=12,bottom=12,right=12]',
};
// Containers are at least 300 wide so their title band has room for the intent beside the badges.
// elkjs 0.12.1 applies a compound node's minimum size transposed when the layout runs DOWN with
// INCLUDE_CHILDREN (checked: '(300, 80)' gives 124×300), so it is given as (height, width) here;
// tests/test_web_browser.py checks the drawn width, so an upgrade that fixes this is noticed.
export const CONTAINER_MIN_WIDTH = 300;
const CONTAINER_OPTIONS = {
  'elk.padding': `[top=${HEADER + 10},left=14,bottom=14,right=14]`,
  'elk.nodeSize.constraints': 'MINIMUM_SIZE',
  'elk.nodeSize.minimum': `(${HEADER + 30}, ${CONTAINER_MIN_WIDTH})`,
};

const TOUCH_MS = 0.5; // a sibling that starts within this of another's end comes after it

/**
 * Layout-only edges (never drawn) so time flows down: each box or container follows the sibling that
 * ended last before it started; siblings that overlap in time (parallel seeds, an early call) stay side
 * by side. Pairs already joined by a drawn edge need none.
 */
export function orderEdges(model, vis, groups) {
  const joined = new Set(vis.edges.flatMap((e) => [`${e.src}|${e.dst}`, `${e.dst}|${e.src}`]));
  const out = [];
  for (const ids of groups) {
    const items = ids.map((id) => {
      const node = model.nodes.get(id);
      const start = Number(node.startMs) || 0;
      return {id, start, end: start + (Number(node.durationMs) || 0)};
    });
    for (const item of items) {
      let before = null;
      for (const other of items) {
        if (other === item || other.end > item.start + TOUCH_MS || other.start > item.start) continue;
        if (other.start === item.start && items.indexOf(other) > items.indexOf(item)) continue;
        if (!before || other.end > before.end) before = other;
      }
      if (before && !joined.has(`${before.id}|${item.id}`)) out.push([before.id, item.id]);
    }
  }
  return out;
}

/** The ELK graph of what is visible; children in start order so the layout reads as time flows. */
export function elkGraph(model, vis) {
  const byStart = (a, b) => (model.nodes.get(a).startMs || 0) - (model.nodes.get(b).startMs || 0);
  const groups = [];
  const build = (id) => {
    const node = model.nodes.get(id);
    const folded = vis.collapsed.has(id);
    if (isContainer(node) && !folded) {
      const kids = node.children.filter((c) => vis.visible.has(c)).sort(byStart);
      groups.push(kids);
      return {id, layoutOptions: containerOptions(node), children: kids.map(build)};
    }
    const [width, height] = sizeOf(node, folded);
    return {id, width, height};
  };
  const roots = model.roots.filter((r) => vis.visible.has(r)).sort(byStart);
  groups.push(roots);
  const children = roots.map(build);
  const drawn = vis.edges.map((edge, index) => {
    const reversed = LAYOUT_REVERSED.has(edge.kind);
    return {id: `e${index}`, sources: [reversed ? edge.dst : edge.src], targets: [reversed ? edge.src : edge.dst]};
  });
  const order = orderEdges(model, vis, groups).map(([src, dst], index) => ({id: `o${index}`, sources: [src], targets: [dst]}));
  return {id: '__root', layoutOptions: ROOT_OPTIONS, children, edges: [...drawn, ...order]};
}

/** Lay out; resolves with {positions: Map(id → {x, y, width, height}), edges: [{...edge, points}], width, height}. */
export async function layout(model, vis) {
  const graph = elkGraph(model, vis);
  const result = await engine().layout(graph);
  const positions = new Map();
  const laidEdges = new Map();
  const walk = (node) => {
    for (const edge of node.edges || []) laidEdges.set(edge.id, edge);
    for (const child of node.children || []) {
      positions.set(child.id, {x: child.x, y: child.y, width: child.width, height: child.height});
      walk(child);
    }
  };
  walk(result);
  const edges = vis.edges.map((edge, index) => {
    const section = laidEdges.get(`e${index}`)?.sections?.[0];
    let points = section ? [section.startPoint, ...(section.bendPoints || []), section.endPoint] : [];
    if (LAYOUT_REVERSED.has(edge.kind)) points = points.reverse();
    return {...edge, points};
  });
  return {positions, edges, width: result.width || 0, height: result.height || 0};
}
