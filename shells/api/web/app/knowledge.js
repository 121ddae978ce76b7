// Knowledge: the KB bar above the chat (mount, create, fork, save, upload) and the Knowledge view
// (every KB with its counts, a KB's sources, a drop zone for documents).

import {routes} from './api.js';
import {$, askText, bytes, clear, count, h, toast, when} from './dom.js';
import {chooseKb, ensureSession, nextKb, reloadSession} from './sessions.js';
import {on, state} from './state.js';
import {dropTarget, pickButton} from './upload.js';

let shownKb = ''; // the id of the KB whose sources the Knowledge view lists (ids are path-safe, names not)

export async function refreshKbs() {
  state.kbs = (await routes.kbs()).kbs;
  renderKbBar();
  renderKnowledge();
}

function kbLabel(kb) {
  return `${kb.name} (${count(kb.units, 'unit')})`;
}

async function run(label, work) {
  try {
    const message = await work();
    await refreshKbs();
    if (message) toast(message);
  } catch (err) {
    toast(`${label} failed: ${err.code ? `${err.code}: ` : ''}${err.message}`, 'error');
  }
}

export function mountKb(name) {
  return run('Mount', async () => {
    if (!state.session) {
      chooseKb(name);
      return `${name} will be mounted in the new session`;
    }
    await routes.mountKb(state.session.session_id, name);
    await reloadSession();
    return `Mounted ${name}`;
  });
}

async function createKb() {
  const name = await askText({title: 'New knowledge base', label: 'Name', placeholder: 'e.g. product-docs', confirm: 'Create'});
  if (!name) return;
  await run('Create', async () => {
    await routes.createKb(name);
    if (state.session) {
      await routes.mountKb(state.session.session_id, name);
      await reloadSession();
    } else chooseKb(name);
    return `Created and mounted ${name}`;
  });
}

async function forkKb() {
  const current = nextKb();
  if (!current) return;
  const name = await askText({title: `Fork ${current}`, label: 'Name of the copy', value: `${current}-copy`, confirm: 'Fork', hint: 'The copy is mounted in this session; the original is left as it is.'});
  if (!name) return;
  await run('Fork', async () => {
    const session = await ensureSession();
    await routes.forkKb(session.session_id, name, current);
    await reloadSession();
    return `Forked ${current} as ${name} (mounted)`;
  });
}

async function saveSession() {
  if (!state.session) {
    toast('Nothing to save yet: ask a question or add context first', 'error');
    return;
  }
  const name = await askText({
    title: 'Save the session into a KB',
    label: 'KB name (created if absent)',
    value: nextKb() || 'notes',
    confirm: 'Save',
    hint: 'The units this session committed become one source of that KB; saving again replaces it.',
  });
  if (!name) return;
  await run('Save', async () => {
    const result = await routes.saveKb(state.session.session_id, name);
    await reloadSession();
    const source = result.sources[0];
    return `Saved ${count(source.unit_count, 'unit')} into ${result.kb.name} as ${source.name}`;
  });
}

export function renderKbBar() {
  const bar = $('#kb-bar');
  const current = nextKb();
  const known = state.kbs.find((kb) => kb.name === current || kb.id === current);
  const select = h('select', {id: 'kb-select', 'aria-label': 'Mounted knowledge base'},
    h('option', {value: '', disabled: Boolean(state.session?.kb_id)}, state.session ? 'none (a workspace KB is made on upload)' : 'none'),
    state.kbs.map((kb) => h('option', {value: kb.name, selected: known && kb.id === known.id}, kbLabel(kb))));
  if (!known) select.value = '';
  select.addEventListener('change', () => {
    if (select.value) mountKb(select.value);
    else chooseKb('');
  });
  clear(bar,
    h('label', {for: 'kb-select', class: 'kb-label'}, 'KB'),
    select,
    known ? h('span', {class: 'kb-stats'}, `${count(known.sources, 'source')} · ${count(known.units, 'unit')}`) : null,
    h('span', {class: 'kb-actions'},
      h('button', {type: 'button', class: 'secondary small', onclick: createKb}, 'New KB'),
      h('button', {type: 'button', class: 'secondary small', onclick: forkKb, disabled: !current}, 'Fork'),
      h('button', {type: 'button', class: 'secondary small', onclick: saveSession, disabled: !state.session}, 'Save session'),
      pickButton('Upload…')));
}

