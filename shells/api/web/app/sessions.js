// The sessions: the sidebar list (open, new, rename, delete) and the open session's lifecycle.
//
// A new session is created only when it is needed (the first question, a KB action, an upload), so
// opening the page never leaves empty sessions behind; `/?kb=NAME` creates one at once, as asked.

import {routes} from './api.js';
import {askText, clear, clip, confirmAction, h, toast, when} from './dom.js';
import {emit, state, syncUrl} from './state.js';
import {turnFromEntry} from './answer.js';

let pendingKb = ''; // the KB the next new session mounts (chosen before a session exists)

export function nextKb() {
  return state.session ? state.session.kb_name || state.session.kb_id || '' : pendingKb;
}

export function chooseKb(name) {
  pendingKb = name || '';
  emit('session');
}

function title(session) {
  return session.title || 'Untitled session';
}

function item(session) {
  const open = state.session && state.session.session_id === session.session_id;
  const detail = [session.kb_name ? `KB ${session.kb_name}` : 'no KB', `${session.turn_count} turn${session.turn_count === 1 ? '' : 's'}`, when(session.updated_at)]
    .filter(Boolean)
    .join(' · ');
  return h('li', {class: ['session-item', open ? 'open' : ''], dataset: {session: session.session_id}},
    h('button', {
      type: 'button',
      class: 'session-open',
      'aria-current': open ? 'true' : undefined,
      onclick: () => openSession(session.session_id),
    },
    h('span', {class: 'session-title'}, clip(title(session), 80)),
    h('span', {class: 'session-detail'}, detail)),
    h('span', {class: 'session-actions'},
      h('button', {type: 'button', class: 'icon-button', title: 'Rename', 'aria-label': `Rename ${title(session)}`, onclick: () => renameSession(session)}, '✎'),
      h('button', {type: 'button', class: 'icon-button', title: 'Delete', 'aria-label': `Delete ${title(session)}`, onclick: () => deleteSession(session)}, '×')));
}

// One-question sessions (every `mrpvm ask`, every API call without a session) pile up: the latest few
// stay in the list, the older ones fold under one row that shows them on demand.
const RECENT_SINGLES = 5;
let showAllSingles = false;

export function renderSessions() {
  const list = document.getElementById('session-list');
  const sessions = [...state.sessions].sort((a, b) => (b.updated_at || '').localeCompare(a.updated_at || ''));
  if (!sessions.length) {
    clear(list, h('li', {class: 'empty'}, 'No sessions yet. Ask a question to start one.'));
    return;
  }
  const openId = state.session?.session_id;
  let singles = 0;
  const shown = [];
  const folded = [];
  for (const session of sessions) {
    const single = session.turn_count <= 1 && session.session_id !== openId;
    if (single) singles += 1;
    (single && singles > RECENT_SINGLES && !showAllSingles ? folded : shown).push(session);
  }
  const more = folded.length
    ? h('li', {class: 'session-more'}, h('button', {type: 'button', class: 'link-button', onclick: () => {
      showAllSingles = true;
      renderSessions();
    }}, `${folded.length} older one-question session${folded.length === 1 ? '' : 's'}…`))
    : null;
  clear(list, shown.map(item), more);
}

export async function refreshSessions() {
  state.sessions = (await routes.sessions()).sessions;
  renderSessions();
}

/** Open a stored session with its turns. `turn`: a request id whose graph to show. */
export async function openSession(sessionId, {turn} = {}) {
  const [session, explained] = await Promise.all([routes.session(sessionId), routes.explain(sessionId)]);
  state.session = session;
  state.turns = explained.turns.map(turnFromEntry);
  syncUrl({turn});
  renderSessions();
  emit('session', {turn});
  document.body.classList.remove('nav-open');
}

/** Leave the open session: the next question starts a new one (mounting the same KB). */
export function newSession() {
  pendingKb = nextKb();
  state.session = null;
  state.turns = [];
  syncUrl();
  renderSessions();
  emit('session', {});
}

/** The open session, created (with the chosen KB mounted) if there is none yet. */
export async function ensureSession() {
  if (state.session) return state.session;
  state.session = await routes.createSession(pendingKb ? {kb: pendingKb} : {});
  state.turns = [];
  syncUrl();
  await refreshSessions();
  emit('session', {});
  return state.session;
}

/** Start a session with a KB mounted (the `?kb=` deep link). */
export async function startWithKb(kb) {
  state.session = await routes.createSession({kb});
  state.turns = [];
  syncUrl();
  await refreshSessions();
  emit('session', {});
}

export async function reloadSession() {
  if (!state.session) return;
  state.session = await routes.session(state.session.session_id);
  const index = state.sessions.findIndex((s) => s.session_id === state.session.session_id);
  if (index >= 0) state.sessions[index] = state.session;
  else state.sessions.push(state.session);
  renderSessions();
  emit('kb');
}

export async function renameSession(session) {
  const value = await askText({title: 'Rename session', label: 'Title', value: session.title || '', confirm: 'Rename'});
  if (value === null) return;
  try {
    const updated = await routes.renameSession(session.session_id, value);
    if (state.session && state.session.session_id === updated.session_id) state.session = updated;
    await refreshSessions();
  } catch (err) {
    toast(`Rename failed: ${err.message}`, 'error');
  }
}

export async function deleteSession(session) {
  const ok = await confirmAction({
    title: 'Delete session',
    message: `Delete “${title(session)}” with its ${session.turn_count} turns? Its KB is kept.`,
  });
  if (!ok) return;
  try {
    await routes.deleteSession(session.session_id);
  } catch (err) {
    toast(`Delete failed: ${err.message}`, 'error');
    return;
  }
  if (state.session && state.session.session_id === session.session_id) newSession();
  await refreshSessions();
  toast('Session deleted');
}
