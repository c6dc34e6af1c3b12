// Charts for every page that draws with plotly.js: a page's script hands its figures to
// BenchHubCharts.newPlot (the arguments of Plotly.newPlot) and this file draws them. plotly.js
// (1.25 MB, a few hundred ms of a loaded CPU to evaluate) is fetched only once the page has
// loaded, so that neither the first paint nor the load event waits for it: the page's text, its
// answer, comes first, its charts a moment later. The charts on screen are drawn first, then the
// others in page order, one a task so that the page stays responsive. When the charts that were
// on screen are drawn, the User Timing mark "benchhub:charts-on-screen" says so
// (bench/firstscreen.py reads it).
(function () {
  "use strict";
  var me = document.getElementById("charts-js");
  var queue = [];  // [element, data, layout, config], not drawn yet
  var state = "idle";  // idle -> loading -> ready
  var firstBatch = true;

  function onScreen(element) {
    var box = element.getBoundingClientRect();
    return box.bottom > 0 && box.top < window.innerHeight && box.height >= 0;
  }

  function drawQueued() {
    if (!queue.length) return;
    var visible = queue.filter(function (item) { return onScreen(item[0]); });
    var rest = queue.filter(function (item) { return visible.indexOf(item) < 0; });
    var marked = !firstBatch;
    firstBatch = false;
    queue = [];
    var order = visible.concat(rest);
    var left = visible.length;
    function next() {
      if (!marked && left === 0) {
        marked = true;
        if (window.performance && performance.mark) performance.mark("benchhub:charts-on-screen");
      }
      var item = order.shift();
      if (!item) return;
      left -= 1;
      window.setTimeout(next, 0);
      if (item[0].isConnected) window.Plotly.newPlot(item[0], item[1], item[2], item[3]);
    }
    next();
  }

  // plotly.js puts its rules in a <style> element unless an element with this id has the class
  // "no-inline-styles" when it runs (the Content-Security-Policy refuses inline styles), so its
  // stylesheet goes in first.
  function load() {
    if (state !== "idle") return;
    state = "loading";
    var css = document.createElement("link");
    css.rel = "stylesheet";
    css.id = "plotly.js-style-global";
    css.className = "no-inline-styles";
    css.href = me.dataset.plotlyCss;
    document.head.appendChild(css);
    var script = document.createElement("script");
    script.src = me.dataset.plotly;
    script.onload = function () {
      state = "ready";
      drawQueued();
    };
    script.onerror = function () { state = "idle"; };
    document.head.appendChild(script);
  }

  function whenLoaded(then) {
    if (document.readyState === "complete") then();
    else window.addEventListener("load", then);
  }

  window.BenchHubCharts = {
    newPlot: function (element, data, layout, config) {
      if (!element) return;
      queue.push([element, data, layout, config]);
      if (state === "ready") window.setTimeout(drawQueued, 0);
      else whenLoaded(load);
    },
  };
})();
