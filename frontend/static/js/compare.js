// Compare page: draws the tps, latency and latency percentile figures that the view built
// (dashboard/charts.py).
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
  draw("percentiles-figure", "percentiles-chart");
  // Figures by element id: the workload's presentation (e.g. the progress of an E2 level) and
  // the why section (wait events, percentiles, the distribution, flame graphs).
  function drawAll(sourceId) {
    var extra = document.getElementById(sourceId);
    if (!extra || !window.Plotly) return;
    var figures = JSON.parse(extra.textContent);
    Object.keys(figures).forEach(function (id) {
      var element = document.getElementById(id);
      if (element) window.Plotly.newPlot(element, figures[id].data, figures[id].layout, figures[id].config);
    });
  }
  drawAll("presentation-figures");
  drawAll("why-figures");
})();
