// Experiments index: follows the jobs of every experiment. Every 3 s it fetches the page again
// (views_experiments.experiment_list) naming the jobs it has shown, so that one that ends stays
// listed, saying how, and puts in each experiment's section as the server now writes it: the
// jobs queued or running with their stage, progress and expected end, and the hosts and versions
// with runs once a job has brought them.
(function () {
  "use strict";
  var EVERY_MS = 3000;
  var shown = {};  // job id -> its state when last shown

  function remember() {
    document.querySelectorAll("section.experiment li[data-job]").forEach(function (item) {
      shown[item.dataset.job] = item.dataset.state;
    });
  }

  // The sections' HTML comes from the server, which escaped every value in it.
  function show(html) {
    var fresh = new DOMParser().parseFromString(html, "text/html");
    fresh.querySelectorAll("section.experiment").forEach(function (theirs) {
      var mine = document.getElementById(theirs.id);
      if (mine && mine.innerHTML !== theirs.innerHTML) {
        mine.replaceChildren.apply(mine, Array.prototype.slice.call(theirs.childNodes).map(
          function (node) { return document.adoptNode(node); }));
      }
    });
    remember();
  }

  function poll() {
    if (document.hidden) {
      window.setTimeout(poll, EVERY_MS);
      return;
    }
    var url = window.location.pathname + "?shown=" + Object.keys(shown).join(",");
    fetch(url, { headers: { Accept: "text/html" }, credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.text();
      })
      .then(function (html) {
        show(html);
        window.setTimeout(poll, EVERY_MS);
      })
      .catch(function () { window.setTimeout(poll, EVERY_MS * 2); });
  }

  remember();
  window.setTimeout(poll, EVERY_MS);
})();
