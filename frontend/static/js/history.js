// History page: draws (js/charts.js) the tps-over-time figure that the view built
// (dashboard/charts.py).
(function () {
  "use strict";
  var source = document.getElementById("history-figure");
  var element = document.getElementById("history-chart");
  if (!source || !element || !window.BenchHubCharts) return;
  var figure = JSON.parse(source.textContent);
  window.BenchHubCharts.newPlot(element, figure.data, figure.layout, figure.config);
})();
