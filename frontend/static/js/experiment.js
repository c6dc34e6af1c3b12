// Experiment page: draws the figures the view built (dashboard/charts.py), one element each.
(function () {
  "use strict";
  var source = document.getElementById("presentation-figures");
  if (!source || !window.Plotly) return;
  var figures = JSON.parse(source.textContent);
  Object.keys(figures).forEach(function (id) {
    var element = document.getElementById(id);
    if (!element) return;
    var figure = figures[id];
    window.Plotly.newPlot(element, figure.data, figure.layout, figure.config);
  });
})();
