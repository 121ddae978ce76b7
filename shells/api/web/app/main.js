// The web app's entry: views and tabs, the token prompt, deep links, first loads.
//
//   /?kb=NAME                           a new session with that KB mounted
//   /?session=ID                        reopen a session
//   /?session=ID&turn=REQUEST_ID        that turn's execution graph

import {onTokenNeeded, routes} from './api.js';
import {$, askText, toast} from './dom.js';
import {initChat, renderConversation} from './chat.js';
import {initGraph, showTurn} from './graph_panel.js';
import {initKnowledge, refreshKbs, renderKnowledge} from './knowledge.js';
import {initPlugins, refreshPlugins, renderPlugins} from './plugins.js';
import {newSession, openSession, refreshSessions, startWithKb} from './sessions.js';
import {renderSettings} from './settings.js';
import {loadPins, on, state} from './state.js';
import {dropTarget} from './upload.js';

const VIEWS = ['chat', 'graph', 'knowledge', 'plugins', 'settings'];
let view = 'chat';

export function showView(name, {turn} = {}) {
  view = VIEWS.includes(name) ? name : 'chat';
  for (const other of VIEWS) {
    $(`#view-${other}`).hidden = other !== view;
    $(`#tab-${other}`).setAttribute('aria-selected', String(other === view));
  }
  document.body.dataset.view = view;
  if (view === 'graph') showTurn(turn);
  else if (view === 'knowledge') renderKnowledge();
  else if (view === 'plugins') renderPlugins();
  else if (view === 'settings') renderSettings();
}

function askToken() {
  return askText({
    title: 'Access token',
    message: 'This daemon was started with --token. Enter it once; this tab keeps it until it closes.',
    label: 'Token',
    type: 'password',
    confirm: 'Continue',
  });
}

function showNotice(text) {
  const notice = $('#notice');
  notice.hidden = !text;
  notice.textContent = text || '';
}

async function daemonStatus() {
  const box = $('#daemon-status');
  try {
    const ready = await routes.ready();
    state.llm = ready.llm || null; // the Settings and Plugins tabs say whether an LLM is configured and answers
    box.className = `daemon-status ${ready.ready ? 'ok' : 'bad'}`;
    box.textContent = ready.ready ? 'ready' : 'not ready';
    box.title = ready.ready ? 'The daemon is ready' : (ready.supervisor?.problems || []).join('\n');
  } catch (err) {
    box.className = 'daemon-status bad';
    box.textContent = 'offline';
    box.title = err.message;
  }
}

async function deepLink() {
  const params = new URL(window.location.href).searchParams;
  const kb = params.get('kb');
  const session = params.get('session');
  const turn = params.get('turn');
  if (session) {
    try {
      await openSession(session, {turn});
      if (turn) showView('graph', {turn});
    } catch (err) {
      newSession();
      showNotice(`Could not open session ${session}: ${err.message}`);
    }
  } else if (kb) {
    try {
      await startWithKb(kb);
    } catch (err) {
      newSession();
      showNotice(err.code === 'KB_NOT_FOUND' ? `There is no knowledge base named “${kb}”.` : `Could not start a session with ${kb}: ${err.message}`);
    }
  } else {
    newSession();
  }
}

async function boot() {
  onTokenNeeded(askToken);
  loadPins();
  initChat();
  initKnowledge();
  initPlugins();
  initGraph();
  for (const name of VIEWS) $(`#tab-${name}`).addEventListener('click', () => showView(name));
  $('#nav-toggle').addEventListener('click', () => {
    const open = document.body.classList.toggle('nav-open');
    $('#nav-toggle').setAttribute('aria-expanded', String(open));
  });
  $('#scrim').addEventListener('click', () => document.body.classList.remove('nav-open'));
  $('#new-session').addEventListener('click', () => {
    newSession();
    showView('chat');
    document.body.classList.remove('nav-open');
    $('#message').focus();
  });
  on('show-graph', (requestId) => showView('graph', {turn: requestId}));
  on('session', ({turn} = {}) => {
    showNotice('');
    if (view === 'graph') showTurn(turn);
  });
  dropTarget($('#view-chat'), $('#drop-overlay'));
  try {
    await Promise.all([refreshSessions(), refreshKbs(), refreshPlugins()]);
  } catch (err) {
    showNotice(`The daemon did not answer: ${err.code ? `${err.code}: ` : ''}${err.message}`);
  }
  await deepLink();
  renderConversation();
  await daemonStatus();
  document.body.classList.add('ready');
}

window.addEventListener('unhandledrejection', (event) => {
  toast(`Unexpected error: ${event.reason?.message || event.reason}`, 'error');
});

boot();
