// The job form: when a catalog workload is chosen, show its job defaults and params as the
// placeholders of the blank fields (the server applies them to whatever is left blank), and
// disable the custom workload's fields (builtin, scripts, setup), which it replaces.
(function () {
  "use strict";
  const source = document.getElementById("catalog-defaults");
  const select = document.getElementById("id_catalog");
  if (!source || !select) return;
  const defaults = JSON.parse(source.textContent);
  const fields = {
    clients: (job) => job.clients.join(" "),
    duration_s: (job) => String(job.duration_s),
    repeats: (job) => String(job.repeats),
    scale: (job) => (job.scale === null ? "" : String(job.scale)),
    settings: (job) =>
      Object.entries(job.config_overrides).map(([k, v]) => k + " = " + v).join("\n"),
  };
  const custom = {};
  for (const name of Object.keys(fields)) {
    const input = document.getElementById("id_" + name);
    if (input) custom[name] = input.placeholder;
  }
  const params = document.getElementById("id_params");
  const customParams = params ? params.placeholder : "";

  function show() {
    const entry = defaults[select.value];
    for (const [name, render] of Object.entries(fields)) {
      const input = document.getElementById("id_" + name);
      if (input) input.placeholder = entry ? render(entry.job) : custom[name] || "";
    }
    if (params) {
      params.placeholder = entry
        ? Object.entries(entry.params).map(([k, v]) => k + " = " + v).join("\n")
        : customParams;
    }
    // A catalog entry brings its own workload: the custom one's fields are not sent.
    for (const name of ["builtin", "query_mode", "workload_name", "setup"]) {
      const input = document.getElementById("id_" + name);
      if (input) input.disabled = Boolean(entry);
    }
    for (const input of document.querySelectorAll("fieldset.job-scripts [name^='script_']")) {
      input.disabled = Boolean(entry);
    }
  }
  select.addEventListener("change", show);
  show();
})();
