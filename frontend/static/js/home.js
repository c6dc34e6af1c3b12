// Home: keeps the queue and the agents live by polling GET /api/v1/status/ every 3 s, redraws
// the latest comparisons and the runs (the server's own HTML of this page) when a job finishes,
// and turns the quick-compare form into a permalink. Server data goes in with textContent only,
// but for those two sections, which the server rendered and escaped.
(function () {
  "use strict";
  var EVERY_MS = 3000;

  function el(tag, text, className) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (className) node.className = className;
    return node;
  }

  function isCount(value) { return typeof value === "number" && isFinite(value) && value >= 0; }

  // Same wording as the server's `seconds_ago` filter.
  function secondsAgo(seconds) {
    if (seconds === null || seconds === undefined) return "never";
    seconds = Math.floor(seconds);
    if (seconds < 120) return seconds + " s ago";
    if (seconds < 2 * 3600) return Math.floor(seconds / 60) + " min ago";
    if (seconds < 2 * 86400) return Math.floor(seconds / 3600) + " h ago";
    return Math.floor(seconds / 86400) + " d ago";
  }

  function showCounts(queue) {
    document.querySelectorAll("#queue .count").forEach(function (item) {
      var count = queue[item.dataset.state];
      var n = item.querySelector(".n");
      if (!isCount(count)) return;
      if (n.textContent !== String(count)) n.textContent = String(count);
      item.classList.toggle("zero", count === 0);
    });
  }

  // Same wording as the server's `expected_end` filter.
  function expectedEnd(iso) {
    var end = new Date(iso);
    if (isNaN(end.getTime())) return "";
    var pad = function (n) { return (n < 10 ? "0" : "") + n; };
    var time = pad(end.getUTCHours()) + ":" + pad(end.getUTCMinutes());
    var day = end.toISOString().slice(0, 10);
    var shown = day === new Date().toISOString().slice(0, 10) ? time : day + " " + time;
    return "expected to end about " + shown + " UTC";
  }

  function jobRow(job) {
    var progress = job.progress && typeof job.progress === "object" ? job.progress : {};
    var row = el("tr");
    row.dataset.job = job.id;

    var first = el("td");
    var link = el("a", "#" + job.id);
    link.href = "/jobs/" + encodeURIComponent(job.id) + "/";
    first.append(link, " ", el("span", job.state, "state-" + job.state), el("br"),
      el("span", (job.versions || []).join(" vs ") + ", " + job.workload, "muted"));

    var bar = el("progress");
    var counted = isCount(progress.step) && isCount(progress.steps) && progress.steps > 0;
    bar.max = counted ? progress.steps : 1;
    bar.value = counted ? Math.min(progress.step, progress.steps) : 0;
    var third = el("td");
    third.append(bar);
    if (counted) third.append(" ", el("span", progress.step + "/" + progress.steps, "step"));

    var fourth = el("td");
    var stage = typeof progress.stage === "string" && progress.stage ? progress.stage
      : "waiting for the first heartbeat";
    fourth.append(el("span", stage, "stage"));
    var end = typeof job.expected_end === "string" ? expectedEnd(job.expected_end) : "";
    if (end) fourth.append(el("br"), el("span", end, "expected-end"));
    if (typeof progress.line === "string" && progress.line) {
      fourth.append(el("br"), el("code", progress.line, "line"));
    }
    row.append(first, el("td", job.claimed_host || "–", "name"), third, fourth);
    return row;
  }

  // As home.html draws it: a host with no agent (its runs were imported) is "imported",
  // never "offline", and has no heartbeat.
  function hostRow(host) {
    var row = el("tr");
    row.dataset.host = host.name;
    var name = el("td", "", "name");
    var link = el("a", host.name);
    link.href = "/hosts/" + encodeURIComponent(host.name) + "/";
    name.append(link);
    var presence = el("td");
    var seen;
    if (host.agent === false) {
      var imported = el("span", "imported", "presence imported");
      imported.title = "runs were imported under this name; no agent measures it";
      presence.append(imported);
      seen = el("td", "–");
    } else {
      var state = host.online ? "online" : "offline";
      presence.append(el("span", state, "presence " + state));
      seen = el("td", secondsAgo(host.seen_s_ago));
      seen.title = (host.last_seen_at || "never");
    }
    row.append(name, presence, seen);
    return row;
  }

  // Jobs that ended since the page was drawn: their runs and verdicts belong on it.
  var ended = null;

  function endedCount(queue) {
    return ["done", "failed", "cancelled", "expired"].reduce(function (sum, state) {
      return sum + (isCount(queue[state]) ? queue[state] : 0);
    }, 0);
  }

  function redrawFinished() {
    fetch(window.location.href, { headers: { Accept: "text/html" }, credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.text();
      })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html");
        ["latest-comparisons", "home-runs"].forEach(function (id) {
          var mine = document.getElementById(id);
          var theirs = fresh.getElementById(id);
          if (mine && theirs) mine.replaceWith(document.adoptNode(theirs));
        });
      })
      .catch(function () { ended = null; });  // try again at the next poll
  }

  function showStatus(status) {
    var now = endedCount(status.queue || {});
    if (ended !== null && now !== ended) redrawFinished();
    ended = now;
    showCounts(status.queue || {});
    var active = status.active || [];
    document.getElementById("active-jobs").replaceChildren.apply(
      document.getElementById("active-jobs"), active.map(jobRow));
    document.getElementById("active-empty").hidden = active.length > 0;
    var hosts = status.hosts || [];
    document.getElementById("hosts").replaceChildren.apply(
      document.getElementById("hosts"), hosts.map(hostRow));
    document.getElementById("hosts-empty").hidden = hosts.length > 0;
  }

  function poll(root) {
    var note = document.getElementById("status-live");
    fetch(root.dataset.api, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.json();
      })
      .then(function (status) {
        showStatus(status);
        note.textContent = "live";
        window.setTimeout(function () { poll(root); }, EVERY_MS);
      })
      .catch(function () {
        note.textContent = "reconnecting…";
        window.setTimeout(function () { poll(root); }, EVERY_MS * 2);
      });
  }

  // Quick compare: versions never measured for the chosen workload and host are disabled, and
  // the form goes to the permalink /compare/?workload=..&host=..&versions=a,b.
  function quickCompare(form) {
    var measuredNode = document.getElementById("measured");
    var measured = measuredNode ? JSON.parse(measuredNode.textContent) : [];
    var workload = form.elements.workload;
    var host = form.elements.host;
    var problem = document.getElementById("qc-problem");
    var boxes = Array.prototype.slice.call(form.querySelectorAll("input[name=versions]"));

    function refresh() {
      var here = {};
      measured.forEach(function (triple) {
        if (triple[0] === workload.value && triple[1] === host.value) here[triple[2]] = true;
      });
      boxes.forEach(function (box) {
        box.disabled = !here[box.value];
        if (box.disabled) box.checked = false;
        box.parentNode.classList.toggle("unmeasured", box.disabled);
        box.parentNode.title = box.disabled ? "no run of this version for that workload and host" : "";
      });
    }

    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var versions = boxes.filter(function (box) { return box.checked; })
        .map(function (box) { return box.value; });
      if (versions.length < 2) {
        problem.textContent = "Pick two or more versions.";
        problem.hidden = false;
        return;
      }
      // Commas stay literal, so the address reads like the documented permalink.
      var query = "workload=" + encodeURIComponent(workload.value) +
        "&host=" + encodeURIComponent(host.value) +
        "&versions=" + versions.map(encodeURIComponent).join(",");
      window.location.assign(form.getAttribute("action") + "?" + query);
    });
    workload.addEventListener("change", refresh);
    host.addEventListener("change", refresh);
    refresh();
  }

  var root = document.getElementById("queue");
  if (root) poll(root);
  var form = document.getElementById("quick-compare");
  if (form) quickCompare(form);
})();
