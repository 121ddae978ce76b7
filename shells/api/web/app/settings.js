// Settings: the LLM role settings (a default model, a model per role, per-plugin overrides), read and
// changed through GET|PUT /settings/llm-roles (only what changed is sent; an empty model clears it),
// and this tab's access token.

import {routes, setToken, token} from './api.js';
import {$, clear, h, toast} from './dom.js';
import {state} from './state.js';

let loaded = null; // the effective settings as last read

function field(name, label, value, placeholder) {
  return h('label', {class: 'setting'},
    h('span', null, label),
    h('input', {type: 'text', name, value: value || '', placeholder, autocomplete: 'off', spellcheck: 'false'}));
}

function changes(form) {
  const data = new FormData(form);
  const body = {roles: {}, plugins: {}};
  const defaultModel = String(data.get('defaultModel') || '').trim();
  if (defaultModel !== (loaded.defaultModel || '')) body.defaultModel = defaultModel;
  for (const role of Object.keys(loaded.roles)) {
    const value = String(data.get(`role:${role}`) || '').trim();
    if (value !== (loaded.roles[role] || '')) body.roles[role] = value;
  }
  for (const [plugin, model] of Object.entries(loaded.plugins)) {
    const value = String(data.get(`plugin:${plugin}`) ?? model).trim();
    if (value !== model) body.plugins[plugin] = value;
  }
  const added = String(data.get('new-plugin') || '');
  const addedModel = String(data.get('new-model') || '').trim();
  if (added && addedModel) body.plugins[added] = addedModel;
  return body;
}

function rolesForm() {
  const llmPlugins = state.plugins.filter((p) => p.usesLLM);
  const form = h('form', {class: 'settings-form', id: 'llm-roles'},
    h('fieldset', null,
      h('legend', null, 'Default'),
      field('defaultModel', 'Default model', loaded.defaultModel, 'the endpoint’s model when nothing else is set')),
    h('fieldset', null,
      h('legend', null, 'Model per role'),
      Object.entries(loaded.roles).map(([role, model]) => field(`role:${role}`, role, model, 'default'))),
    h('fieldset', null,
      h('legend', null, 'Per-plugin overrides'),
      Object.keys(loaded.plugins).length
        ? Object.entries(loaded.plugins).map(([plugin, model]) => field(`plugin:${plugin}`, plugin, model, 'cleared when empty'))
        : h('p', {class: 'hint'}, 'None: every plugin uses its role’s model.'),
      h('div', {class: 'add-override'},
        h('label', {class: 'setting'}, h('span', null, 'Add for plugin'),
          h('select', {name: 'new-plugin'}, h('option', {value: ''}, '—'),
            llmPlugins.filter((p) => !(p.id in loaded.plugins)).map((p) => h('option', {value: p.id}, p.id)))),
        field('new-model', 'Model', '', 'model name'))),
    h('div', {class: 'actions'}, h('button', {type: 'submit', class: 'primary'}, 'Save LLM settings')));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const body = changes(form);
    if (body.defaultModel === undefined && !Object.keys(body.roles).length && !Object.keys(body.plugins).length) {
      toast('Nothing changed');
      return;
    }
    try {
      loaded = await routes.setLlmRoles(body);
      toast('LLM settings saved');
      renderSettings();
    } catch (err) {
      toast(`Saving failed: ${err.code}: ${err.message}`, 'error');
    }
  });
  return form;
}

/** The LLM endpoint: its URL (never the key), whether it answers, what it offers; or how to set one. */
function endpointSection(llm) {
  if (!llm) return null;
  const rows = llm.configured
    ? [
      ['Endpoint', llm.baseUrl],
      ['API key', llm.apiKeySet ? 'set (not shown)' : 'not set'],
      ['Answers', llm.reachable ? 'yes' : `no: ${llm.problem}`],
      ['Models offered', (llm.models || []).slice(0, 6).join(', ') || '—'],
    ]
    : [['Endpoint', 'none configured']];
  return h('section', {class: 'endpoint-section', id: 'llm-endpoint'},
    h('h2', null, 'LLM endpoint'),
    h('dl', {class: 'kv'}, rows.flatMap(([k, v]) => [h('dt', null, k), h('dd', null, v)])),
    llm.configured ? null : h('p', {class: 'hint'},
      'Answers come from the symbolic plugins, quoted from your documents. For LLM answers start the daemon with MRPVM_LLM_BASE_URL (an OpenAI-compatible endpoint; MRPVM_LLM_API_KEY and MRPVM_LLM_MODEL when it needs them), then pin an LLM plugin or choose llm-assisted.'));
}

function tokenSection() {
  const has = Boolean(token());
  return h('section', {class: 'token-section'},
    h('h2', null, 'Access token'),
    h('p', null, has
      ? 'This tab sends a bearer token to the daemon; it is forgotten when the tab closes.'
      : 'This tab sends no token (the daemon runs without --token, or none was asked yet).'),
    has ? h('button', {type: 'button', class: 'secondary small', onclick: () => {
      setToken('');
      toast('Token forgotten for this tab');
      renderSettings();
    }}, 'Forget the token') : null);
}

export async function renderSettings() {
  const view = $('#view-settings');
  if (!loaded) {
    clear(view, h('p', {class: 'loading'}, 'Loading settings…'));
    try {
      loaded = await routes.llmRoles();
    } catch (err) {
      clear(view, h('p', {class: 'turn-error', role: 'alert'}, `${err.code}: ${err.message}`), tokenSection());
      return;
    }
  }
  const llm = await routes.ready().then((ready) => ready.llm || null).catch(() => null);
  state.llm = llm;
  clear(view,
    endpointSection(llm),
    h('div', {class: 'view-head'}, h('h2', null, 'LLM role settings')),
    h('p', {class: 'hint'}, 'Which model serves each role (seed detection, goal solving, validation, …). A plugin override wins over its role, a role over the default.'),
    rolesForm(),
    tokenSection());
}

export function forgetLoadedSettings() {
  loaded = null;
}
