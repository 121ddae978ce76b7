// The inspector beside the graph: one node's facts, its request summary, what it returned (the CNL
// document as the kernel parsed it), its LLM calls, and its edges (each selects the other end).

import {clear, h, ms, pill} from './dom.js';
import {isContainer} from './graph_model.js';
import {title} from './graph_view.js';

function value(v) {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v, null, 2);
  return String(v);
}

function table(object, skip = []) {
  const entries = Object.entries(object || {}).filter(([k]) => !skip.includes(k));
  if (!entries.length) return h('p', {class: 'hint'}, 'Nothing recorded.');
  return h('dl', {class: 'kv'}, entries.map(([k, v]) => [
    h('dt', null, k),
    h('dd', null, typeof v === 'object' && v !== null ? h('pre', null, value(v)) : value(v)),
  ]));
}

function section(heading, ...body) {
  return h('section', {class: 'inspector-section'}, h('h3', null, heading), body);
}

function cnl(node) {
  const text = node.output?.cnl;
  if (text) return h('pre', {class: 'cnl', tabindex: '0'}, text);
  if (node.status === 'error') {
    return h('p', {class: 'hint'}, `No CNL: the call failed${node.output?.code ? ` (${node.output.code})` : ''}.`);
  }
  if (String(node.status || '').startsWith('skipped')) return h('p', {class: 'hint'}, 'No CNL: the call was skipped.');
  if (node.status === 'pending') return h('p', {class: 'hint'}, 'Still running when the turn was answered; reopen the graph to see its result.');
  return h('p', {class: 'hint'}, 'No CNL kept for this call (the turn was recorded before the kernel stored it).');
}

function edgeList(model, id, select) {
  const edges = (model.trace.edges || []).filter((e) => (e.src === id || e.dst === id) && e.kind !== 'parent');
  const parent = model.nodes.get(id)?.parentId;
  const rows = edges.map((e) => {
    const other = e.src === id ? e.dst : e.src;
    const node = model.nodes.get(other);
    const direction = e.src === id ? '→' : '←';
    return h('li', null, `${direction} ${e.kind} `,
      h('button', {type: 'button', class: 'link', onclick: () => select(other)}, node ? `${other} ${title(node)}` : other));
  });
  if (parent) {
    rows.unshift(h('li', null, '↑ inside ', h('button', {type: 'button', class: 'link', onclick: () => select(parent)}, `${parent} ${title(model.nodes.get(parent))}`)));
  }
  return rows.length ? h('ul', {class: 'edge-list'}, rows) : h('p', {class: 'hint'}, 'No other edges.');
}

function containerFacts(model, node) {
  const tally = {};
  const stack = [...node.children];
  let calls = 0;
  while (stack.length) {
    const child = model.nodes.get(stack.pop());
    if (child.kind === 'plugin') {
      calls += 1;
      tally[child.status || '?'] = (tally[child.status || '?'] || 0) + 1;
    }
    stack.push(...child.children);
  }
  return h('p', null, `${calls} plugin calls inside: `, Object.entries(tally).map(([status, n]) => [pill(`${status} ${n}`, status), ' ']));
}

/** Show `id` in `box`; `select(id)` selects another node. */
export function inspect(box, model, id, select) {
  const node = model.nodes.get(id);
  if (!node) {
    clear(box, h('p', {class: 'hint'}, 'Click a box to see its request and the CNL it returned.'));
    return;
  }
  const facts = {
    id: node.id,
    kind: node.kind,
    plugin: node.pluginId,
    type: node.type,
    op: node.op,
    frame: node.frameId,
    started: `${ms(node.startMs)} after the turn began`,
    duration: node.durationMs ? ms(node.durationMs) : undefined,
    ref: node.ref,
  };
  Object.keys(facts).forEach((k) => facts[k] === undefined || facts[k] === null ? delete facts[k] : null);
  const output = node.output || {};
  clear(box,
    h('header', {class: 'inspector-head'},
      h('h2', {id: 'inspector-title'}, title(node)),
      node.status ? pill(node.status, node.status) : null,
      h('button', {type: 'button', class: 'icon-button close', 'aria-label': 'Close the details', onclick: () => select(null)}, '✕')),
    node.label && node.kind === 'plugin' ? h('p', {class: 'inspector-label'}, node.label) : null,
    section('Facts', table(facts)),
    isContainer(node) ? section('Inside', containerFacts(model, node)) : null,
    section(node.kind === 'plugin' ? 'Request summary' : 'Input', table(node.input)),
    section(node.kind === 'plugin' ? 'Result summary' : 'Output', table(output, ['cnl', 'answer'])),
    output.answer ? section('Answer', h('pre', {class: 'answer-text'}, output.answer)) : null,
    node.kind === 'plugin' ? section('CNL returned', cnl(node)) : null,
    node.llm?.length
      ? section(`LLM calls (${node.llm.length})`, h('ul', {class: 'llm-list'}, node.llm.map((call) =>
        h('li', null, pill(call.status || '?', call.status), ` ${call.label || 'model'} · ${ms(call.durationMs)}`,
          Object.keys(call.output || {}).length ? h('pre', null, value(call.output)) : null))))
      : null,
    section('Edges', edgeList(model, id, select)));
}
