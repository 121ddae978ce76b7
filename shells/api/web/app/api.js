// The daemon's API from the page: same origin, JSON bodies, the bearer token when the daemon has one.
//
// The token is asked once (on the first 401) and kept in sessionStorage: it lives as long as the tab.
// Every route the app uses is named here, so a new route (e.g. KB mount or export) is a one-line switch.

const TOKEN_KEY = 'mrpvm.token';

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.message || `HTTP ${status}`);
    this.status = status;
    this.code = body?.code || `HTTP_${status}`;
    this.details = body?.details || {};
    this.body = body;
  }
}

let askToken = null; // set by main.js: () => Promise<string|null>
let pendingToken = null;

export function onTokenNeeded(fn) {
  askToken = fn;
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || '';
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

// Every request that changes something is JSON (a same-origin, JSON-only guard accepts it), even
// without a body (DELETE).
function headers(json) {
  const out = {Accept: 'application/json'};
  if (json) out['Content-Type'] = 'application/json';
  const value = token();
  if (value) out.Authorization = `Bearer ${value}`;
  return out;
}

/** Ask for the token once for every request that got 401 at the same time; false if the user gave up. */
async function obtainToken() {
  if (!askToken) return false;
  pendingToken ??= askToken().finally(() => {
    pendingToken = null;
  });
  const value = await pendingToken;
  if (!value) return false;
  setToken(value);
  return true;
}

async function errorOf(response) {
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = {message: `${response.status} ${response.statusText}`};
  }
  return new ApiError(response.status, body);
}

async function send(method, path, body, {stream = false, signal} = {}) {
  for (let attempt = 0; ; attempt += 1) {
    const response = await fetch(path, {
      method,
      headers: headers(body !== undefined || method !== 'GET'),
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      cache: 'no-store',
      signal,
    });
    if (response.status === 401 && attempt < 3 && (await obtainToken())) continue;
    if (!response.ok) throw await errorOf(response);
    return stream ? response : response.status === 204 ? null : response.json();
  }
}

export const get = (path) => send('GET', path);
export const post = (path, body = {}) => send('POST', path, body);
export const put = (path, body) => send('PUT', path, body);
export const patch = (path, body) => send('PATCH', path, body);
export const del = (path) => send('DELETE', path);

const seg = encodeURIComponent;

export const routes = {
  health: () => get('/health'),
  ready: () => get('/ready').catch((err) => {
    if (err.status === 503 && err.body) return err.body; // not ready: the body says why
    throw err;
  }),
  sessions: () => get('/sessions'),
  session: (id) => get(`/sessions/${seg(id)}`),
  createSession: (body) => post('/sessions', body),
  renameSession: (id, title) => patch(`/sessions/${seg(id)}`, {title}),
  deleteSession: (id) => del(`/sessions/${seg(id)}`),
  explain: (id) => get(`/sessions/${seg(id)}/explainability`),
  unit: (sessionId, unitId) => get(`/sessions/${seg(sessionId)}/units/${seg(unitId)}`),
  kbs: () => get('/kbs'),
  createKb: (name) => post('/kbs', {name}),
  kbSources: (kb) => get(`/kbs/${seg(kb)}/sources`),
  mountKb: (sessionId, kb) => post(`/sessions/${seg(sessionId)}/kb/load`, {kb}),
  forkKb: (sessionId, name, kb) => post(`/sessions/${seg(sessionId)}/kb/fork`, kb ? {name, kb} : {name}),
  saveKb: (sessionId, kb, sourceName) =>
    post(`/sessions/${seg(sessionId)}/kb/save`, sourceName ? {kb, source_name: sourceName} : {kb}),
  plugins: () => get('/plugins'),
  llmRoles: () => get('/settings/llm-roles'),
  setLlmRoles: (body) => put('/settings/llm-roles', body),
  sourcePath: (sessionId) => `/sessions/${seg(sessionId)}/workspace/sources`,
};

/**
 * A streamed chat turn (POST /chat/completions, named SSE events). `onEvent(name, data)` gets every
 * event; resolves with the `response.completed` data, rejects with an ApiError for an `error` event.
 */
export async function streamTurn(body, onEvent) {
  const response = await send('POST', '/chat/completions', {...body, stream: true}, {stream: true});
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let completed = null;
  let failure = null;
  const dispatch = (block) => {
    let name = 'message';
    const data = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) name = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (!data.length) return;
    let value;
    try {
      value = JSON.parse(data.join('\n'));
    } catch {
      return;
    }
    if (name === 'response.completed') completed = value;
    if (name === 'error') failure = new ApiError(value.details?.status || 500, value);
    onEvent(name, value);
  };
  for (;;) {
    const {value, done} = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, {stream: true}).replace(/\r\n/g, '\n');
    let cut;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      dispatch(buffer.slice(0, cut));
      buffer = buffer.slice(cut + 2);
    }
  }
  if (buffer.trim()) dispatch(buffer);
  if (failure) throw failure;
  if (!completed) throw new ApiError(0, {code: 'STREAM_ENDED', message: 'the answer stream ended before the turn completed'});
  return completed;
}

/**
 * POST a JSON body with upload progress (XMLHttpRequest: fetch reports no upload progress).
 * `onProgress(fraction)` runs while the body is sent; resolves with the parsed JSON reply.
 */
export function postWithProgress(path, body, onProgress) {
  const payload = JSON.stringify(body);
  const attempt = () => new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', path);
    for (const [name, value] of Object.entries(headers(true))) xhr.setRequestHeader(name, value);
    xhr.responseType = 'text';
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable && event.total) onProgress(event.loaded / event.total);
    };
    xhr.upload.onload = () => onProgress(1);
    xhr.onerror = () => reject(new ApiError(0, {code: 'NETWORK', message: 'the daemon could not be reached'}));
    xhr.onload = () => {
      let parsed = null;
      try {
        parsed = JSON.parse(xhr.responseText || 'null');
      } catch {
        parsed = {message: xhr.statusText};
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve(parsed);
      else reject(new ApiError(xhr.status, parsed));
    };
    xhr.send(payload);
  });
  return attempt().catch(async (err) => {
    if (err instanceof ApiError && err.status === 401 && (await obtainToken())) return attempt();
    throw err;
  });
}
