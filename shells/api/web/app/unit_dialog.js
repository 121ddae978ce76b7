// A cited unit's text in a dialog: where it comes from (file › heading), its role and topic, its own
// text as plain text, and its parent and child units to walk the document's tree.

import {routes} from './api.js';
import {clear, h} from './dom.js';
import {state} from './state.js';

const dialog = () => document.getElementById('unit-dialog');

function related(title, ids, open) {
  if (!ids || !ids.length) return null;
  return h('div', {class: 'related'},
    h('h3', null, title),
    h('ul', null, ids.map((id) => h('li', null, h('button', {type: 'button', class: 'link', onclick: () => open(id)}, id)))));
}

function closeButton(box) {
  return h('button', {type: 'button', class: 'icon-button close', 'aria-label': 'Close', onclick: () => box.close()}, '✕');
}

export async function openUnit(unitId) {
  const box = dialog();
  clear(box, h('p', {class: 'loading'}, `Loading ${unitId}…`));
  if (!box.open) box.showModal();
  if (!state.session) {
    clear(box, closeButton(box), h('p', null, 'Open a session first.'));
    return;
  }
  let unit;
  try {
    unit = await routes.unit(state.session.session_id, unitId);
  } catch (err) {
    clear(box, closeButton(box), h('h2', {id: 'unit-title'}, unitId), h('p', {class: 'turn-error', role: 'alert'}, `${err.code}: ${err.message}`));
    return;
  }
  const data = unit.unit || {};
  const origin = unit.origin === 'kb' ? `KB ${unit.kb_name || unit.kb_id}` : 'this session';
  clear(box,
    h('header', {class: 'unit-head'},
      h('h2', {id: 'unit-title'}, unit.place.length ? unit.place.join(' › ') : unit.id),
      closeButton(box)),
    h('dl', {class: 'unit-meta'},
      h('dt', null, 'Unit'), h('dd', null, h('code', null, unit.id)),
      h('dt', null, 'From'), h('dd', null, origin),
      data.role ? [h('dt', null, 'Role'), h('dd', null, `${data.role} (${data.kuType || 'unit'})`)] : null,
      data.topic ? [h('dt', null, 'Topic'), h('dd', null, data.topic)] : null,
      data.subject ? [h('dt', null, 'Fact'), h('dd', null, `${data.subject} — ${data.relation} — ${data.object}`)] : null),
    h('pre', {class: 'unit-text'}, unit.text),
    related('Parent units', data.parentUnitIds, openUnit),
    related('Child units', data.childUnitIds, openUnit));
}
