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
//
// Readable by default: the y axis starts at zero (a flat line stays flat), a tooltip follows
// the cursor with each series' exact value and the time in both the chosen zone and UTC, and
// time axes are in the viewer's own time zone unless the member chose UTC (the `warden_tz`
// cookie, set by the "Chart times" form: pages/time_zone.rs). The tables stay in UTC.
(function () {
  "use strict";

  // True when the member chose UTC for chart times.
  function wantsUtc() {
    return document.cookie.split(";").some(function (pair) {
      return pair.trim() === "warden_tz=utc";
    });
  }

  function pad(n) { return (n < 10 ? "0" : "") + n; }

  // "2026-11-29 14:05" of a Date's UTC or local fields.
  function stamp(date, utc) {
    return utc
      ? date.getUTCFullYear() + "-" + pad(date.getUTCMonth() + 1) + "-" + pad(date.getUTCDate()) +
        " " + pad(date.getUTCHours()) + ":" + pad(date.getUTCMinutes())
      : date.getFullYear() + "-" + pad(date.getMonth() + 1) + "-" + pad(date.getDate()) +
        " " + pad(date.getHours()) + ":" + pad(date.getMinutes());
  }

  // A value as measured: whole numbers whole, others to two decimals.
  function exact(value) {
    if (value === null || value === undefined) return "no data";
    return Number.isInteger(value) ? String(value) : value.toFixed(2);
  }

  // The zero-based range of a y axis (below zero only when the data is).
  function fromZero(u, min, max) {
    var low = Math.min(0, min === null ? 0 : min);
    var high = max === null || max <= low ? low + 1 : max;
    return [low, high + (high - low) * 0.08];
  }

  // A box beside the cursor with the time and every series' exact value.
  function tooltipPlugin(timeAxis, utc) {
    var box;
    return {
      hooks: {
        init: function (u) {
          box = document.createElement("div");
          box.className = "chart-tooltip";
          box.setAttribute("data-testid", "chart-tooltip");
          var style = box.style;
          style.position = "absolute";
          style.pointerEvents = "none";
          style.display = "none";
          style.zIndex = "10";
          style.padding = "0.3rem 0.5rem";
          style.borderRadius = "4px";
          style.font = "0.8rem/1.3 system-ui, sans-serif";
          style.whiteSpace = "nowrap";
          style.background = color("--bg", "#fff");
          style.color = color("--text", "#1b1d21");
          style.border = "1px solid " + color("--border", "#d9dce1");
          u.over.appendChild(box);
        },
        setCursor: function (u) {
          var i = u.cursor.idx;
          if (i === null || i === undefined || u.cursor.left < 0) {
            box.style.display = "none";
            return;
          }
          var x = u.data[0][i];
          var lines = [];
          if (timeAxis) {
            var date = new Date(x * 1e3);
            lines.push(stamp(date, utc) + (utc ? " UTC" : "") + (utc ? "" : " (" + stamp(date, true) + " UTC)"));
          } else {
            lines.push(u.series[0].label + " " + x);
          }
          u.series.forEach(function (s, k) {
            if (k === 0 || !s.show) return;
            lines.push(s.label + ": " + exact(u.data[k][i]));
          });
          box.textContent = "";
          lines.forEach(function (line, k) {
            var row = document.createElement("div");
            row.textContent = line;
            if (k === 0) row.style.fontWeight = "600";
            box.appendChild(row);
          });
          box.style.display = "block";
          var left = u.cursor.left + 12;
          if (left + box.offsetWidth > u.over.clientWidth) left = u.cursor.left - box.offsetWidth - 12;
          box.style.left = Math.max(left, 0) + "px";
          box.style.top = Math.max(u.cursor.top - box.offsetHeight - 8, 0) + "px";
        },
      },
    };
  }

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
    var utc = wantsUtc();
    var zone = "";
    try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { zone = ""; }
    var timeLabel = utc ? "Time (UTC)" : "Time (" + (zone || "your time zone") + ")";
    // The holder is the figure's content box (its padding is outside it): the canvas is as
    // wide as that, so nothing is cut off at its right edge (the last time label).
    var holder = document.createElement("div");
    holder.className = "chart-canvas";
    // The table and caption say the same in words; the canvas is for the eye.
    holder.setAttribute("aria-hidden", "true");
    figure.insertBefore(holder, figure.firstChild);
    var width = function () { return Math.max(holder.clientWidth, 280); };
    var options = {
      width: width(),
      height: 240,
      series: series,
      axes: [Object.assign({ label: timeLabel }, axis), Object.assign({ label: data.unit }, axis)],
      scales: { y: { range: fromZero } },
      plugins: [marksPlugin(data.marks), tooltipPlugin(!data.x_label, utc)],
      legend: { live: true },
    };
    figure.dataset.timeZone = utc ? "UTC" : (zone || "local");
    // Counts get whole-number ticks only (no "1.5 players").
    var whole = (data.series || []).every(function (s) {
      return (s.values || []).every(function (v) { return v === null || Number.isInteger(v); });
    });
    if (whole) {
      options.axes[1].incrs = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4,
                               1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7, 1e8, 1e9];
    }
    // uPlot draws in the browser's zone; UTC when the member chose it.
    if (utc) {
      options.tzDate = function (ts) { return window.uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC"); };
    }
    // x_label: x counts something other than time (retention's day N), plain numbers.
    if (data.x_label) {
      options.scales.x = { time: false };
      // Whole numbers only on the axis; a point at each x, since only those are measured.
      var wholeX = function (u, splits) {
        return splits.map(function (v) { return Number.isInteger(v) ? String(v) : ""; });
      };
      options.axes[0] = Object.assign({ label: data.x_label, values: wholeX }, axis);
      series[0] = { label: data.x_label };
      series.forEach(function (s, i) { if (i > 0) s.points = { show: true }; });
      delete options.tzDate;
    }
    if (band) options.bands = [{ series: band, fill: color("--chart-band", "rgba(36,87,197,0.15)") }];
    var columns = [data.x].concat((data.series || []).map(function (s) { return s.values; }));
    var plot = new window.uPlot(options, columns, holder);
    // For the browser tests: the drawn plot's scales and data.
    figure.uplot = plot;
    window.addEventListener("resize", function () {
      plot.setSize({ width: width(), height: 240 });
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
