// Compare page: draws the tps and latency figures that the view built (dashboard/charts.py).
(function () {
  "use strict";
  function draw(figureId, elementId) {
    var source = document.getElementById(figureId);
    var element = document.getElementById(elementId);
    if (!source || !element || !window.Plotly) return;
    var figure = JSON.parse(source.textContent);
    window.Plotly.newPlot(element, figure.data, figure.layout, figure.config);
  }
  draw("tps-figure", "tps-chart");
  draw("latency-figure", "latency-chart");
})();
