// Adding documents to the session's mounted KB: a file picker or drag and drop (several at once),
// each file read as text in the page and sent as JSON (`POST /sessions/{id}/workspace/sources`), with
// a tray showing each file's progress (sending, then ingesting) and an overall bar.

import {postWithProgress, routes} from './api.js';
import {bytes, clear, count, h, toast} from './dom.js';
import {ensureSession, reloadSession} from './sessions.js';
import {emit, state} from './state.js';

const BINARY_HINT = /\u0000/;

/** Keep the tray above the chat's composer (never over the Send button), or at the bottom elsewhere. */
function place(box) {
  const composer = document.getElementById('composer');
  const shown = composer && composer.offsetParent !== null;
  box.style.bottom = shown ? `${Math.max(16, window.innerHeight - composer.getBoundingClientRect().top + 8)}px` : '';
}

function tray() {
  let box = document.getElementById('upload-tray');
  if (!box) {
    box = h('section', {id: 'upload-tray', class: 'upload-tray', 'aria-label': 'Uploads', 'aria-live': 'polite'});
    document.body.append(box);
    const follow = () => (box.isConnected ? place(box) : window.removeEventListener('resize', follow));
    window.addEventListener('resize', follow);
    new MutationObserver(follow).observe(document.querySelector('.views') || document.body, {attributes: true, subtree: true, attributeFilter: ['hidden']});
  }
  place(box);
  return box;
}

async function readText(file) {
  const text = await file.text();
  if (BINARY_HINT.test(text)) throw new Error('not a text document (binary content)');
  const replaced = (text.match(/\uFFFD/g) || []).length;
  if (replaced > 8 && replaced > text.length / 100) throw new Error('not UTF-8 text');
  if (!text.trim()) throw new Error('the file is empty');
  return text;
}

function describe(err) {
  if (err.code === 'BODY_TOO_LARGE') {
    const limit = err.details?.limitBytes;
    return `too large for the daemon's body limit${limit ? ` (${bytes(limit)})` : ''}; start it with --max-body-bytes`;
  }
  return err.code && err.code !== 'HTTP_0' ? `${err.code}: ${err.message}` : err.message;
}

/** Upload `files` one after another into the open session's KB (a session is created if needed). */
export async function uploadFiles(fileList) {
  const files = [...fileList];
  if (!files.length) return;
  const box = tray();
  const overall = h('progress', {class: 'overall', max: files.length, value: 0});
  const heading = h('h2', null, `Adding ${files.length} document${files.length > 1 ? 's' : ''}`);
  const close = h('button', {type: 'button', class: 'icon-button', 'aria-label': 'Close uploads', disabled: true, onclick: () => box.remove()}, '✕');
  const list = h('ul', {class: 'upload-list'});
  clear(box, h('header', null, heading, close), overall, list);
  const rows = files.map((file) => {
    const bar = h('progress', {max: 1, value: 0});
    const note = h('span', {class: 'upload-note'}, 'waiting');
    const row = h('li', {class: 'upload-row', dataset: {file: file.name}},
      h('span', {class: 'upload-name'}, file.name), h('span', {class: 'upload-size'}, bytes(file.size)), bar, note);
    list.append(row);
    return {file, row, bar, note};
  });
  let session;
  try {
    session = await ensureSession();
  } catch (err) {
    heading.textContent = `Upload failed: ${describe(err)}`;
    close.disabled = false;
    return;
  }
  let added = 0;
  for (const [index, item] of rows.entries()) {
    item.row.className = 'upload-row active';
    try {
      item.note.textContent = 'reading';
      const text = await readText(item.file);
      item.note.textContent = 'sending';
      const reply = await postWithProgress(routes.sourcePath(session.session_id), {text, source_name: item.file.name}, (fraction) => {
        item.bar.value = fraction;
        if (fraction >= 1) {
          item.bar.removeAttribute('value'); // indeterminate while the daemon ingests
          item.note.textContent = 'ingesting';
        }
      });
      const source = reply.sources[0] || {};
      item.bar.value = 1;
      item.note.textContent = source.unchanged
        ? 'unchanged (already in the KB)'
        : `${count(source.unit_count, 'unit')}${source.warnings?.length ? ` · ${count(source.warnings.length, 'warning')}` : ''}`;
      if (source.warnings?.length) item.note.title = source.warnings.join('\n');
      item.row.className = 'upload-row done';
      added += 1;
    } catch (err) {
      item.bar.value = 0;
      item.note.textContent = describe(err);
      item.row.className = 'upload-row failed';
    }
    overall.value = index + 1;
  }
  heading.textContent = `${added} of ${files.length} document${files.length > 1 ? 's' : ''} added${state.session?.kb_name ? ` to ${state.session.kb_name}` : ''}`;
  close.disabled = false;
  await reloadSession().catch(() => {});
  emit('kbs-changed');
  if (added < files.length) toast(`${files.length - added} document(s) could not be added`, 'error');
}

/** Make `element` accept dropped files; `overlay` (optional) is shown while files are dragged over it. */
export function dropTarget(element, overlay) {
  let depth = 0;
  const hasFiles = (event) => [...(event.dataTransfer?.types || [])].includes('Files');
  const show = (visible) => {
    if (overlay) overlay.hidden = !visible;
    element.classList.toggle('dragging', visible);
  };
  element.addEventListener('dragenter', (event) => {
    if (!hasFiles(event)) return;
    event.preventDefault();
    depth += 1;
    show(true);
  });
  element.addEventListener('dragover', (event) => {
    if (!hasFiles(event)) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = 'copy';
  });
  element.addEventListener('dragleave', () => {
    depth = Math.max(0, depth - 1);
    if (!depth) show(false);
  });
  element.addEventListener('drop', (event) => {
    if (!hasFiles(event)) return;
    event.preventDefault();
    depth = 0;
    show(false);
    uploadFiles(event.dataTransfer.files);
  });
}

/** A button that opens the file picker (several files at once). */
export function pickButton(label = 'Upload…', className = 'secondary small') {
  const input = h('input', {type: 'file', multiple: true, class: 'visually-hidden', tabindex: '-1', 'aria-hidden': 'true'});
  input.addEventListener('change', () => {
    uploadFiles(input.files);
    input.value = '';
  });
  const button = h('button', {type: 'button', class: className, onclick: () => input.click()}, label);
  return h('span', {class: 'pick'}, button, input);
}
