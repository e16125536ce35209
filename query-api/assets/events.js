// The Events page: the events list and its live feed, over the dashboard APIs (the funnel
// builder is in events-funnel.js). The key lives in sessionStorage and travels only as an
// Authorization header. Because EventSource cannot send headers, the live feed reads
// Server-Sent Events from fetch()'s streaming body with the small parser below. Event data is
// only ever set as text, never as HTML.
'use strict';

const KEY_STORAGE = 'warden.dashboardKey';
const PAGE_SIZE = 50;
const RETRY_MIN_MS = 1000;
const RETRY_MAX_MS = 30000;

const $ = (id) => document.getElementById(id);

const state = {
  generation: 0, // bumped by every apply or stop; async work from an older one gives up
  filters: new URLSearchParams(),
  cursor: null,
  shownIds: new Set(),
  seenNames: new Set(),
  early: null, // live events that came before the first page was shown
  paused: false,
  queued: [],
  stream: null, // AbortController of the live feed's current request
  lastEventId: null,
  onOpen: null,
};

class AuthError extends Error {}

// ---- small helpers ---------------------------------------------------------------------------

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value == null || value === false) continue;
    if (name === 'className') node.className = value;
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  node.append(...children); // strings become text nodes, so data is never parsed as markup
  return node;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A datetime-local value (local time) as RFC 3339 UTC, or null when empty or invalid. */
