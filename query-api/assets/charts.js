// Charts for the dashboard's pages, drawn with the vendored uPlot (window.uPlot).
//
// A chart is declared in the page's markup, never in inline script (the Content-Security-Policy
// forbids it): a <figure data-chart="<its numbers as JSON>"> with a caption and the same figures
// as a <table>, which is what a reader without JavaScript (or a screen reader) gets. The data is
// an attribute rather than a <script type="application/json"> block because htmx drops script
// elements from what it swaps in (allowScriptTags is off). This file draws each such figure
// above its caption. The data (pages/charts.rs):
//   { unit, x: [unix seconds...], series: [{ label, values: [...], color?: n, dash?: bool }],
//     band: [upper, lower] | null, marks: [{ kind: "down"|"slow", from, to }],
//     x_label?: the x axis's label when x is not a time (then x holds plain numbers) }
// A band fills between two series (lowest to highest); marks shade downtime and low-TPS spells.
(function () {
  "use strict";

  function color(name, fallback) {
    var value = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
    return value || fallback;
  }

  // Shades each mark's span over the whole plot height, under the lines.
  function marksPlugin(marks) {
    return {
      hooks: {
        drawClear: function (u) {
          if (!marks || !marks.length) return;
          var ctx = u.ctx;
          var top = u.bbox.top, height = u.bbox.height;
          ctx.save();
          marks.forEach(function (mark) {
            var left = u.valToPos(mark.from, "x", true);
            var right = u.valToPos(mark.to, "x", true);
            var from = Math.max(left, u.bbox.left);
            var to = Math.min(right, u.bbox.left + u.bbox.width);
            if (to <= from) return;
            ctx.fillStyle = mark.kind === "down" ? color("--chart-down", "rgba(200,40,40,0.18)")
                                                 : color("--chart-slow", "rgba(220,150,0,0.2)");
            ctx.fillRect(from, top, Math.max(to - from, 1), height);
          });
          ctx.restore();
        },
      },
    };
  }

  function draw(figure, data) {
    if (!window.uPlot || !data || !Array.isArray(data.x)) return;
    var accent = color("--accent", "#2457c5");
    var muted = color("--muted", "#5b616e");
    var grid = color("--border", "#d9dce1");
    var band = Array.isArray(data.band) ? data.band : null;
    var palette = [accent, "#b8432f", "#1d7a46", "#7b3fa0", "#b35c00", "#127a72", "#5b616e",
                   "#8a7300", "#23395b", "#b0306a", "#4b4fc4"];
    var series = [{}].concat((data.series || []).map(function (s, i) {
      var edge = band && (i + 1 === band[0] || i + 1 === band[1]);
      // `color` picks a palette entry (one per breakdown series); `dash` draws a comparison
      // (the previous period) dashed in the same color as its series.
      var stroke = edge ? muted : (typeof s.color === "number" ? palette[s.color % palette.length] : accent);
      return {
        label: s.label,
        stroke: stroke,
        width: edge ? 1 : 2,
        dash: s.dash ? [6, 4] : undefined,
        spanGaps: false,
        points: { show: false },
      };
    }));
    var axis = { stroke: muted, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
    var options = {
      width: Math.max(figure.clientWidth, 280),
      height: 240,
      series: series,
      axes: [axis, Object.assign({ label: data.unit }, axis)],
      plugins: [marksPlugin(data.marks)],
      legend: { live: true },
      // The pages write every time in UTC; the axes and the legend do too.
      tzDate: function (ts) { return window.uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC"); },
    };
    // x_label: x counts something other than time (retention's day N), plain numbers.
    if (data.x_label) {
      options.scales = { x: { time: false } };
      // Whole numbers only on the axis; a point at each x, since only those are measured.
      var whole = function (u, splits) {
        return splits.map(function (v) { return Number.isInteger(v) ? String(v) : ""; });
      };
      options.axes[0] = Object.assign({ label: data.x_label, values: whole }, axis);
      series[0] = { label: data.x_label };
      series.forEach(function (s, i) { if (i > 0) s.points = { show: true }; });
      delete options.tzDate;
    }
    if (band) options.bands = [{ series: band, fill: color("--chart-band", "rgba(36,87,197,0.15)") }];
    var columns = [data.x].concat((data.series || []).map(function (s) { return s.values; }));
    var holder = document.createElement("div");
    holder.className = "chart-canvas";
    // The table and caption say the same in words; the canvas is for the eye.
    holder.setAttribute("aria-hidden", "true");
    figure.insertBefore(holder, figure.firstChild);
    var plot = new window.uPlot(options, columns, holder);
    window.addEventListener("resize", function () {
      plot.setSize({ width: Math.max(figure.clientWidth, 280), height: 240 });
    });
  }

  function drawAll(root) {
    root.querySelectorAll("figure[data-chart]").forEach(function (figure) {
      if (figure.dataset.drawn) return;
      figure.dataset.drawn = "1";
      try {
        draw(figure, JSON.parse(figure.dataset.chart));
      } catch (e) {
        /* the table stays: the page still reads */
      }
    });
  }

  document.addEventListener("DOMContentLoaded", function () { drawAll(document); });
  // htmx swaps (hx-boost navigation, partial refreshes) bring new figures.
  document.addEventListener("htmx:afterSettle", function (event) { drawAll(event.target); });
})();
