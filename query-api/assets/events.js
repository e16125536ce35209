// The Events page's live feed (the page itself is server-rendered and works without this
// file). The list's section (#feed) says where its live stream is (data-stream) and the seq of
// its newest row (data-after); this opens that stream with the browser's own EventSource (the
// session cookie goes with it), puts new events on top, marked new, and queues them while
// paused. The browser reconnects by itself with Last-Event-ID; when it gives up (the
// connection closed for good), this reconnects with `after` = the last event seen, so nothing
// is missed either way. When htmx swaps the list (a filter applied), the feed follows the new
// one. Event data is only ever set as text, never as HTML.
(function () {
  'use strict';

  var RETRY_MIN_MS = 1000;
  var RETRY_MAX_MS = 30000;
  var GIVE_UP_AFTER = 6; // failed reconnects in a row

  var feed = null; // the #feed element the stream belongs to
  var source = null; // its EventSource
  var lastSeq = null; // the newest event seen: where a reconnect resumes
  var retryTimer = null;
  var failures = 0;
  var paused = false;
  var queued = [];

  function $(id) { return document.getElementById(id); }

  function el(tag, attrs) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (name) {
      var value = attrs[name];
      if (value == null || value === false) return;
      if (name === 'className') node.className = value;
      else node.setAttribute(name, value === true ? '' : String(value));
    });
    for (var i = 2; i < arguments.length; i++) node.append(arguments[i]);
    return node;
  }

  function setStatus(state, text) {
    var badge = $('live-status');
    if (!badge) return;
    badge.dataset.state = state;
    badge.textContent = text;
  }

  function notice(message, link) {
    var box = $('live-notice');
    if (!box) return;
    box.replaceChildren();
    if (message) box.append(message);
    if (link) box.append(' ', el('a', { href: link.href }, link.text));
    box.hidden = !message;
  }

  // ---- the stream ----------------------------------------------------------------------------

  function stop() {
    if (retryTimer) clearTimeout(retryTimer);
    retryTimer = null;
    if (source) source.close();
    source = null;
  }

  function connect() {
    stop();
    if (!feed || !feed.dataset.stream || !document.contains(feed)) {
      setStatus('idle', 'live updates off');
      return;
    }
    var url = new URL(feed.dataset.stream, window.location.origin);
    if (lastSeq != null) url.searchParams.set('after', lastSeq);
    setStatus('connecting', 'connecting…');
    var current = new EventSource(url.pathname + url.search);
    source = current;
    current.onopen = function () {
      if (current !== source) return;
      failures = 0;
      setStatus('live', 'live');
    };
    current.onmessage = function (message) {
      if (current !== source) return;
      if (message.lastEventId) lastSeq = message.lastEventId;
      var event;
      try { event = JSON.parse(message.data); } catch (e) { return; }
      receive(event);
    };
    current.addEventListener('missed', function () {
      if (current === source) notice('The live feed fell behind; the missed events are being caught up.');
    });
    current.addEventListener('revoked', function () {
      if (current !== source) return;
      stop();
      setStatus('idle', 'live updates off');
      notice('Your session has ended, so live updates stopped.', { href: '/login', text: 'Sign in again' });
    });
    current.onerror = function () {
      if (current !== source) return;
      if (current.readyState !== EventSource.CLOSED) {
        // The browser reconnects by itself, sending Last-Event-ID.
        setStatus('reconnecting', 'reconnecting…');
        return;
      }
      failures += 1;
      if (failures > GIVE_UP_AFTER) {
        stop();
        setStatus('idle', 'live updates off');
        notice('Live updates stopped. Reload the page to start them again.');
        return;
      }
      var delay = Math.min(RETRY_MIN_MS * Math.pow(2, failures - 1), RETRY_MAX_MS);
      var wait = Math.round(delay * (0.75 + Math.random() * 0.5));
      setStatus('reconnecting', 'reconnecting in ' + Math.ceil(wait / 1000) + ' s');
      retryTimer = setTimeout(connect, wait);
    };
  }

  // ---- rows ----------------------------------------------------------------------------------

  /** `2025-01-31 12:00:00`, UTC, as the server writes it. */
  function utc(iso) {
    var date = new Date(iso);
    return Number.isNaN(date.getTime()) ? iso : date.toISOString().slice(0, 19).replace('T', ' ');
  }

  function row(event) {
    var player = event.player_uuid
      ? el('code', {}, event.player_uuid)
      : el('span', { className: 'muted' }, 'none');
    return el('tr', {
      className: 'is-new', 'data-testid': 'event-row', 'data-id': event.id, 'data-seq': event.seq,
      'data-name': event.name, 'data-new': 'true',
    },
    el('td', {}, el('time', { datetime: event.occurred_at }, utc(event.occurred_at))),
    el('td', {},
      el('a', { className: 'event-name', 'data-testid': 'event-name',
        href: '/funnels?step=' + encodeURIComponent(event.name),
        title: 'Build a funnel starting at ' + event.name }, event.name),
      el('span', { className: 'new-badge', 'data-testid': 'new-badge' }, 'new')),
    el('td', {}, player),
    el('td', {}, event.withheld
      ? el('span', { className: 'muted', 'data-testid': 'withheld' }, 'withheld for your role')
      : el('code', { className: 'props' }, JSON.stringify(event.properties))));
  }

  function shown(id) {
    var list = $('events-list');
    return !list || Array.prototype.some.call(list.children, function (tr) { return tr.dataset.id === id; });
  }

  function show(event) {
    var list = $('events-list');
    if (!list || shown(event.id)) return;
    list.prepend(row(event));
    var empty = $('list-empty');
    if (empty) empty.remove();
  }

  function receive(event) {
    if (paused) {
      queued.push(event);
      updateQueued();
    } else {
      show(event);
    }
  }

  // ---- pause ---------------------------------------------------------------------------------

  function updateQueued() {
    var badge = $('queued-count');
    if (!badge) return;
    badge.dataset.count = String(queued.length);
    badge.textContent = queued.length + ' queued';
    badge.hidden = !paused;
  }

  function togglePause() {
    paused = !paused;
    var button = $('pause-toggle');
    button.textContent = paused ? 'Resume' : 'Pause';
    button.setAttribute('aria-pressed', String(paused));
    if (!paused) {
      var waiting = queued;
      queued = [];
      waiting.forEach(show); // oldest first, so the newest ends on top
    }
    updateQueued();
  }

  // ---- wiring --------------------------------------------------------------------------------

  /** Follows the list on the page now (the first one, or the one htmx just swapped in). */
  function follow() {
    var current = $('feed');
    if (current === feed) return;
    feed = current;
    queued = [];
    updateQueued();
    notice('');
    failures = 0;
    lastSeq = feed && feed.dataset.after ? feed.dataset.after : null;
    connect();
  }

  document.addEventListener('DOMContentLoaded', function () {
    var bar = $('live-bar');
    if (!bar) return;
    bar.hidden = false;
    $('pause-toggle').addEventListener('click', togglePause);
    follow();
  });
  document.addEventListener('htmx:afterSettle', follow);
  // Leaving the page (or the tab going away) closes the stream.
  window.addEventListener('pagehide', stop);
  window.addEventListener('pageshow', function (event) { if (event.persisted && feed) connect(); });
})();
