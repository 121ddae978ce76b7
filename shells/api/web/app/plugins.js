// Plugins: pins per stage for the next turns (sent as `*_plugin` fields of each chat turn), and the
// registry: every plugin's descriptor with its planner hints.

import {routes} from './api.js';
import {$, clear, h, ms} from './dom.js';
import {on, PIN_STAGES, setPin, state} from './state.js';

const TYPE_TITLES = {
  'mrp-plan-plugin': 'Planners',
  'sd-plugin': 'Seed detectors',
  'kb-plugin': 'Knowledge (kb)',
  'gs-plugin': 'Goal solvers',
  'val-plugin': 'Validators',
};

export async function refreshPlugins() {
  state.plugins = (await routes.plugins()).plugins;
  renderPlugins();
}

function pinForm() {
  return h('form', {class: 'pins', id: 'pin-form', onsubmit: (event) => event.preventDefault()},
    PIN_STAGES.map((stage) => {
      const choices = state.plugins.filter((p) => p.type === stage.type && p.enabled);
      const select = h('select', {id: `pin-${stage.field}`, name: stage.field},
        h('option', {value: ''}, 'planner decides'),
        choices.map((p) => h('option', {value: p.id, selected: state.pins[stage.field] === p.id}, p.id)));
      select.addEventListener('change', () => setPin(stage.field, select.value));
      return h('label', {class: 'pin'}, h('span', null, stage.label), select);
    }));
}

function value(v) {
  if (Array.isArray(v)) return v.join(', ') || '—';
  if (v && typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

function hints(plugin) {
  if (!plugin.plannerHints) return null;
  return h('details', {class: 'hints'},
    h('summary', null, 'Planner hints'),
    h('dl', null, Object.entries(plugin.plannerHints).map(([k, v]) => [h('dt', null, k), h('dd', null, value(v))])));
}

/** Why an LLM plugin cannot answer here ("" when an endpoint is configured and answers). */
function llmMissing() {
  const llm = state.llm;
  if (!llm) return '';
  if (!llm.configured) return 'No LLM endpoint is configured (MRPVM_LLM_BASE_URL): this plugin answers "unsupported".';
  return llm.reachable === false ? `The LLM endpoint ${llm.baseUrl} does not answer: ${llm.problem}` : '';
}

function card(plugin) {
  return h('article', {class: ['plugin-card', plugin.enabled ? '' : 'disabled'], dataset: {plugin: plugin.id}},
    h('header', null,
      h('h4', null, plugin.id),
      h('span', {class: 'chips'},
        h('span', {class: ['chip', plugin.enabled ? 'chip-on' : 'chip-off']}, plugin.enabled ? 'enabled' : 'disabled'),
        h('span', {class: 'chip'}, plugin.costClass || 'cost ?'),
        plugin.usesLLM ? h('span', {class: 'chip chip-llm'}, `LLM ≤ ${plugin.maxLLMCalls}`) : h('span', {class: 'chip'}, 'no LLM'),
        plugin.usesLLM && llmMissing() ? h('span', {class: 'chip chip-off', title: llmMissing()}, 'no LLM endpoint') : null,
        plugin.builtin ? null : h('span', {class: 'chip'}, 'external'))),
    h('p', {class: 'plugin-name'}, `${plugin.name || plugin.id} · v${plugin.version}`),
    h('p', {class: 'plugin-description'}, plugin.description || 'No description.'),
    h('dl', {class: 'plugin-facts'},
      h('dt', null, 'ops'), h('dd', null, value(plugin.ops)),
      h('dt', null, 'timeout'), h('dd', null, ms(plugin.timeoutMs)),
      h('dt', null, 'process'), h('dd', null, plugin.worker ? `worker × ${plugin.concurrency}` : 'one-shot'),
      plugin.modelRoles?.length ? [h('dt', null, 'model roles'), h('dd', null, value(plugin.modelRoles))] : null,
      plugin.provides?.length ? [h('dt', null, 'provides'), h('dd', null, value(plugin.provides))] : null),
    hints(plugin));
}

export function renderPlugins() {
  const view = $('#view-plugins');
  const groups = Object.entries(TYPE_TITLES).map(([type, title]) => {
    const plugins = state.plugins.filter((p) => p.type === type);
    if (!plugins.length) return null;
    return h('section', {class: 'plugin-group'}, h('h3', null, `${title} (${plugins.length})`), h('div', {class: 'plugin-cards'}, plugins.map(card)));
  });
  clear(view,
    h('div', {class: 'view-head'}, h('h2', null, 'Pins for the next turns')),
    h('p', {class: 'hint'}, 'A pinned plugin serves its stage on every turn until unpinned; otherwise the planner orders the candidates.'),
    pinForm(),
    h('div', {class: 'view-head'}, h('h2', null, 'Registry')),
    groups);
}

export function initPlugins() {
  on('pins', () => {
    if (!$('#view-plugins').hidden) renderPlugins();
  });
}
