// The conversation: the open session's turns, the composer, and a streamed answer for each question.

import {streamTurn} from './api.js';
import {answerBody, progressView, turnElement, turnFromCompleted} from './answer.js';
import {$, clear, h, toast} from './dom.js';
import {ensureSession, refreshSessions, reloadSession} from './sessions.js';
import {emit, on, PIN_STAGES, setPin, state} from './state.js';
import {openUnit} from './unit_dialog.js';

const handlers = {
  onSource: (unitId) => openUnit(unitId),
  onGraph: (requestId) => emit('show-graph', requestId),
};

function emptyState() {
  const kb = state.session?.kb_name;
  return h('div', {class: 'empty-chat'},
    h('h2', null, kb ? `Ask about ${kb}` : 'Ask a question'),
    h('p', null, kb
      ? 'Every answer shows its sources and the execution graph of the turn: frames, plugin calls, backtracking and validation.'
      : 'Mount a knowledge base above, or drop documents here to add them to this session’s workspace KB, then ask.'));
}

export function renderConversation() {
  const box = $('#conversation');
  clear(box, state.turns.length ? state.turns.map((turn) => turnElement(turn, handlers)) : emptyState());
  box.scrollTop = box.scrollHeight;
}

export function renderPins() {
  const box = $('#pin-chips');
  const chips = PIN_STAGES.filter((stage) => state.pins[stage.field]).map((stage) =>
    h('span', {class: 'pin-chip'},
      `${stage.label}: ${state.pins[stage.field]}`,
      h('button', {type: 'button', class: 'icon-button', 'aria-label': `Unpin ${stage.label}`, onclick: () => setPin(stage.field, '')}, '✕')));
  clear(box, chips.length ? [h('span', {class: 'pin-label'}, 'Pinned for the next turns:'), chips] : null);
}

function setBusy(busy) {
  state.busy = busy;
  $('#send').disabled = busy;
  $('#send').textContent = busy ? 'Working…' : 'Send';
}

export async function ask(text) {
  const message = text.trim();
  if (!message || state.busy) return;
  setBusy(true);
  const box = $('#conversation');
  const pending = turnElement({userMessage: message}, handlers);
  const live = progressView();
  pending.querySelector('.msg.assistant').append(live.root);
  let sessionId = null;
  try {
    sessionId = (await ensureSession()).session_id;
    box.querySelector('.empty-chat')?.remove();
    box.append(pending);
    box.scrollTop = box.scrollHeight;
    const body = {message, session_id: state.session.session_id, ...state.pins};
    const data = await streamTurn(body, (name, value) => {
      live.event(name, value);
      if (name === 'response.meta') pending.dataset.request = value.request_id;
      box.scrollTop = box.scrollHeight;
    });
    const turn = turnFromCompleted(data, message);
    pending.dataset.request = turn.requestId;
    live.root.replaceWith(answerBody(turn, handlers));
    if (state.session?.session_id === sessionId) {
      state.turns.push(turn); // (the user may have opened another session meanwhile)
      await reloadSession();
    }
  } catch (err) {
    if (!pending.isConnected && (!sessionId || state.session?.session_id === sessionId)) box.append(pending);
    live.fail(err);
    toast(`The turn failed: ${err.message}`, 'error');
  } finally {
    setBusy(false);
    refreshSessions().catch(() => {});
  }
}

export function initChat() {
  const form = $('#composer');
  const input = $('#message');
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = input.value;
    if (!text.trim() || state.busy) return;
    input.value = '';
    ask(text);
  });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  on('session', () => renderConversation());
  on('pins', renderPins);
  renderPins();
}
