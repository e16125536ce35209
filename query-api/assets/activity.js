// The Overview's live activity feed. The list (<ol data-stream="...">) is rendered by the server
// with the latest items, so it reads without JavaScript; this file opens the browser's own
// EventSource on the list's stream (same origin, the session cookie; the browser resumes with
// Last-Event-ID by itself after a drop) and puts each new item at the top. Items arrive as the
// server's own escaped <li> markup; nothing here builds HTML from data.
(function () {
  "use strict";

  // The list keeps as many items as the page rendered at most.
  var MAX_ITEMS = 50;

  function note(list, text) {
    var status = document.getElementById("activity-note");
    if (status) status.textContent = text;
  }

  function connect(list) {
    if (list.dataset.live || !window.EventSource) return;
    list.dataset.live = "1";
    var seen = {};
    var source = new EventSource(list.dataset.stream);
    list.activitySource = source;
    source.addEventListener("activity", function (event) {
      if (!document.body.contains(list)) { source.close(); return; }
      if (event.lastEventId && seen[event.lastEventId]) return;
      seen[event.lastEventId] = true;
      var template = document.createElement("template");
      template.innerHTML = event.data.trim();
      var item = template.content.firstElementChild;
      if (!item) return;
      list.insertBefore(item, list.firstElementChild);
      while (list.children.length > MAX_ITEMS) list.removeChild(list.lastElementChild);
      var empty = document.getElementById("activity-empty");
      if (empty) empty.remove();
    });
    source.addEventListener("ended", function () {
      source.close();
      note(list, "Live updates stopped: your session ended. Reload the page to sign in again.");
    });
  }

  function connectAll(root) {
    root.querySelectorAll("ol[data-stream]").forEach(connect);
  }

  // A boosted navigation replaces the page's content: its stream goes with it.
  document.addEventListener("htmx:beforeSwap", function (event) {
    var target = event.detail && event.detail.target;
    if (!target) return;
    target.querySelectorAll("ol[data-stream]").forEach(function (list) {
      if (list.activitySource) list.activitySource.close();
    });
  });
  document.addEventListener("DOMContentLoaded", function () { connectAll(document); });
  document.addEventListener("htmx:afterSettle", function (event) { connectAll(event.target); });
})();
