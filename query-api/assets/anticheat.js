// The Anti-cheat page's live feed. The table body (<tbody data-stream="...">) is rendered by the
// server with the newest flags that match the filters, so the page reads without JavaScript;
// this file opens the browser's own EventSource on the body's stream (same origin, the session
// cookie; the browser resumes with Last-Event-ID by itself after a drop) and puts each new flag
// at the top. Rows arrive as the server's own escaped <tr> markup; nothing here builds HTML from
// data. A row already shown (the page and the feed can overlap by a moment) is not added twice.
(function () {
  "use strict";

  // The table keeps at most this many rows (a page shows 50).
  var MAX_ROWS = 200;

  function note(text) {
    var status = document.getElementById("live-note");
    if (status) status.textContent = text;
  }

  function connect(body) {
    if (body.dataset.live || !window.EventSource) return;
    body.dataset.live = "1";
    var source = new EventSource(body.dataset.stream);
    body.flagSource = source;
    source.addEventListener("flag", function (event) {
      if (!document.body.contains(body)) { source.close(); return; }
      var template = document.createElement("template");
      template.innerHTML = event.data.trim();
      var row = template.content.firstElementChild;
      if (!row || row.tagName !== "TR") return;
      var shown = body.querySelectorAll("tr[data-id]");
      for (var i = 0; i < shown.length; i++) {
        if (shown[i].dataset.id === row.dataset.id) return;
      }
      row.dataset.new = "true";
      row.classList.add("is-new");
      body.insertBefore(row, body.firstElementChild);
      while (body.children.length > MAX_ROWS) body.removeChild(body.lastElementChild);
      var empty = document.getElementById("flags-empty");
      if (empty) empty.remove();
    });
    source.addEventListener("ended", function () {
      source.close();
      note("Live updates stopped: your session ended. Reload the page to sign in again.");
    });
  }

  function connectAll(root) {
    root.querySelectorAll("tbody[data-stream]").forEach(connect);
  }

  // A boosted navigation (a filter applied, another page) replaces the content: its feed goes
  // with it, and the new content's feed starts.
  document.addEventListener("htmx:beforeSwap", function (event) {
    var target = event.detail && event.detail.target;
    if (!target) return;
    target.querySelectorAll("tbody[data-stream]").forEach(function (body) {
      if (body.flagSource) body.flagSource.close();
    });
  });
  document.addEventListener("DOMContentLoaded", function () { connectAll(document); });
  document.addEventListener("htmx:afterSettle", function (event) { connectAll(event.target); });
})();
