// The job page follows its job live: it polls GET /api/v1/jobs/<id>/ every 2 s until the job
// ends and updates the page in place. Server data goes in with textContent only, never as HTML.
(function () {
  "use strict";
  var root = document.getElementById("job");
  if (!root || root.dataset.final === "1") return;
  var FINAL = ["done", "failed", "cancelled", "expired"];
  var EVERY_MS = 2000;

  function byId(id) { return document.getElementById(id); }

  function setText(id, text) {
    var el = byId(id);
    if (el && el.textContent !== text) el.textContent = text;
  }

  // "2026-11-20T10:00:00.123456Z" -> "2026-11-20 10:00:00" (UTC, as the server renders it)
  function when(iso) {
    if (!iso) return "–";
    var date = new Date(iso);
    return isNaN(date) ? "–" : date.toISOString().slice(0, 19).replace("T", " ");
  }

  function isCount(value) { return typeof value === "number" && isFinite(value) && value >= 0; }

  var ENDED = {done: "finished", failed: "failed", cancelled: "cancelled", expired: "expired"};

  function stageText(job, progress) {
    // An ended job's last report names the stage it was in then, not where it is now.
    if (ENDED[job.state]) return ENDED[job.state];
    if (progress.stage === "build" && typeof progress.build_stage === "string") {
      // A recipe version being built: its own stage, and how far make got.
      var text = "build " + (progress.version || "") + ": " + progress.build_stage;
      if (isCount(progress.compiled) && progress.compiled > 0) text += ", " + progress.compiled + " files compiled";
      if (isCount(progress.elapsed_s)) text += ", " + Math.round(progress.elapsed_s) + " s";
      return text;
    }
    if (typeof progress.stage === "string" && progress.stage) return progress.stage;
    if (job.state === "queued") return "waiting in the queue";
    if (job.state === "claimed") return "claimed; waiting for the agent's first heartbeat";
    return "";
  }

  function showProgress(job) {
    var progress = job.progress && typeof job.progress === "object" ? job.progress : {};
    var bar = byId("job-bar");
    var counted = isCount(progress.step) && isCount(progress.steps) && progress.steps > 0;
    bar.max = counted ? progress.steps : 1;
    bar.value = counted ? Math.min(progress.step, progress.steps) : (job.state === "done" ? 1 : 0);
    setText("job-step", counted ? "step " + progress.step + " of " + progress.steps : "");
    setText("job-stage", stageText(job, progress));
    var line = byId("job-line");
    var text = typeof progress.line === "string" ? progress.line : "";
    line.hidden = !text;
    setText("job-line", text);
  }

  function showState(job) {
    var state = byId("job-state");
    state.className = "state state-" + job.state;
    setText("job-state", job.state);
    setText("job-failure-stage", job.failure_stage ? "at " + job.failure_stage : "");
    var failure = byId("job-failure");
    failure.hidden = !job.failure_message;
    setText("job-failure", job.failure_message || "");
    setText("job-host", job.claimed_host || job.host || "any");
    setText("job-attempt", job.attempt + " of " + job.max_attempts);
    ["claimed_at", "started_at", "last_heartbeat_at", "finished_at"].forEach(function (name) {
      setText("job-" + name, when(job[name]));
    });
  }

  function showRuns(runs) {
    var list = byId("job-runs");
    var shown = Array.prototype.map.call(list.querySelectorAll("a"), function (a) {
      return a.textContent;
    });
    if (runs.length === 0 || shown.join() === runs.join()) return;
    list.replaceChildren.apply(list, runs.map(function (uuid) {
      var item = document.createElement("li");
      var link = document.createElement("a");
      link.href = "/runs/" + encodeURIComponent(uuid) + "/";
      link.textContent = uuid;
      item.appendChild(link);
      return item;
    }));
  }

  function showEvents(events) {
    var body = byId("job-events");
    if (body.rows.length === events.length) return;
    body.replaceChildren.apply(body, events.map(function (event) {
      var row = document.createElement("tr");
      [when(event.at), event.kind, String(event.attempt), event.actor, event.message].forEach(
        function (text) {
          var cell = document.createElement("td");
          cell.textContent = text || "";
          row.appendChild(cell);
        }
      );
      return row;
    }));
  }

  function show(job) {
    showState(job);
    showProgress(job);
    showRuns(job.runs || []);
    showEvents(job.events || []);
    var final = FINAL.indexOf(job.state) !== -1;
    if (final) {
      root.dataset.final = "1";
      byId("job-live").hidden = true;
      var cancel = byId("job-cancel");
      if (cancel) cancel.hidden = true;
    }
    return final;
  }

  function poll() {
    fetch(root.dataset.api, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.json();
      })
      .then(function (job) {
        if (!show(job)) window.setTimeout(poll, EVERY_MS);
      })
      .catch(function () {
        // The server restarting or a network blip: keep trying, a little less often.
        window.setTimeout(poll, EVERY_MS * 2);
      });
  }

  window.setTimeout(poll, EVERY_MS);
})();
