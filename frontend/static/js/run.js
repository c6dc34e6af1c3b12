// The run page: draws (js/charts.js) the per-level progress, telemetry and evidence charts built
// in benchhub/dashboard/charts_run.py and dashboard/evidence.py. The page's answer is its tables;
// the charts' data (some 60 KB for seven levels) is not in the page but fetched from
// /runs/<uuid>/charts/ (views_runs.run_charts) once the page is parsed, so the first paint does
// not wait for it; a fetch does not hold the load event either. The charts on screen are drawn
// first, once plotly.js has loaded after the load event.
(function () {
  "use strict";
  var me = document.getElementById("run-js");
  if (!me || !me.dataset.charts || !window.BenchHubCharts) return;
  fetch(me.dataset.charts, { headers: { Accept: "application/json" }, credentials: "same-origin" })
    .then(function (response) {
      if (!response.ok) throw new Error("HTTP " + response.status);
      return response.json();
    })
    .then(function (charts) {
      charts.forEach(function (chart) {
        window.BenchHubCharts.newPlot(document.getElementById(chart.id), chart.figure.data,
          chart.figure.layout, { responsive: true, displaylogo: false });
      });
    })
    .catch(function (error) {
      document.querySelectorAll(".chart-row .chart").forEach(function (element) {
        element.textContent = "The charts could not be loaded (" + error.message + ").";
      });
    });
})();
