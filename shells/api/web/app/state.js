// What the views share: the open session, the KBs, the plugins, the pins for the next turns.
// Views subscribe to named changes; nothing here talks to the daemon.

const listeners = new Map();

export const state = {
  session: null, // SessionInfo of the open session, or null before the first question
  turns: [], // the open session's turns, oldest first (see chat.js: turnFromEntry)
  sessions: [],
  kbs: [],
  plugins: [],
  pins: {}, // {planner_plugin: id, seed_detector_plugin: id, kb_plugin: id, goal_solver_plugin: id, validator_plugin: id}
  busy: false,
};

export const PIN_STAGES = [
  {field: 'planner_plugin', type: 'mrp-plan-plugin', label: 'Planner'},
  {field: 'seed_detector_plugin', type: 'sd-plugin', label: 'Seed detector'},
  {field: 'kb_plugin', type: 'kb-plugin', label: 'Knowledge (kb)'},
  {field: 'goal_solver_plugin', type: 'gs-plugin', label: 'Goal solver'},
  {field: 'validator_plugin', type: 'val-plugin', label: 'Validator'},
];

export function on(name, fn) {
  if (!listeners.has(name)) listeners.set(name, new Set());
  listeners.get(name).add(fn);
}

export function emit(name, detail) {
  for (const fn of listeners.get(name) || []) fn(detail);
}

const PINS_KEY = 'mrpvm.pins';

export function loadPins() {
  try {
    state.pins = JSON.parse(sessionStorage.getItem(PINS_KEY) || '{}') || {};
  } catch {
    state.pins = {};
  }
}

export function setPin(field, pluginId) {
  if (pluginId) state.pins[field] = pluginId;
  else delete state.pins[field];
  sessionStorage.setItem(PINS_KEY, JSON.stringify(state.pins));
  emit('pins');
}

/** The URL that reopens what is on screen: ?session=ID[&turn=REQUEST_ID]. */
export function syncUrl({turn} = {}) {
  const url = new URL(window.location.href);
  url.search = '';
  if (state.session) url.searchParams.set('session', state.session.session_id);
  if (state.session && turn) url.searchParams.set('turn', turn);
  if (url.href !== window.location.href) window.history.replaceState(null, '', url);
}
