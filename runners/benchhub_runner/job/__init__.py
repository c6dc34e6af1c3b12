"""One claimed job, start to end: its steps, the provisioning of its servers, their setup, the
sweep of measurements, the evidence passes, its results and its clean-up. It uses every layer
below it (servers, build, measure, evidence, results) and is used only by the agent."""