async function showSources(kb) {
  shownKb = kb;
  const box = $('#kb-sources');
  if (!box) return;
  clear(box, h('p', {class: 'loading'}, 'Loading sources…'));
  try {
    const data = await routes.kbSources(kb);
    clear(box,
      h('h3', null, `Sources of ${data.kb.name}`),
      data.sources.length
        ? h('div', {class: 'table-wrap'}, h('table', {class: 'grid sources-table'},
          h('thead', null, h('tr', null, h('th', null, 'Source'), h('th', null, 'Units'), h('th', null, 'Size'), h('th', null, 'Id'))),
          h('tbody', null, data.sources.map((source) => h('tr', null,
            h('td', null, source.name), h('td', {class: 'num'}, source.unit_count), h('td', {class: 'num'}, bytes(source.bytes)),
            h('td', null, h('code', null, source.id)))))))
        : h('p', {class: 'empty'}, 'No sources yet: drop documents below to add some.'));
  } catch (err) {
    clear(box, h('p', {class: 'turn-error', role: 'alert'}, `${err.code}: ${err.message}`));
  }
}

export function renderKnowledge() {
  const view = $('#view-knowledge');
  const current = nextKb();
  const rows = state.kbs.map((kb) => {
    const mounted = kb.name === current || kb.id === current;
    return h('tr', {class: mounted ? 'mounted' : '', dataset: {kb: kb.name}},
      h('td', null, kb.name, mounted ? h('span', {class: 'chip'}, 'mounted') : null),
      h('td', {class: 'num'}, kb.sources), h('td', {class: 'num'}, kb.units), h('td', null, when(kb.created_at)),
      h('td', null, h('div', {class: 'row-actions'},
        h('button', {type: 'button', class: 'secondary small', onclick: () => showSources(kb.id)}, 'Sources'),
        mounted ? null : h('button', {type: 'button', class: 'secondary small', onclick: () => mountKb(kb.name)}, 'Mount'))));
  });
  const zone = h('div', {class: 'drop-zone', id: 'drop-zone'},
    h('p', null, h('strong', null, 'Drop documents here'), ' (several at once) or ', pickButton('choose files', 'link')),
    h('p', {class: 'hint'}, current
      ? `They are added to ${current}, the KB this session mounts.`
      : 'No KB is mounted: they go to a new workspace KB of this session.'));
  dropTarget(zone);
  clear(view,
    h('div', {class: 'view-head'}, h('h2', null, 'Knowledge bases'),
      h('button', {type: 'button', class: 'secondary small', onclick: createKb}, 'New KB')),
    state.kbs.length
      ? h('div', {class: 'table-wrap'}, h('table', {class: 'grid kb-table'},
        h('thead', null, h('tr', null, h('th', null, 'Name'), h('th', null, 'Sources'), h('th', null, 'Units'), h('th', null, 'Created'), h('th', null, ''))),
        h('tbody', null, rows)))
      : h('p', {class: 'empty'}, 'No knowledge bases yet.'),
    zone,
    h('div', {id: 'kb-sources', class: 'kb-sources'}));
  const show = shownKb || state.kbs.find((kb) => kb.name === current || kb.id === current)?.id;
  if (show) showSources(show);
}

export function initKnowledge() {
  on('session', () => {
    renderKbBar();
    renderKnowledge();
  });
  on('kb', () => refreshKbs().catch(() => {}));
  on('kbs-changed', () => refreshKbs().catch(() => {}));
}