function localToRfc3339(value) {
  if (!value) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

function showBox(id, message) {
  const box = $(id);
  box.textContent = message || '';
  box.hidden = !message;
}

// ---- API calls -------------------------------------------------------------------------------

async function api(path, options = {}) {
  const headers = new Headers(options.headers || {});
  headers.set('Authorization', `Bearer ${sessionStorage.getItem(KEY_STORAGE) || ''}`);
  const response = await fetch(path, { ...options, headers, cache: 'no-store' });
  if (response.status === 401 || response.status === 403) {
    throw new AuthError(await problemText(response));
  }
  return response;
}

/** The problem-details `detail` (and field errors) of an error response, as one line. */
async function problemText(response) {
  try {
    const problem = await response.json();
    const fields = (problem.errors || []).map((e) => `${e.field}: ${e.message || e.code}`);
    return [problem.detail || problem.title || `HTTP ${response.status}`, ...fields].join(' — ');
  } catch {
    return `HTTP ${response.status} ${response.statusText}`.trim();
  }
}

function handleFailure(error, boxId) {
  if (error instanceof AuthError) askForKey(`The key was refused: ${error.message}`);
  else showBox(boxId, `Request failed: ${error.message}`);
}

// ---- the key ---------------------------------------------------------------------------------

function askForKey(message) {
  stopFeed();
  sessionStorage.removeItem(KEY_STORAGE);
  $('app').hidden = true;
  $('forget-key').hidden = true;
  $('key-panel').hidden = false;
  showBox('key-message', message);
  $('key-input').value = '';
  $('key-input').focus();
}

function useKey(event) {
  event.preventDefault();
  const key = $('key-input').value.trim();
  if (!key) return;
  sessionStorage.setItem(KEY_STORAGE, key);
  $('key-input').value = '';
  showApp();
}

function showApp() {
  $('key-panel').hidden = true;
  showBox('key-message', '');
  $('app').hidden = false;
  $('forget-key').hidden = false;
  apply();
}

// ---- the list --------------------------------------------------------------------------------

function readFilters() {
  const params = new URLSearchParams();
  for (const name of $('filter-names').value.split(/[\s,]+/).filter(Boolean)) {
    params.append('name', name);
  }
  const player = $('filter-player').value.trim();
  if (player) params.set('player_uuid', player);
  const from = localToRfc3339($('filter-from').value);
  if (from) params.set('from', from);
  const to = localToRfc3339($('filter-to').value);
  if (to) params.set('to', to);
  if ($('filter-internal').checked) params.set('internal', 'true');
  return params;
}

function renderEvent(event, isNew) {
  const when = new Date(event.occurred_at);
  const row = el('li', {
    className: isNew ? 'event is-new' : 'event', 'data-testid': 'event-row',
    'data-id': event.id, 'data-seq': event.seq, 'data-name': event.name, 'data-new': isNew ? 'true' : null,
  },
  el('time', { className: 'event-time', datetime: event.occurred_at, title: `received ${event.received_at}` },
    when.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' })),
  el('span', { className: 'event-head' },
    el('button', { type: 'button', className: 'event-name', 'data-testid': 'event-name',
      title: `Build a funnel starting at ${event.name}` }, event.name),
    isNew ? el('span', { className: 'new-badge', 'data-testid': 'new-badge' }, 'new') : ''),
  el('span', { className: 'event-player', 'data-testid': 'event-player' }, event.player_uuid || '—'),
  el('pre', { className: 'event-properties', 'data-testid': 'event-properties' },
    JSON.stringify(event.properties, null, 2)));
  rememberName(event.name);
  return row;
}

function rememberName(name) {
  if (state.seenNames.has(name)) return;
  state.seenNames.add(name);
  $('seen-names').append(el('option', { value: name }));
}

function appendEvents(events) {
  for (const event of events) {
    if (state.shownIds.has(event.id)) continue;
    state.shownIds.add(event.id);
    $('events-list').append(renderEvent(event, false));
  }
  $('list-empty').hidden = $('events-list').children.length > 0;
}

function showLive(event) {
  if (state.shownIds.has(event.id)) return;
  state.shownIds.add(event.id);
  $('events-list').prepend(renderEvent(event, true));
  $('list-empty').hidden = true;
}

async function loadPage(generation, first) {
  const params = new URLSearchParams(state.filters);
  params.set('limit', PAGE_SIZE);
  if (!first && state.cursor) params.set('cursor', state.cursor);
  $('load-more').disabled = true;
  try {
    const response = await api(`/api/v1/events?${params}`);
    if (generation !== state.generation) return;
    if (!response.ok) {
      showBox('list-error', await problemText(response));
      return;
    }
    const page = await response.json();
    if (generation !== state.generation) return;
    appendEvents(page.items);
    state.cursor = page.next_cursor;
    $('load-more').hidden = !state.cursor;
    // Without a live event yet, resume any reconnect after the newest event shown.
    if (first && state.lastEventId == null && page.items.length > 0) {
      state.lastEventId = String(Math.max(...page.items.map((item) => item.seq)));
    }
  } catch (error) {
    if (generation === state.generation) handleFailure(error, 'list-error');
  } finally {
    $('load-more').disabled = false;
  }
}

async function apply(event) {
  if (event) event.preventDefault();
  stopFeed();
  const generation = state.generation;
  state.filters = readFilters();
  state.cursor = null;
  state.shownIds.clear();
  state.queued = [];
  state.early = [];
  $('events-list').replaceChildren();
  $('load-more').hidden = true;
  $('list-empty').hidden = true;
  showBox('list-error', '');
  showBox('list-notice', '');
  updateQueued();
  // Subscribe before reading the first page, so no event can fall between the two.
  const opened = new Promise((resolve) => { state.onOpen = resolve; });
  runFeed(generation);
  await Promise.race([opened, sleep(3000)]);
  await loadPage(generation, true);
  if (generation !== state.generation) return;
  const early = state.early;
  state.early = null;
  for (const live of early) receive(live);
}

// ---- the live feed ---------------------------------------------------------------------------

/** An SSE parser: feed it decoded text, it calls onMessage({type, data, id}) per event. */
function sseParser(onMessage) {
  let buffer = '';
  let data = [];
  let type = '';
  let id = null;
  return (chunk) => {
    let text = buffer + chunk;
    // A chunk may end between the \r and \n of one line break: keep the \r for the next one.
    const held = text.endsWith('\r') ? '\r' : '';
    if (held) text = text.slice(0, -1);
    const lines = text.split(/\r\n|\r|\n/);
    buffer = lines.pop() + held;
    for (const line of lines) {
      if (line === '') {
        if (data.length > 0) onMessage({ type: type || 'message', data: data.join('\n'), id });
        data = [];
        type = '';
        continue;
      }
      if (line.startsWith(':')) continue; // a comment: the server's keep-alive
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') data.push(value);
      else if (field === 'event') type = value;
      else if (field === 'id' && !value.includes('\0')) id = value;
    }
  };
}

function setLive(status, text) {
  const badge = $('live-status');
  badge.dataset.state = status;
  badge.textContent = text;
}

function stopFeed() {
  state.generation += 1;
  if (state.stream) state.stream.abort();
  state.stream = null;
  state.lastEventId = null;
  setLive('idle', 'offline');
}

async function runFeed(generation) {
  let delay = RETRY_MIN_MS;
  while (generation === state.generation) {
    const controller = new AbortController();
    state.stream = controller;
    setLive('connecting', 'connecting…');
    try {
      const headers = { Accept: 'text/event-stream' };
      if (state.lastEventId != null) headers['Last-Event-ID'] = state.lastEventId;
      const response = await api(`/api/v1/events/stream?${state.filters}`,
        { headers, signal: controller.signal });
      if (response.status === 422 && state.lastEventId != null) {
        state.lastEventId = null; // the resume point is not valid (any more): start afresh
        continue;
      }
      if (!response.ok || !response.body) {
        const problem = await problemText(response);
        if (response.status >= 400 && response.status < 500) {
          showBox('list-error', `Live feed: ${problem}`);
          setLive('idle', 'offline');
          return;
        }
        throw new Error(problem);
      }
      setLive('live', 'live');
      if (state.onOpen) state.onOpen();
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      const parse = sseParser((message) => {
        if (generation === state.generation) onMessage(message);
      });
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parse(decoder.decode(value, { stream: true }));
        delay = RETRY_MIN_MS; // the connection works: the next drop starts the backoff anew
      }
    } catch (error) {
      if (generation !== state.generation || controller.signal.aborted) return;
      if (error instanceof AuthError) {
        askForKey(`The key was refused: ${error.message}`);
        return;
      }
    }
    if (generation !== state.generation) return;
    const wait = Math.round(delay * (0.75 + Math.random() * 0.5));
    setLive('reconnecting', `reconnecting in ${Math.ceil(wait / 1000)} s`);
    await sleep(wait);
    delay = Math.min(delay * 2, RETRY_MAX_MS);
  }
}

function onMessage(message) {
  if (message.id != null) state.lastEventId = message.id;
  if (message.type === 'missed') {
    showBox('list-notice', 'The live feed fell behind; the missed events are being caught up.');
    return;
  }
  if (message.type !== 'message') return;
  try {
    receive(JSON.parse(message.data));
  } catch {
    // Not an event: ignore it rather than break the feed.
  }
}

function receive(event) {
  if (state.early) state.early.push(event);
  else if (state.paused) {
    state.queued.push(event);
    updateQueued();
  } else showLive(event);
}

function togglePause() {
  state.paused = !state.paused;
  const button = $('pause-toggle');
  button.textContent = state.paused ? 'Resume' : 'Pause';
  button.setAttribute('aria-pressed', String(state.paused));
  if (!state.paused) {
    const queued = state.queued;
    state.queued = [];
    queued.forEach(showLive); // oldest first, so the newest ends on top
  }
  updateQueued();
}

function updateQueued() {
  const badge = $('queued-count');
  badge.dataset.count = state.queued.length;
  badge.textContent = `${state.queued.length} queued`;
  badge.hidden = !state.paused;
}

// ---- wiring ----------------------------------------------------------------------------------

document.addEventListener('DOMContentLoaded', () => {
  $('key-form').addEventListener('submit', useKey);
  $('forget-key').addEventListener('click', () => askForKey(''));
  $('filters').addEventListener('submit', apply);
  $('load-more').addEventListener('click', () => loadPage(state.generation, false));
  $('pause-toggle').addEventListener('click', togglePause);
  $('events-list').addEventListener('click', (event) => {
    const name = event.target.closest('.event-name');
    if (name) openFunnel(name.textContent);
  });
  if (sessionStorage.getItem(KEY_STORAGE)) showApp();
  else $('key-input').focus();
});
