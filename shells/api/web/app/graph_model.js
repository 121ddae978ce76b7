// A turn's trace DAG (kernel/trace.py) as something to draw: containers, boxes and edges.
//
// - Frames, planner branches and seeds (one per question) are containers; `parent` edges say what
//   sits inside what, so a child frame (decomposition) nests inside the seed that opened it.
// - Every other node (plugin call, knowledge view, result, event) is a box in its nearest container.
//   LLM calls are folded into the plugin call that made them (a badge and the inspector list them).
// - A `parent` edge between two boxes (a knowledge view feeding the solve, a solve and its
//   validation) is drawn as a `flow` edge; the other edge kinds are drawn as they are: backtracking
//   (next-candidate, next-view, next-branch, next-planner), uses, produces, validates, decomposes,
//   reuses.
// - A collapsed container is drawn as one box; edges to what it hides end at it.

export const CONTAINER_KINDS = new Set(['frame', 'branch', 'seed']);
export const BACKTRACK_KINDS = new Set(['next-candidate', 'next-view', 'next-branch', 'next-planner']);
export const EDGE_LABELS = {
  flow: '',
  produces: '',
  uses: 'uses',
  validates: 'validates',
  decomposes: 'decomposes',
  reuses: 'reuses',
  'next-candidate': 'next candidate',
  'next-view': 'next view',
  'next-branch': 'next branch',
  'next-planner': 'next planner',
};
// Edges that point back in time (the validator judges an earlier answer): laid out the other way round
// so time still flows down, drawn with their own direction.
export const LAYOUT_REVERSED = new Set(['validates']);

export function isContainer(node) {
  return CONTAINER_KINDS.has(node.kind);
}

/** The drawable model of a trace: nodes by id (with container, children, folded LLM calls), edges. */
export function buildModel(trace) {
  const nodes = new Map();
  for (const node of trace?.nodes || []) {
    nodes.set(node.id, {...node, parentId: null, container: null, children: [], llm: [], depth: 0});
  }
  const rawEdges = (trace?.edges || []).filter((e) => nodes.has(e.src) && nodes.has(e.dst) && e.src !== e.dst);
  for (const edge of rawEdges) {
    const child = nodes.get(edge.dst);
    if (edge.kind === 'parent' && child.parentId === null) child.parentId = edge.src;
  }
  const folded = new Set();
  for (const node of nodes.values()) {
    const parent = nodes.get(node.parentId);
    if (node.kind === 'llm' && parent && parent.kind === 'plugin') {
      parent.llm.push(node);
      folded.add(node.id);
    }
  }
  const containerOf = (node) => {
    const seen = new Set([node.id]);
    let current = nodes.get(node.parentId);
    while (current && !isContainer(current) && !seen.has(current.id)) {
      seen.add(current.id);
      current = nodes.get(current.parentId);
    }
    return current && !seen.has(current.id) && isContainer(current) ? current.id : null;
  };
  const roots = [];
  for (const node of nodes.values()) {
    if (folded.has(node.id)) continue;
    node.container = containerOf(node);
    if (node.container) nodes.get(node.container).children.push(node.id);
    else roots.push(node.id);
  }
  for (const node of nodes.values()) {
    let depth = 0;
    for (let c = nodes.get(node.container); c && depth < 64; c = nodes.get(c.container)) depth += 1;
    node.depth = depth;
  }
  const edges = [];
  for (const edge of rawEdges) {
    if (folded.has(edge.src) || folded.has(edge.dst)) continue;
    if (edge.kind === 'parent') {
      if (nodes.get(edge.dst).container === edge.src) continue; // drawn as nesting
      edges.push({src: edge.src, dst: edge.dst, kind: 'flow'});
    } else edges.push({src: edge.src, dst: edge.dst, kind: edge.kind});
  }
  return {trace, nodes, roots, edges, folded};
}

/** Whether `ancestor` is a container that (transitively) holds node `id`. */
export function holds(model, ancestor, id) {
  let current = model.nodes.get(model.nodes.get(id)?.container);
  for (let guard = 0; current && guard < 64; guard += 1) {
    if (current.id === ancestor) return true;
    current = model.nodes.get(current.container);
  }
  return false;
}

/** What is drawn with `collapsed` containers folded: visible node ids and merged edges. */
export function visibleGraph(model, collapsed) {
  const rep = new Map();
  const representative = (id) => {
    if (rep.has(id)) return rep.get(id);
    const node = model.nodes.get(id);
    let result = id;
    let current = isContainer(node) ? node : model.nodes.get(node.container);
    for (let guard = 0; current && guard < 64; guard += 1) {
      if (collapsed.has(current.id)) result = current.id; // the outermost collapsed one wins
      current = model.nodes.get(current.container);
    }
    rep.set(id, result);
    return result;
  };
  const visible = new Set();
  for (const id of model.nodes.keys()) if (!model.folded.has(id) && representative(id) === id) visible.add(id);
  const merged = new Map();
  for (const edge of model.edges) {
    const src = representative(edge.src);
    const dst = representative(edge.dst);
    if (src === dst || holds(model, src, dst) || holds(model, dst, src)) continue;
    const key = `${src}|${dst}|${edge.kind}`;
    const found = merged.get(key);
    if (found) found.count += 1;
    else merged.set(key, {src, dst, kind: edge.kind, count: 1});
  }
  const pairs = new Set([...merged.values()].filter((e) => e.kind !== 'flow').map((e) => [e.src, e.dst].sort().join('|')));
  const edges = [...merged.values()].filter((e) => e.kind !== 'flow' || !pairs.has([e.src, e.dst].sort().join('|')));
  return {visible, edges, collapsed: new Set(collapsed)};
}

/** Hidden nodes under a container (for a collapsed box's caption). */
export function hiddenCount(model, id) {
  let count = 0;
  const stack = [...(model.nodes.get(id)?.children || [])];
  while (stack.length) {
    const node = model.nodes.get(stack.pop());
    count += 1;
    stack.push(...node.children);
  }
  return count;
}

/** Containers to collapse first so a large trace stays readable: child frames, then seeds. */
export function autoCollapse(model, limit = 120) {
  const leaves = [...model.nodes.values()].filter((n) => !isContainer(n) && !model.folded.has(n.id)).length;
  const collapsed = new Set();
  if (leaves <= limit) return collapsed;
  const frames = [...model.nodes.values()].filter((n) => n.kind === 'frame' && n.depth > 0);
  for (const frame of frames) collapsed.add(frame.id);
  if (visibleGraph(model, collapsed).visible.size <= limit) return collapsed;
  for (const seed of model.nodes.values()) if (seed.kind === 'seed') collapsed.add(seed.id);
  return collapsed;
}

/** One line about the turn: calls by status, backtracks, frames, LLM calls. */
export function summarize(model) {
  const calls = [...model.nodes.values()].filter((n) => n.kind === 'plugin');
  const byStatus = {};
  for (const call of calls) byStatus[call.status || '?'] = (byStatus[call.status || '?'] || 0) + 1;
  const frames = [...model.nodes.values()].filter((n) => n.kind === 'frame');
  return {
    nodes: model.nodes.size,
    calls: calls.length,
    byStatus,
    backtracks: model.edges.filter((e) => BACKTRACK_KINDS.has(e.kind)).length,
    frames: frames.length,
    maxDepth: Math.max(0, ...frames.map((f) => Number(f.input?.depth ?? f.depth) || 0)),
    llmCalls: calls.reduce((sum, call) => sum + Math.max(call.llm.length, Number(call.output?.llmCalls) || 0), 0),
  };
}
