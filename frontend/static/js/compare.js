// Compare page: draws (js/charts.js) the tps and latency figures the view built (dashboard/charts.py),
// and loads each folded section (<details class="lazy">) from its own URL the first time it is
// opened (views_compare_sections: the section's HTML, its figures in a "<section>-figures"
// JSON). A permalink to a section (#why) or to something inside one (#summary) opens it. On a
// section's own page, draws that section's figures. While versions are not measured yet, it
// follows the jobs that will measure them: every 3 s it fetches their box (the server's HTML of
// it, views_compare.compare_pending) naming the jobs it has shown, so that one that ends stays
// listed, saying how; when the runs have arrived, the page reloads to show the comparison.
(function () {
  "use strict";
  var FOLLOW_EVERY_MS = 3000;

  function follow(holder) {
    var shown = {};  // job id -> its state when last shown
    function remember() {
      holder.querySelectorAll("li[data-job]").forEach(function (item) {
        shown[item.dataset.job] = item.dataset.state;
      });
    }
    function poll() {
      if (document.hidden) {
        window.setTimeout(poll, FOLLOW_EVERY_MS);
        return;
      }
      var url = holder.dataset.src + "&shown=" + Object.keys(shown).join(",");
      fetch(url, { headers: { Accept: "text/html" }, credentials: "same-origin" })
        .then(function (response) {
          if (!response.ok) throw new Error("HTTP " + response.status);
          return response.text();
        })
        .then(function (html) {
          // The box's HTML comes from the server, which escaped every value in it.
          if (holder.innerHTML !== html) holder.innerHTML = html;
          remember();
          if (holder.querySelector("[data-arrived]")) {
            window.location.reload();
            return;
          }
          window.setTimeout(poll, FOLLOW_EVERY_MS);
        })
        .catch(function () { window.setTimeout(poll, FOLLOW_EVERY_MS * 2); });
    }
    remember();
    window.setTimeout(poll, FOLLOW_EVERY_MS);
  }
  var waiting = document.getElementById("compare-pending");
  if (waiting && waiting.dataset.src) follow(waiting);

  function plot(element, figure) {
    if (element && window.BenchHubCharts) {
      window.BenchHubCharts.newPlot(element, figure.data, figure.layout, figure.config);
    }
  }
  function draw(figureId, elementId) {
    var source = document.getElementById(figureId);
    if (source) plot(document.getElementById(elementId), JSON.parse(source.textContent));
  }
  // Every "*-figures" JSON inside `root`: figures keyed by the id of the element to draw in.
  function drawSections(root) {
    root.querySelectorAll('script[type="application/json"][id$="-figures"]').forEach(function (source) {
      var figures = JSON.parse(source.textContent);
      Object.keys(figures).forEach(function (id) {
        plot(document.getElementById(id), figures[id]);
      });
    });
  }
  draw("tps-figure", "tps-chart");
  draw("latency-figure", "latency-chart");

  var sections = Array.prototype.slice.call(document.querySelectorAll("details.lazy"));
  if (!sections.length) {
    drawSections(document);
    return;
  }

  function failed(details, body, reason) {
    var link = details.querySelector("a.section-page");
    body.textContent = "This section could not be loaded (" + reason + "). ";
    if (link) {
      var page = document.createElement("a");
      page.href = link.href;
      page.textContent = "Open it on its own page.";
      body.appendChild(page);
    }
    details.removeAttribute("data-state");
  }

  // Fetches the section once; `then` runs when its content is in the page.
  function load(details, then) {
    var body = details.querySelector(".section-body");
    if (details.getAttribute("data-state") === "loaded") {
      if (then) then();
      return;
    }
    if (details.getAttribute("data-state") === "loading") return;
    details.setAttribute("data-state", "loading");
    fetch(details.getAttribute("data-src"), { credentials: "same-origin" })
      .then(function (reply) {
        if (!reply.ok && reply.status !== 400) throw new Error("HTTP " + reply.status);
        return reply.text();
      })
      .then(function (html) {
        body.innerHTML = html;
        details.setAttribute("data-state", "loaded");
        drawSections(body);
        if (then) then();
      })
      .catch(function (error) {
        failed(details, body, error.message);
      });
  }

  sections.forEach(function (details) {
    details.addEventListener("toggle", function () {
      if (details.open) load(details);
    });
    // With scripts the summary opens the section in place; its link is for a browser without.
    var link = details.querySelector("summary a.section-page");
    if (link) {
      link.addEventListener("click", function (event) {
        event.preventDefault();
        details.open = !details.open;
      });
    }
  });

  function sectionOf(anchor) {
    return sections.filter(function (details) {
      var inside = (details.getAttribute("data-anchors") || "").split(" ");
      return details.id === anchor || inside.indexOf(anchor) >= 0;
    })[0];
  }

  // Opens the section holding `anchor` and, once loaded, brings the anchor into view.
  function reveal(anchor) {
    var details = sectionOf(anchor);
    if (!details) return false;
    details.open = true;
    load(details, function () {
      var target = document.getElementById(anchor) || details;
      target.scrollIntoView({ block: "start" });
    });
    return true;
  }

  // The column titles of the verdict table name the method: opened in place.
  document.querySelectorAll("a.method-link[data-anchor]").forEach(function (link) {
    link.addEventListener("click", function (event) {
      if (reveal(link.getAttribute("data-anchor"))) event.preventDefault();
    });
  });

  function fromHash() {
    var anchor = decodeURIComponent(window.location.hash.slice(1));
    if (anchor) reveal(anchor);
  }
  window.addEventListener("hashchange", fromHash);
  fromHash();
})();
