// Charts for the dashboard's pages, drawn with the vendored uPlot (window.uPlot).
//
// A chart is declared in the page's markup, never in inline script (the Content-Security-Policy
// forbids it): a <figure data-chart="<url of a JSON series>"> holding a <table> with the same
// numbers, which is what a reader without JavaScript (or a screen reader) gets. This file finds
// those figures and draws each one above its table. Pages that draw charts link uplot.min.js,
// uplot.min.css and this file.
(function () {
  "use strict";

  // Draws one figure from `{ x: [unix seconds...], series: [{ label, values: [...] }] }`.
  function draw(figure, data) {
    if (!window.uPlot || !data || !Array.isArray(data.x)) return;
    var width = Math.max(figure.clientWidth, 280);
    var options = {
      width: width,
      height: 220,
      series: [{}].concat((data.series || []).map(function (s) { return { label: s.label }; })),
    };
    var columns = [data.x].concat((data.series || []).map(function (s) { return s.values; }));
    var holder = document.createElement("div");
    holder.setAttribute("aria-hidden", "true");
    figure.insertBefore(holder, figure.firstChild);
    new window.uPlot(options, columns, holder);
  }

  function drawAll(root) {
    root.querySelectorAll("figure[data-chart]").forEach(function (figure) {
      if (figure.dataset.drawn) return;
      figure.dataset.drawn = "1";
      fetch(figure.dataset.chart, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (data) { draw(figure, data); })
        .catch(function () { /* the table stays: the page still reads */ });
    });
  }

  document.addEventListener("DOMContentLoaded", function () { drawAll(document); });
  // htmx swaps (hx-boost navigation, partial refreshes) bring new figures.
  document.addEventListener("htmx:afterSettle", function (event) { drawAll(event.target); });
})();
