// One turn on screen: the question, then one card per question (intent) of the turn with its status,
// warnings, the answer as Markdown and the sources it used (each opens the unit's text), then what
// served the turn (plugins, time, LLM calls) and the way to its execution graph.

import {clip, count, h, ms, pill} from './dom.js';
import {renderMarkdown} from './markdown.js';

const STAGES = [['planner', 'planner'], ['sd', 'seeds'], ['kb', 'knowledge'], ['gs', 'solver'], ['val', 'validator']];
const ORIGINS = [
  ['currentTurnContext', 'this turn'],
  ['sessionSources', 'session'],
  ['kbSources', 'KB'],
];

/** A turn from an explainability entry (GET /sessions/{id}/explainability). */
export function turnFromEntry(entry) {
  return {
    requestId: entry.request_id,
    userMessage: entry.user_message,
    status: entry.status,
    document: entry.response_document || {},
    llmCalls: entry.llm_calls,
    durationMs: entry.duration_ms,
    trace: entry.trace || null,
    createdAt: entry.created_at,
  };
}

/** A turn from the `response.completed` event of a streamed answer. */
export function turnFromCompleted(data, message) {
  return {
    requestId: data.request_id,
    userMessage: message,
    status: data.status,
    document: data.response_document || {},
    llmCalls: data.llm_calls,
    durationMs: data.duration_ms,
    trace: data.execution_trace || null,
    markdown: data.response_markdown,
  };
}

function sourceList(group, onSource) {
  const seen = new Set();
  const items = [];
  for (const [key, origin] of ORIGINS) {
    for (const ref of group[key] || []) {
      if (seen.has(ref.id)) continue;
      seen.add(ref.id);
      const place = [ref.sourceName, ref.section].filter(Boolean).join(' › ');
      const topic = ref.topic && ref.topic !== ref.section ? ref.topic : '';
      items.push(h('li', null,
        h('button', {
          type: 'button',
          class: 'source',
          dataset: {unitId: ref.id},
          title: ref.excerpt || ref.id,
          onclick: () => onSource(ref.id),
        },
        h('span', {class: 'source-place'}, place || ref.id),
        topic ? h('span', {class: 'source-topic'}, ` — ${topic}`) : null,
        h('span', {class: 'origin'}, origin),
        h('code', {class: 'source-id'}, ref.id))));
    }
  }
  if (!items.length) return h('p', {class: 'no-sources'}, 'No sources: the answer is not grounded in a unit.');
  return h('details', {class: 'sources', open: true},
    h('summary', null, `Sources (${items.length})`),
    h('ul', null, items));
}

function groupCard(group, number, onSource, depth = 0) {
  const validation = group.validation && !['none', 'unvalidated'].includes(group.validation) ? group.validation : '';
  const answer = h('div', {class: 'answer'});
  renderMarkdown(answer, group.answerMarkdown || '');
  return h('section', {class: ['group', depth ? 'subgroup' : ''], dataset: {intent: group.intentRef || ''}},
    h('header', {class: 'group-head'},
      h('span', {class: 'group-number'}, number),
      h('h3', {class: 'group-intent'}, group.intent || '(no intent)'),
      h('span', {class: 'chips'},
        group.act ? h('span', {class: 'chip'}, group.act) : null,
        pill(group.status || 'unknown', group.status, 'status of this question'),
        validation ? pill(validation, validation, 'validation') : null,
        group.confidence ? h('span', {class: 'chip', title: 'confidence'}, group.confidence) : null)),
    (group.warnings || []).length
      ? h('ul', {class: 'warnings'}, group.warnings.map((w) => h('li', null, w)))
      : null,
    answer,
    sourceList(group, onSource),
    (group.subgroups || []).map((sub, i) => groupCard(sub, `${number}.${i + 1}`, onSource, depth + 1)));
}

