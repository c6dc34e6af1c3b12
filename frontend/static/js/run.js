// The run page: draws the per-level progress and telemetry charts built in
// benchhub/dashboard/charts_run.py and handed over in the "run-charts" JSON script.
(function () {
  "use strict";
  var source = document.getElementById("run-charts");
  if (!source || typeof Plotly === "undefined") {
    return;
  }
  var charts = JSON.parse(source.textContent);
  charts.forEach(function (chart) {
    var target = document.getElementById(chart.id);
    if (target) {
      Plotly.newPlot(target, chart.figure.data, chart.figure.layout, {
        responsive: true,
        displaylogo: false,
      });
    }
  });
})();
