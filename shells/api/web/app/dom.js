// Building DOM without HTML strings: every text goes through textContent, so whatever a document,
// a plugin or the user wrote is shown as text, never parsed as markup. (The one exception, rendered
// Markdown, lives in markdown.js behind a Trusted Types policy.)

const SVG_NS = 'http://www.w3.org/2000/svg';

function apply(el, attrs) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') el.setAttribute('class', Array.isArray(value) ? value.filter(Boolean).join(' ') : value);
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (key === 'text') el.textContent = value;
    else el.setAttribute(key, value === true ? '' : String(value));
  }
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** h('button', {class: 'x', onclick: f}, 'text', child, [more]) — an HTML element. */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  apply(el, attrs);
  append(el, children);
  return el;
}

/** The same for SVG elements. */
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  apply(el, attrs);
  append(el, children);
  return el;
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

export const $ = (selector, root = document) => root.querySelector(selector);

/** "1 source", "2 sources": a number with its noun, singular for one. */
export function count(n, noun) {
  const value = Number(n) || 0;
  return `${value} ${noun}${value === 1 ? '' : 's'}`;
}

export function clip(text, limit) {
  const value = String(text ?? '');
  return value.length <= limit ? value : `${value.slice(0, limit - 1)}…`;
}

export function ms(value) {
  const n = Number(value) || 0;
  if (n >= 10000) return `${(n / 1000).toFixed(1)} s`;
  if (n >= 1000) return `${(n / 1000).toFixed(2)} s`;
  if (n >= 100) return `${Math.round(n)} ms`;
  return `${n.toFixed(1)} ms`;
}

export function bytes(n) {
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${n} B`;
}

export function when(iso) {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const today = new Date();
  const sameDay = date.toDateString() === today.toDateString();
  return sameDay
    ? date.toLocaleTimeString([], {hour: '2-digit', minute: '2-digit'})
    : date.toLocaleDateString([], {month: 'short', day: 'numeric'});
}

/** A status word as a CSS class: the colour families the graph and the chat share. */
export function statusClass(status) {
  const value = String(status || '').toLowerCase();
  if (['success', 'accepted', 'sufficient', 'cache-hit', 'ok'].includes(value)) return 'st-success';
  if (['insufficient', 'weak', 'partial', 'mixed'].includes(value)) return 'st-insufficient';
  if (value === 'no-context') return 'st-no-context';
  if (value === 'rejected' || value.includes('reject')) return 'st-rejected';
  if (['error', 'failed', 'timeout'].includes(value)) return 'st-error';
  if (value.startsWith('skipped') || ['unsupported', 'unused', 'depth-limit'].includes(value)) return 'st-skipped';
  if (value === 'needs-decomposition') return 'st-decompose';
  if (value === 'pending' || value === 'running') return 'st-pending';
  return 'st-neutral';
}

export function pill(text, status, title) {
  return h('span', {class: ['pill', statusClass(status ?? text)], title}, text);
}

/** A short notice in the corner; errors stay longer. */
export function toast(message, kind = 'info') {
  const box = document.getElementById('toasts');
  const item = h('div', {class: ['toast', `toast-${kind}`], role: kind === 'error' ? 'alert' : 'status'}, message);
  box.append(item);
  setTimeout(() => item.remove(), kind === 'error' ? 9000 : 4000);
}

/** A small modal form: resolves with the entered text, or null when cancelled. */
export function askText({title, label, value = '', placeholder = '', confirm = 'OK', hint = '', message = '', type = 'text'}) {
  const dialog = document.getElementById('ask-dialog');
  return new Promise((resolve) => {
    const input = h('input', {type, name: 'value', value, placeholder, required: true, autocomplete: 'off'});
    const form = h('form', {method: 'dialog', class: 'ask-form'},
      h('h2', null, title),
      message ? h('p', null, message) : null,
      h('label', null, label, input),
      hint ? h('p', {class: 'hint'}, hint) : null,
      h('div', {class: 'actions'},
        h('button', {type: 'button', class: 'secondary', onclick: () => dialog.close('')}, 'Cancel'),
        h('button', {type: 'submit', class: 'primary', value: 'ok'}, confirm)));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      dialog.close('ok');
    });
    clear(dialog, form);
    dialog.onclose = () => resolve(dialog.returnValue === 'ok' ? input.value.trim() : null);
    dialog.returnValue = '';
    dialog.showModal();
    input.select();
  });
}

/** A yes/no question in the same dialog. */
export function confirmAction({title, message, confirm = 'Delete', danger = true}) {
  const dialog = document.getElementById('ask-dialog');
  return new Promise((resolve) => {
    const form = h('form', {method: 'dialog', class: 'ask-form'},
      h('h2', null, title),
      h('p', null, message),
      h('div', {class: 'actions'},
        h('button', {type: 'button', class: 'secondary', onclick: () => dialog.close('')}, 'Cancel'),
        h('button', {type: 'submit', class: danger ? 'danger' : 'primary', value: 'ok'}, confirm)));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      dialog.close('ok');
    });
    clear(dialog, form);
    dialog.onclose = () => resolve(dialog.returnValue === 'ok');
    dialog.returnValue = '';
    dialog.showModal();
  });
}
