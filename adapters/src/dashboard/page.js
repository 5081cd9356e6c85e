// Draws the dashboard's charts from the specs in #dashboard-data (written by `tephra
// dashboard`), then writes what it drew into #dashboard-summary: every chart's id and point
// count, and every script error or console error seen, which the browser test reads.
(function () {
  "use strict";
  var summary = { charts: [], errors: [] };
  function report() {
    var el = document.getElementById("dashboard-summary");
    if (el) el.textContent = JSON.stringify(summary);
  }
  window.addEventListener("error", function (e) {
    summary.errors.push(String(e.message || e));
    report();
  });
  var consoleError = console.error;
  console.error = function () {
    summary.errors.push(Array.prototype.map.call(arguments, String).join(" "));
    report();
    consoleError.apply(console, arguments);
  };

  // Colour-blind-safe palette (Okabe-Ito), in the order data sets come.
  var palette = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"];

  function config(spec) {
    var stacked = spec.kind === "stacked-bar";
    var type = spec.kind === "line" ? "line" : "bar";
    return {
      type: type,
      data: {
        labels: spec.labels,
        datasets: spec.datasets.map(function (d, i) {
          var colour = palette[i % palette.length];
          return {
            label: d.label,
            data: d.data,
            backgroundColor: colour,
            borderColor: colour,
            borderWidth: type === "line" ? 2 : 0,
            pointRadius: 3,
            spanGaps: true
          };
        })
      },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        plugins: {
          title: { display: true, text: spec.title },
          legend: { position: "bottom" }
        },
        scales: {
          x: { stacked: stacked, offset: true, title: { display: true, text: spec.x_title } },
          y: { stacked: stacked, beginAtZero: true, title: { display: true, text: spec.y_title } }
        }
      }
    };
  }

  function points(spec) {
    return spec.datasets.reduce(function (n, d) {
      return n + d.data.filter(function (v) { return v !== null; }).length;
    }, 0);
  }

  try {
    var sections = JSON.parse(document.getElementById("dashboard-data").textContent);
    sections.forEach(function (section) {
      section.charts.forEach(function (spec) {
        var canvas = document.getElementById(spec.id);
        var chart = new Chart(canvas, config(spec));
        var drawn = chart.data.datasets.length > 0 ? points(spec) : 0;
        summary.charts.push({ id: spec.id, points: drawn });
      });
    });
  } catch (e) {
    summary.errors.push(String(e && e.stack ? e.stack : e));
  }
  report();
})();
