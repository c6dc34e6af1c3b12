// Experiment page: draws (js/charts.js) the figures the view built (dashboard/charts.py), and
// follows the experiment's jobs. Every 3 s it fetches its box of jobs (the server's HTML of it,
// views_experiments.experiment_jobs) naming the jobs it has shown, so that one that ends stays
// listed, saying how. When one ends done, the runs it brought are drawn from the server's HTML of
// this page, without reloading; the runs of a job are aggregated a moment after it ends, so the
// page asks again a few times until they are there.
(function () {
  "use strict";
  var EVERY_MS = 3000;
  var REDRAW_TRIES = 5;

  function drawFigures() {
    var source = document.getElementById("presentation-figures");
    if (!source || !window.BenchHubCharts) return;
    var figures = JSON.parse(source.textContent);
    Object.keys(figures).forEach(function (id) {
      var element = document.getElementById(id);
      if (!element) return;
      var figure = figures[id];
      window.BenchHubCharts.newPlot(element, figure.data, figure.layout, figure.config);
    });
  }

  var box = document.getElementById("experiment-jobs");
  var body = document.getElementById("experiment-body");
  // The body as the server wrote it, before any chart is drawn in it: a fetched body that reads
  // the same has nothing new.
  var bodyHtml = body ? body.innerHTML : "";
  drawFigures();
  if (!box || !body) return;

  var shown = {};  // job id -> its state when last shown
  var boxHtml = null;
  var redraws = 0;

  function fetchText(url) {
    return fetch(url, { headers: { Accept: "text/html" }, credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.text();
      });
  }

  function redrawBody() {
    return fetchText(window.location.href).then(function (html) {
      var fresh = new DOMParser().parseFromString(html, "text/html");
      var theirs = fresh.getElementById("experiment-body");
      var theirBox = fresh.getElementById("experiment-jobs");
      if (!theirs || theirs.innerHTML === bodyHtml) return;
      redraws = 0;
      bodyHtml = theirs.innerHTML;
      body.replaceChildren.apply(body, Array.prototype.slice.call(theirs.childNodes).map(
        function (node) { return document.adoptNode(node); }));
      if (theirBox && theirBox.dataset.results) box.dataset.results = "1";
      drawFigures();
    });
  }

  // The box's HTML comes from the server, which escaped every value in it.
  function showBox(html) {
    if (html !== boxHtml) {
      box.innerHTML = html;
      boxHtml = html;
    }
    box.querySelectorAll("li[data-job]").forEach(function (item) {
      var state = item.dataset.state;
      if (state === "done" && shown[item.dataset.job] !== "done") redraws = REDRAW_TRIES;
      shown[item.dataset.job] = state;
    });
  }

  function boxUrl() {
    var query = "shown=" + Object.keys(shown).join(",");
    return box.dataset.src + "?" + query + (box.dataset.results ? "&results=1" : "");
  }

  function poll() {
    if (document.hidden) {
      window.setTimeout(poll, EVERY_MS);
      return;
    }
    fetchText(boxUrl())
      .then(function (html) {
        showBox(html);
        if (redraws > 0) {
          redraws -= 1;
          return redrawBody();
        }
      })
      .then(function () { window.setTimeout(poll, EVERY_MS); })
      .catch(function () { window.setTimeout(poll, EVERY_MS * 2); });
  }

  showBox(box.innerHTML);
  boxHtml = null;
  window.setTimeout(poll, EVERY_MS);
})();