function meta(turn, onGraph) {
  const doc = turn.document || {};
  const plugins = doc.plugins || {};
  const used = STAGES.filter(([key]) => plugins[key]).map(([key, label]) => h('span', {class: 'used', title: label}, plugins[key]));
  return h('footer', {class: 'turn-meta'},
    pill(turn.status || doc.status || '?', turn.status || doc.status, 'turn status'),
    used.length ? h('span', {class: 'plugins-used'}, used) : null,
    h('span', {class: 'figure', title: 'turn duration'}, ms(turn.durationMs ?? doc.durationMs)),
    h('span', {class: 'figure', title: 'LLM calls'}, `${turn.llmCalls ?? doc.llmCalls ?? 0} LLM calls`),
    turn.requestId
      ? h('button', {type: 'button', class: 'secondary small graph-button', dataset: {request: turn.requestId}, onclick: () => onGraph(turn.requestId)}, 'Execution graph')
      : null,
    turn.requestId ? h('code', {class: 'request-id', title: 'request id'}, turn.requestId) : null);
}

/** The assistant's part of a finished turn. */
export function answerBody(turn, {onSource, onGraph}) {
  const doc = turn.document || {};
  const groups = doc.groups || [];
  const body = h('div', {class: 'assistant-body'});
  if ((doc.warnings || []).length) body.append(h('ul', {class: 'warnings turn-warnings'}, doc.warnings.map((w) => h('li', null, w))));
  if (!groups.length) {
    const text = turn.markdown || `Context recorded: ${count(doc.currentTurnUnits, 'knowledge unit')} from this turn; no question found.`;
    body.append(renderMarkdown(h('div', {class: 'answer'}), text));
  }
  groups.forEach((group, index) => body.append(groupCard(group, String(index + 1), onSource)));
  body.append(meta(turn, onGraph));
  return body;
}

/** The whole turn: the question and the answer (or, while it runs, a placeholder the caller fills). */
export function turnElement(turn, handlers) {
  return h('article', {class: 'turn', dataset: {request: turn.requestId || ''}},
    h('div', {class: 'msg user'}, h('p', null, turn.userMessage)),
    h('div', {class: 'msg assistant'}, turn.document ? answerBody(turn, handlers) : null));
}

/** The live view of a running turn: plugin calls as they start and end, then the streamed Markdown. */
export function progressView() {
  const list = h('ol', {class: 'progress-list'});
  const streamed = h('div', {class: 'answer streamed'});
  const status = h('p', {class: 'progress-status'}, h('span', {class: 'spinner', 'aria-hidden': 'true'}), 'Working…');
  const root = h('div', {class: 'assistant-body running'}, status, list, streamed);
  const rows = new Map();
  let markdown = '';
  return {
    root,
    event(name, data) {
      if (name === 'response.meta') {
        status.lastChild.textContent = `Working… (${data.request_id})`;
      } else if (name === 'progress' && data.event === 'plugin-start') {
        const row = h('li', {class: 'st-pending'},
          h('span', {class: 'call'}, `${data.pluginId} · ${data.op}`),
          h('span', {class: 'call-status'}, 'running'));
        rows.set(data.node, row);
        list.append(row);
        if (list.children.length > 12) list.firstElementChild.remove();
      } else if (name === 'progress' && data.event === 'plugin-end') {
        const row = rows.get(data.node);
        if (row) {
          row.className = '';
          row.lastChild.replaceWith(h('span', {class: 'call-status'}, pill(data.status || 'done', data.status), ` ${ms(data.durationMs)}`));
        }
      } else if (name === 'response.delta') {
        markdown += data.delta || '';
        renderMarkdown(streamed, markdown);
      }
    },
    fail(error) {
      root.classList.remove('running');
      root.replaceChildren(h('div', {class: 'turn-error', role: 'alert'},
        h('strong', null, error.code || 'ERROR'), ': ', clip(error.message || String(error), 600)));
    },
  };
}
